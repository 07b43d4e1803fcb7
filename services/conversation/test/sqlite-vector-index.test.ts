import Database from "better-sqlite3";
import { load as loadSqliteVec } from "sqlite-vec";
import { describe, expect, it } from "vitest";
import { unitVector } from "../src/embeddings.js";
import { MIN_CANDIDATES, SqliteVectorIndex } from "../src/store/sqlite-vector-index.js";

const TABLE = { source: "vectors", prefix: "vectors_vec", partition: ["owner", "model"] } as const;

function database() {
  const db = new Database(":memory:");
  db.pragma("foreign_keys = ON");
  loadSqliteVec(db);
  db.exec(`
    CREATE TABLE items (seq INTEGER PRIMARY KEY, owner TEXT NOT NULL);
    CREATE TABLE vectors (
      seq INTEGER PRIMARY KEY REFERENCES items (seq) ON DELETE CASCADE,
      owner TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL
    ) STRICT;
  `);
  const put = db.prepare<[number, string, string, Buffer]>(
    `INSERT INTO vectors (seq, owner, model, vector) VALUES (?, ?, ?, ?)
     ON CONFLICT (seq) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
  );
  return {
    db,
    item(seq: number, owner: string) {
      db.prepare("INSERT INTO items (seq, owner) VALUES (?, ?)").run(seq, owner);
    },
    put(index: SqliteVectorIndex | null, seq: number, owner: string, values: number[], model = "m") {
      index?.ensure(values.length);
      put.run(seq, owner, model, blob(values));
    },
  };
}

const blob = (values: number[]) => {
  const vector = unitVector(values);
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
};

describe("the sqlite-vec index of a vector table", () => {
  it("answers one owner's nearest vectors of one model, and never another owner's", () => {
    const { db, item, put } = database();
    const index = new SqliteVectorIndex(db, TABLE);
    for (let seq = 1; seq <= 6; seq++) item(seq, seq <= 3 ? "ann" : "bob");
    put(index, 1, "ann", [1, 0, 0]);
    put(index, 2, "ann", [0, 1, 0]);
    put(index, 3, "ann", [0.7, 0.7, 0]);
    // Bob's vectors are nearer the query than any of Ann's.
    put(index, 4, "bob", [1, 0, 0.01]);
    put(index, 5, "bob", [1, 0, 0.02]);
    put(index, 6, "bob", [1, 0, 0], "other-model");

    const query = unitVector([1, 0.1, 0]);
    expect(index.nearest(["ann", "m"], query, 10)).toEqual([1, 3, 2]);
    expect(index.nearest(["ann", "m"], query, 2)).toEqual([1, 3]);
    expect(index.nearest(["bob", "m"], query, 10)).toEqual([4, 5]);
    expect(index.nearest(["bob", "other-model"], query, 10)).toEqual([6]);
    expect(index.nearest(["carl", "m"], query, 10)).toEqual([]);
    // No vector of that size was ever stored.
    expect(index.nearest(["ann", "m"], unitVector([1, 0]), 10)).toEqual([]);
  });

  it("follows the table's updates and deletions, cascades included, across vector sizes", () => {
    const { db, item, put } = database();
    const index = new SqliteVectorIndex(db, TABLE);
    for (let seq = 1; seq <= 3; seq++) item(seq, "ann");
    put(index, 1, "ann", [1, 0, 0]);
    put(index, 2, "ann", [0, 1, 0]);
    put(index, 3, "ann", [0, 0, 1]);
    const query = unitVector([1, 0, 0]);
    expect(index.nearest(["ann", "m"], query, 1)).toEqual([1]);

    // A new vector for 2 moves it; a vector of another size for 3 moves it to that size's index.
    put(index, 2, "ann", [1, 0, 0.001]);
    put(index, 3, "ann", [1, 0]);
    expect(index.nearest(["ann", "m"], query, 10)).toEqual([1, 2]);
    expect(index.nearest(["ann", "m"], unitVector([1, 0]), 10)).toEqual([3]);

    // Deleting the item deletes its vector (cascade), and the index follows.
    db.prepare("DELETE FROM items WHERE seq IN (1, 3)").run();
    expect(index.nearest(["ann", "m"], query, 10)).toEqual([2]);
    expect(index.nearest(["ann", "m"], unitVector([1, 0]), 10)).toEqual([]);
    const indexed = db.prepare("SELECT count(*) FROM vectors_vec_3").pluck().get();
    expect(indexed).toBe(1);
  });

  it("ranks the candidates its bits find by exact cosine distance when an owner has many vectors", () => {
    const { db, item, put } = database();
    const index = new SqliteVectorIndex(db, TABLE);
    // Deterministic vectors of 20 dimensions (not a multiple of 8), far more than the candidates ranked.
    const count = MIN_CANDIDATES * 12;
    const values = (seq: number) =>
      Array.from({ length: 20 }, (_, d) => Math.sin(seq * 12.9898 + d * 78.233));
    for (let seq = 1; seq <= count; seq++) {
      item(seq, "ann");
      put(index, seq, "ann", values(seq));
    }
    const exact = (query: Float32Array) =>
      Array.from({ length: count }, (_, i) => i + 1)
        .map((seq) => {
          const v = unitVector(values(seq));
          return { seq, distance: 1 - v.reduce((sum, x, d) => sum + x * query[d]!, 0) };
        })
        .sort((a, b) => a.distance - b.distance)
        .map((entry) => entry.seq);
    for (const target of [7, count / 2, count]) {
      // A query near one stored vector finds it first, as the exact ranking does.
      const query = unitVector(values(target).map((x, d) => x + (d === 0 ? 0.01 : 0)));
      const found = index.nearest(["ann", "m"], query, 5);
      expect(found[0]).toBe(target);
      expect(found[0]).toBe(exact(query)[0]);
      expect(found).toHaveLength(5);
    }
  });

  it("indexes the vectors stored before it existed", () => {
    const { db, item, put } = database();
    item(1, "ann");
    item(2, "ann");
    put(null, 1, "ann", [0, 1]);
    put(null, 2, "ann", [1, 0]);
    const index = new SqliteVectorIndex(db, TABLE);
    expect(index.nearest(["ann", "m"], unitVector([1, 0.2]), 10)).toEqual([2, 1]);
    // Opened again: nothing is indexed twice.
    const again = new SqliteVectorIndex(db, TABLE);
    expect(again.nearest(["ann", "m"], unitVector([1, 0.2]), 10)).toEqual([2, 1]);
  });
});
