import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "./index.js";

export interface MigrateEntryPointOptions {
  /** The service, as its migrations job names itself in errors; also its Postgres schema. */
  service: string;
  /** The service's package directory: its `src/migrate.ts` is run. */
  packageDir: string;
  /** The SQLite file the service keeps in `DATA_DIR`. */
  sqliteFile: string;
  /** The service's Postgres and SQLite migrations. */
  postgresMigrations: readonly { version: number }[];
  sqliteMigrations: readonly { version: number }[];
  /** The highest version recorded in the SQLite file's `schema_migrations`. */
  sqliteVersion(file: string): number;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const execFileAsync = promisify(execFile);
const latest = (versions: readonly { version: number }[]) => Math.max(...versions.map((m) => m.version));

/**
 * The contract of a service's migrations job (`src/migrate.ts`, run as its own process, configured by
 * environment): Postgres migrations applied once and idempotently, SQLite in `DATA_DIR` without `DATABASE_URL`,
 * one clear line for a bad URL, and no password in the output when the database cannot be reached.
 */
export function migrateEntryPointSuite(options: MigrateEntryPointOptions): void {
  const { service } = options;

  async function migrate(env: Record<string, string>): Promise<Run> {
    const { DATABASE_URL: _inherited, ...base } = process.env;
    try {
      const { stdout, stderr } = await execFileAsync(
        process.execPath,
        ["--import", "tsx", "src/migrate.ts"],
        {
          cwd: options.packageDir,
          env: { ...base, LOG_FORMAT: "json", ...env },
        },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

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
    const dir = mkdtempSync(join(tmpdir(), `agentry-${service}-migrate-`));
    dirs.push(dir);
    return dir;
  }

  describe(`${service} migrate entry point`, () => {
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
          `SELECT max(version) AS version, count(*) AS applied FROM ${service}.schema_migrations`,
        );
        expect(rows[0]?.version).toBe(latest(options.postgresMigrations));
        expect(Number(rows[0]?.applied)).toBe(options.postgresMigrations.length);
      } finally {
        await client.end();
      }
      // Postgres was the store: nothing was written to DATA_DIR.
      expect(existsSync(join(dataDir, options.sqliteFile))).toBe(false);
    });

    it("migrates the SQLite database in DATA_DIR when DATABASE_URL is unset", async () => {
      const dataDir = tempDir();
      const result = await migrate({ DATA_DIR: dataDir });
      expect(result.code).toBe(0);
      expect(options.sqliteVersion(join(dataDir, options.sqliteFile))).toBe(latest(options.sqliteMigrations));
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
      expect(result.stderr).toMatch(new RegExp(`${service} migration failed`));
      expect(result.stdout + result.stderr).not.toContain("s3cret-pw");
    });
  });
}
