import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSqliteMigrations, type SqliteMigration } from "../src/index.js";

let dir: string;
let db: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agentry-sqlite-migrate-"));
  db = new Database(join(dir, "test.db"));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const FIRST: SqliteMigration = {
  version: 1,
  name: "notes",
  sql: "CREATE TABLE notes (text TEXT NOT NULL) STRICT",
};
const SECOND: SqliteMigration = {
  version: 2,
  name: "tags",
  sql: "CREATE TABLE tags (name TEXT NOT NULL) STRICT; INSERT INTO tags VALUES ('first');",
};

const applied = () =>
  db
    .prepare<[], { version: number; name: string }>(
      "SELECT version, name FROM schema_migrations ORDER BY version",
    )
    .all();

describe("runSqliteMigrations", () => {
  it("applies every migration once, in version order whatever the list's order, and records each", () => {
    runSqliteMigrations(db, { service: "test", migrations: [SECOND, FIRST] });
    runSqliteMigrations(db, { service: "test", migrations: [SECOND, FIRST] });
    expect(applied()).toEqual([
      { version: 1, name: "notes" },
      { version: 2, name: "tags" },
    ]);
    expect(db.prepare("SELECT count(*) FROM tags").pluck().get()).toBe(1);
    const at = db.prepare<[], string>("SELECT applied_at FROM schema_migrations").pluck().all();
    for (const time of at) expect(new Date(time).toISOString()).toBe(time);
  });

  it("applies only the migrations a database lacks", () => {
    runSqliteMigrations(db, { service: "test", migrations: [FIRST] });
    db.prepare("INSERT INTO notes VALUES ('kept')").run();
    runSqliteMigrations(db, { service: "test", migrations: [FIRST, SECOND] });
    expect(applied().map((m) => m.version)).toEqual([1, 2]);
    expect(db.prepare("SELECT text FROM notes").pluck().all()).toEqual(["kept"]);
  });

  it("refuses a database whose schema is newer than this build, naming the service, and changes nothing", () => {
    runSqliteMigrations(db, { service: "test", migrations: [FIRST, SECOND] });
    expect(() => runSqliteMigrations(db, { service: "registry", migrations: [FIRST] })).toThrow(
      "the registry database has schema version 2, newer than this build knows; upgrade the service before opening it",
    );
    const future = { version: 3, name: "future", sql: "CREATE TABLE future (x INTEGER) STRICT" };
    db.prepare("DELETE FROM schema_migrations WHERE version = 2").run();
    db.prepare("INSERT INTO schema_migrations VALUES (7, 'later', 'x')").run();
    expect(() => runSqliteMigrations(db, { service: "test", migrations: [FIRST, SECOND, future] })).toThrow(
      /schema version 7, newer/,
    );
    expect(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'future'").pluck().get()).toBe(0);
  });

  it("rolls a failed run back whole: no table and no record of the migrations before the one that failed", () => {
    const broken = { version: 3, name: "broken", sql: "CREATE TABLE broken (x INTEGER) STRICT; NOT SQL" };
    expect(() => runSqliteMigrations(db, { service: "test", migrations: [FIRST, SECOND, broken] })).toThrow();
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all()).toEqual([]);
    runSqliteMigrations(db, { service: "test", migrations: [FIRST, SECOND] });
    expect(applied().map((m) => m.version)).toEqual([1, 2]);
  });

  it("holds the write lock for the whole run, so a second connection migrating at once waits, then finds nothing to do", () => {
    const other = new Database(join(dir, "test.db"), { timeout: 0 });
    try {
      let blocked: unknown;
      const probe = {
        version: 1,
        name: "probe",
        get sql() {
          // Runs inside the first run's transaction: the other connection cannot take the write lock now.
          try {
            runSqliteMigrations(other, { service: "test", migrations: [FIRST] });
          } catch (error) {
            blocked = error;
          }
          return FIRST.sql;
        },
      };
      runSqliteMigrations(db, { service: "test", migrations: [probe] });
      expect((blocked as { code?: string }).code).toBe("SQLITE_BUSY");
      runSqliteMigrations(other, { service: "test", migrations: [FIRST] });
      expect(applied()).toEqual([{ version: 1, name: "probe" }]);
    } finally {
      other.close();
    }
  });
});
