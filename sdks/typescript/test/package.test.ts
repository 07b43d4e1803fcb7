import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const { version } = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as {
  version: string;
};
const scratch = mkdtempSync(join(tmpdir(), "agentry-sdk-pack-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The environment without the `npm_*` settings of the package manager running the tests. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")),
  );
}

// What a user gets from `npm pack` (or from publishing): the tarball must carry its own build, since nothing
// builds it where it is installed. Installed here by hand, so the test needs no registry.
describe("the packed package", () => {
  it("builds itself when packed and imports as an ES module elsewhere", { timeout: 180_000 }, () => {
    rmSync(join(PACKAGE_DIR, "dist"), { recursive: true, force: true });
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", scratch], {
        cwd: PACKAGE_DIR,
        env: cleanEnv(),
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      }),
    ) as [{ filename: string; files: { path: string }[] }];
    const files = packed[0].files.map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "package.json"]));
    expect(files.filter((file) => file.includes(".test."))).toEqual([]);

    const project = join(scratch, "project");
    const installed = join(project, "node_modules", "@agentry", "sdk");
    mkdirSync(installed, { recursive: true });
    execFileSync("tar", ["-xzf", join(scratch, packed[0].filename), "-C", installed, "--strip-components=1"]);
    // The one runtime dependency, taken from this workspace instead of the registry.
    symlinkSync(
      realpathSync(join(PACKAGE_DIR, "node_modules", "eventsource-parser")),
      join(project, "node_modules", "eventsource-parser"),
      "dir",
    );
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "project", private: true, type: "module" }),
    );
    writeFileSync(
      join(project, "main.js"),
      [
        'import { Agentry, NotFoundError, VERSION } from "@agentry/sdk";',
        'const client = new Agentry({ apiKey: "agentry_sk_packed", baseURL: "http://127.0.0.1:9/v1" });',
        "console.log(JSON.stringify({ version: VERSION, list: typeof client.agents.list, error: NotFoundError.name }));",
      ].join("\n"),
    );

    const output = execFileSync(process.execPath, ["main.js"], {
      cwd: project,
      env: cleanEnv(),
      encoding: "utf8",
    });
    expect(JSON.parse(output)).toEqual({ version, list: "function", error: "NotFoundError" });
  });
});
