import { describe, expect, it } from "vitest";
import { MemorySpendMeter } from "./spend-memory.js";
import { spendMeterContract } from "./testing/index.js";

spendMeterContract("MemorySpendMeter", async (n) => {
  const meter = new MemorySpendMeter();
  return Array.from({ length: n }, () => meter);
});

describe("MemorySpendMeter", () => {
  it("forgets a counter once it expires, and seeds it again", async () => {
    let now = 1_000;
    const meter = new MemorySpendMeter(() => now);
    let seeds = 0;
    const budget = { key: "b", limit: 10, ttlMs: 100, seed: async () => (seeds++ === 0 ? 0 : 7) };
    // The new period is seeded with 7 spent: 3 are left.
    expect((await meter.reserve([budget], [10])).allowed).toBe(true);
    now += 100;
    expect(await meter.peek(["b"])).toEqual([null]);
    expect(await meter.reserve([budget], [4])).toEqual({ allowed: true, spent: [10], amounts: [3] });
    expect(seeds).toBe(2);
  });
});
