import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteDatabase, sqliteSchemaVersion, watchOtherConnections } from "../src/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agentry-sqlite-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const target = {
  service: "test",
  migrations: [
    {
      version: 1,
      name: "parents and children",
      sql: `CREATE TABLE parents (id INTEGER PRIMARY KEY) STRICT;
        CREATE TABLE children (parent INTEGER NOT NULL REFERENCES parents (id)) STRICT;`,
    },
  ],
};

describe("openSqliteDatabase", () => {
  it("creates the file and its directories, with WAL, synchronous FULL, foreign keys and a busy timeout", () => {
    const db = openSqliteDatabase(join(dir, "a", "b", "test.db"), target);
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("synchronous", { simple: true })).toBe(2); // FULL
      expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
      expect(() => db.prepare("INSERT INTO children VALUES (1)").run()).toThrow(/FOREIGN KEY/);
    } finally {
      db.close();
    }
  });

  it("brings the schema up to date, and keeps the data when opened again", () => {
    const file = join(dir, "test.db");
    const first = openSqliteDatabase(file, target);
    first.prepare("INSERT INTO parents VALUES (1)").run();
    first.close();
    const second = openSqliteDatabase(file, target);
    try {
      expect(second.prepare("SELECT count(*) FROM parents").pluck().get()).toBe(1);
    } finally {
      second.close();
    }
    expect(sqliteSchemaVersion(file)).toBe(1);
  });

  it("closes the connection when the schema cannot be brought up to date", () => {
    const file = join(dir, "test.db");
    openSqliteDatabase(file, target).close();
    expect(() => openSqliteDatabase(file, { service: "test", migrations: [] })).toThrow(
      /the test database has schema version 1, newer than this build knows/,
    );
    expect(openFiles(file)).toEqual([]);
  });
});

describe("watchOtherConnections", () => {
  it("reports each commit of another connection once, and never this connection's own", () => {
    const file = join(dir, "test.db");
    const db = openSqliteDatabase(file, target);
    const other = openSqliteDatabase(file, target);
    try {
      const othersCommitted = watchOtherConnections(db);
      expect(othersCommitted()).toBe(false);
      db.prepare("INSERT INTO parents VALUES (1)").run();
      expect(othersCommitted()).toBe(false);
      other.prepare("INSERT INTO parents VALUES (2)").run();
      expect(othersCommitted()).toBe(true);
      expect(othersCommitted()).toBe(false);
      // Commits before the watch began are not reported.
      other.prepare("INSERT INTO parents VALUES (3)").run();
      const later = watchOtherConnections(db);
      expect(later()).toBe(false);
      expect(othersCommitted()).toBe(true);
    } finally {
      other.close();
      db.close();
    }
  });
});

describe("sqliteSchemaVersion", () => {
  it("is 0 for a database without migrations, and refuses a file that does not exist", () => {
    const file = join(dir, "test.db");
    openSqliteDatabase(file, { service: "test", migrations: [] }).close();
    expect(sqliteSchemaVersion(file)).toBe(0);
    expect(() => sqliteSchemaVersion(join(dir, "missing.db"))).toThrow();
  });
});

/** The descriptors of this process open on the file or its WAL and shared-memory files (Linux). */
function openFiles(file: string): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(file) ? [target] : [];
    } catch {
      return [];
    }
  });
}
