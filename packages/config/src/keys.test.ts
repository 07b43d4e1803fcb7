import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { env, isSealingKey, keyInDataDir, parseEnv, z } from "./index.js";

const dirs: string[] = [];
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "agentry-keys-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("keyInDataDir", () => {
  it("generates a key once into the data directory, readable only by its owner, and keeps using it", () => {
    const dir = dataDir();
    const generated: string[] = [];
    const options = {
      value: undefined,
      dataDir: join(dir, "new"),
      file: "a.key",
      onGenerated: (p: string) => generated.push(p),
    };
    const first = keyInDataDir(options);
    expect(isSealingKey(first)).toBe(true);
    expect(statSync(join(dir, "new", "a.key")).mode & 0o777).toBe(0o600);
    expect(keyInDataDir(options)).toBe(first);
    expect(generated).toEqual([join(dir, "new", "a.key")]);
  });

  it("prefers the variable's value and writes nothing then", () => {
    const dir = dataDir();
    const value = Buffer.alloc(32, 7).toString("base64");
    expect(keyInDataDir({ value, dataDir: dir, file: "a.key", onGenerated: () => {} })).toBe(value);
    expect(() => statSync(join(dir, "a.key"))).toThrow();
  });

  it("refuses a key file that does not hold 32 bytes", () => {
    const dir = dataDir();
    writeFileSync(join(dir, "a.key"), "short\n");
    expect(() =>
      keyInDataDir({ value: undefined, dataDir: dir, file: "a.key", onGenerated: () => {} }),
    ).toThrow(/does not hold the base64 of 32 bytes/);
    expect(readFileSync(join(dir, "a.key"), "utf8")).toBe("short\n");
  });
});

describe("env.sealingKey", () => {
  it("accepts the base64 of 32 bytes and refuses anything else, saying how to make one", () => {
    const schema = z.object({ KEY: env.sealingKey() });
    expect(parseEnv(schema, { KEY: Buffer.alloc(32, 1).toString("base64") }).KEY).toHaveLength(44);
    expect(() => parseEnv(schema, { KEY: Buffer.alloc(16).toString("base64") })).toThrow(
      /openssl rand -base64 32/,
    );
  });
});
