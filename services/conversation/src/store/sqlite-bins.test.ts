import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { jsonbBinCounts } from "./sqlite-bins.js";

/** SQLite's own JSONB of a JSON text. */
function jsonb(text: string): Buffer {
  const db = new Database(":memory:");
  try {
    return db.prepare<[string], Buffer>("SELECT jsonb(?)").pluck().get(text)!;
  } finally {
    db.close();
  }
}

describe("jsonbBinCounts", () => {
  it("reads a bins object as SQLite encodes it: the zero bin, counts laid out from the least bin", () => {
    expect(jsonbBinCounts(jsonb('{"7": 2, "z": 3, "4": 1}'))).toEqual({
      zeros: 3,
      first: 4,
      counts: new Float64Array([1, 0, 0, 2]),
    });
    expect(jsonbBinCounts(jsonb("{}"))).toEqual({ zeros: 0, first: 0, counts: [] });
  });

  it("reads negative bins, counts written as floats or JSON5, and leaves out empty bins", () => {
    expect(jsonbBinCounts(jsonb('{"-2": 2.0, "1": 0, "0": 0x3, "z": 0}'))).toEqual({
      zeros: 0,
      first: -2,
      counts: new Float64Array([2, 0, 3]),
    });
  });

  it("reads objects whose size takes two or four bytes of the header", () => {
    // About 9 KB and 90 KB of payload.
    for (const length of [1000, 9000]) {
      const entries = Array.from({ length }, (_, i) => `"${i}": ${i + 1}`);
      const blob = jsonb(`{${entries.join(", ")}}`);
      expect(blob[0]! >> 4).toBe(length === 1000 ? 13 : 14);
      const { counts, first } = jsonbBinCounts(blob);
      expect(first).toBe(0);
      expect(counts.length).toBe(length);
      expect(counts[length - 1]).toBe(length);
    }
  });

  it("refuses what is not an object of counts", () => {
    expect(() => jsonbBinCounts(jsonb("[1, 2]"))).toThrow(/not a JSONB object/);
    expect(() => jsonbBinCounts(jsonb('{"1": "two"}'))).toThrow(/not a number/);
    expect(() => jsonbBinCounts(jsonb('{"one": 2}'))).toThrow(/has the key 'one'/);
  });
});
