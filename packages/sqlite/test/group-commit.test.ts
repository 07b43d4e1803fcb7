import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GroupCommit, openSqliteDatabase, watchOtherConnections } from "../src/index.js";

let dir: string;
let file: string;
let db: Database.Database;
let other: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agentry-group-"));
  file = join(dir, "test.db");
  db = openSqliteDatabase(file, {
    service: "test",
    migrations: [{ version: 1, name: "items", sql: "CREATE TABLE items (name TEXT PRIMARY KEY) STRICT;" }],
  });
  other = new Database(file, { timeout: 50 });
});
afterEach(() => {
  other.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const names = () => other.prepare<[], string>("SELECT name FROM items ORDER BY name").pluck().all();

describe("GroupCommit", () => {
  it("commits the writes of one turn together, each answered once another connection can read it", async () => {
    const group = new GroupCommit(db);
    const insert = db.prepare("INSERT INTO items (name) VALUES (?)");
    const committed = watchOtherConnections(other);
    const seenAtAnswer: number[] = [];
    const writes = Array.from({ length: 50 }, (_, i) =>
      group
        .run(() => insert.run(`item-${String(i).padStart(2, "0")}`).changes)
        .then((changes) => {
          seenAtAnswer.push(names().length);
          return changes;
        }),
    );
    expect(names()).toEqual([]);
    expect(await Promise.all(writes)).toEqual(Array(50).fill(1));
    // Every answer came after the commit of all fifty: one commit, seen by the other connection as one.
    expect(seenAtAnswer).toEqual(Array(50).fill(50));
    expect(committed()).toBe(true);

    // The next turn's writes make a transaction of their own.
    await group.run(() => insert.run("later"));
    expect(names()).toContain("later");
  });

  it("rolls back and rejects a write that throws, alone; the others of its group commit", async () => {
    const group = new GroupCommit(db);
    const insert = db.prepare("INSERT INTO items (name) VALUES (?)");
    const results = await Promise.allSettled([
      group.run(() => insert.run("a")),
      group.run(() => {
        insert.run("b");
        insert.run("a"); // a duplicate: the whole write goes, "b" with it
      }),
      group.run(() => insert.run("c")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
    expect(names()).toEqual(["a", "c"]);
  });

  it("rejects every write of a group whose transaction cannot begin, and writes none of them", async () => {
    const impatient = new Database(file, { timeout: 50 });
    const group = new GroupCommit(impatient);
    other.exec("BEGIN IMMEDIATE");
    try {
      const results = await Promise.allSettled([
        group.run(() => impatient.prepare("INSERT INTO items (name) VALUES ('x')").run()),
        group.run(() => 1),
      ]);
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
      expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/database is locked/);
    } finally {
      other.exec("ROLLBACK");
      impatient.close();
    }
    expect(names()).toEqual([]);
  });

  it("commits what waits when asked to before the database closes", async () => {
    const group = new GroupCommit(db);
    const write = group.run(() => db.prepare("INSERT INTO items (name) VALUES ('kept')").run());
    group.flushNow();
    await write;
    expect(names()).toEqual(["kept"]);
  });

  it("commits a group of bookkeeping alone without waiting for the disk, and any group with a durable write with it", async () => {
    const group = new GroupCommit(db);
    const level = () => db.pragma("synchronous", { simple: true }) as number;
    const [FULL, NORMAL] = [2, 1];
    expect(
      await Promise.all([group.run(level, { durable: false }), group.run(level, { durable: false })]),
    ).toEqual([NORMAL, NORMAL]);
    expect(level()).toBe(FULL);
    expect(await Promise.all([group.run(level, { durable: false }), group.run(level)])).toEqual([FULL, FULL]);
    expect(level()).toBe(FULL);
  });
});
