import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_MIGRATIONS } from "../src/store/postgres-migrations.js";
import { CONVERSATION_DB_FILE } from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const execFileAsync = promisify(execFile);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `src/migrate.ts` as a deployment's migrations job does: its own process, configured by environment. */
async function migrate(env: Record<string, string>): Promise<Run> {
  const { DATABASE_URL: _inherited, ...base } = process.env;
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, ["--import", "tsx", "src/migrate.ts"], {
      cwd: PACKAGE_DIR,
      env: { ...base, LOG_FORMAT: "json", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const latest = (versions: readonly { version: number }[]) => Math.max(...versions.map((m) => m.version));

let db: TestDatabase;
const dirs: string[] = [];
beforeAll(async () => {
  db = await openTestDatabase();
}, 60_000);
afterAll(async () => {
  await db?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentry-conversation-migrate-"));
  dirs.push(dir);
  return dir;
}

describe("conversation migrate entry point", () => {
  it("applies every Postgres migration once and exits 0, also when run again", async () => {
    const dataDir = tempDir();
    for (let run = 0; run < 2; run++) {
      const result = await migrate({ DATABASE_URL: db.url, DATA_DIR: dataDir });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('"schema up to date"');
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: number; applied: string }>(
        "SELECT max(version) AS version, count(*) AS applied FROM conversation.schema_migrations",
      );
      expect(rows[0]?.version).toBe(latest(PG_MIGRATIONS));
      expect(Number(rows[0]?.applied)).toBe(PG_MIGRATIONS.length);
    } finally {
      await client.end();
    }
    // Postgres was the store: nothing was written to DATA_DIR.
    expect(() => new Database(join(dataDir, CONVERSATION_DB_FILE), { fileMustExist: true })).toThrow();
  });

  it("migrates the SQLite database in DATA_DIR when DATABASE_URL is unset", async () => {
    const dataDir = tempDir();
    const result = await migrate({ DATA_DIR: dataDir });
    expect(result.code).toBe(0);
    const sqlite = new Database(join(dataDir, CONVERSATION_DB_FILE), { readonly: true, fileMustExist: true });
    try {
      const version = sqlite.prepare<[], number>("SELECT max(version) FROM schema_migrations").pluck().get();
      expect(version).toBe(latest(MIGRATIONS));
    } finally {
      sqlite.close();
    }
  });

  it("exits 1 with one line naming the variable when DATABASE_URL is not a Postgres URL", async () => {
    const result = await migrate({ DATABASE_URL: "mysql://db/agentry", DATA_DIR: tempDir() });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/DATABASE_URL/);
  });

  it("exits 1 without printing the password when the database cannot be reached", async () => {
    // A port that was just free: nothing listens there, so every connection is refused.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const result = await migrate({
      DATABASE_URL: `postgres://agentry:s3cret-pw@127.0.0.1:${port}/agentry`,
      DATA_DIR: tempDir(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/conversation migration failed/);
    expect(result.stdout + result.stderr).not.toContain("s3cret-pw");
  });
});
