import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { VERSION } from "../src/index.js";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** The code without its comments, whose examples may well use Node. */
function code(file: string): string {
  return readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

// `tsc -p tsconfig.build.json` compiles the runtime code without Node's types, so a Node API would not compile;
// this test also catches what types cannot (a dynamic import, a global reached through globalThis).
describe("runtime code runs in browsers too", () => {
  const files = sources(SRC);

  it("imports nothing from Node and uses no Node-only globals", () => {
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = code(file);
      expect(text, file).not.toMatch(/from\s+["']node:|import\(\s*["']node:|require\(/);
      expect(text, file).not.toMatch(/\bBuffer\b|\bsetImmediate\b|__dirname|process\.(env|versions|stdout)/);
    }
  });

  it("reads the environment only through the guarded helper", () => {
    const uses = files.filter((file) => /\.process\b/.test(code(file)));
    expect(uses.map((file) => file.slice(SRC.length))).toEqual(["core.ts"]);
  });

  it("depends on nothing but eventsource-parser at run time, and reports the package's version", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).toEqual(["eventsource-parser"]);
    expect(VERSION).toBe(manifest.version);
  });
});
