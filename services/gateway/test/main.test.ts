import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const execFileAsync = promisify(execFile);

describe("the gateway process", () => {
  it("stops with one line naming what is missing when it is not told where the services are", async () => {
    const { REGISTRY_URL: _r, CONVERSATION_URL: _c, WEBHOOKS_URL: _w, ...base } = process.env;
    const failure = await execFileAsync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: PACKAGE_DIR,
      env: { ...base, PORT: "0", REGISTRY_URL: "http://127.0.0.1:1" },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr.trim().split("\n")).toHaveLength(1);
    expect(failure?.stderr).toMatch(/CONVERSATION_URL, WEBHOOKS_URL required/);
    expect(failure?.stderr).not.toMatch(/REGISTRY_URL,/);

    const webhooks = await execFileAsync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: PACKAGE_DIR,
      env: { ...base, PORT: "0", REGISTRY_URL: "http://127.0.0.1:1", CONVERSATION_URL: "http://127.0.0.1:1" },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(webhooks?.code).toBe(1);
    expect(webhooks?.stderr.trim()).toMatch(/^invalid configuration: WEBHOOKS_URL required: /);
  });
});
