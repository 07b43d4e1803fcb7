import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SpendCounter, SpendMeter } from "../spend.js";

/**
 * The behaviour every SpendMeter owes the gateway's budgets. `makeMeters(2)` gives two meters over one shared
 * state where the implementation has one (two gateways on one Redis); a process-local meter gives the same twice.
 */
export function spendMeterContract(name: string, makeMeters: (n: number) => Promise<SpendMeter[]>): void {
  describe(`${name}: SpendMeter contract`, () => {
    const counter = (limit: number, seed = 0, seeds?: { count: number }): SpendCounter => ({
      key: `test:${randomUUID()}`,
      limit,
      ttlMs: 60_000,
      async seed() {
        if (seeds) seeds.count++;
        return seed;
      },
    });

    it("admits exactly what fits out of 50 simultaneous reservations, over every meter", async () => {
      // 70 units, 10 each: exactly 7 admitted, whichever meter each goes through.
      const meters = await makeMeters(2);
      const budget = counter(70);
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => meters[i % meters.length]!.reserve([budget], [10])),
      );
      expect(outcomes.filter((o) => o.allowed)).toHaveLength(7);
      const refused = outcomes.filter((o) => !o.allowed);
      expect(refused).toHaveLength(43);
      for (const o of refused) expect(o).toMatchObject({ allowed: false, refused: 0, spent: [70] });
      expect(await meters[0]!.peek([budget.key])).toEqual([70]);
    });

    it("seeds a new counter once from what was spent before, and counts on from it", async () => {
      const meters = await makeMeters(2);
      const seeds = { count: 0 };
      const budget = counter(100, 85, seeds);
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => meters[i % meters.length]!.reserve([budget], [5])),
      );
      expect(outcomes.filter((o) => o.allowed)).toHaveLength(3);
      expect(await meters[1]!.peek([budget.key])).toEqual([100]);
      // Two meters on one store may each ask once; the first seed stands either way.
      expect(seeds.count).toBeGreaterThanOrEqual(1);
      expect(seeds.count).toBeLessThanOrEqual(meters.length);
    });

    it("reserves in all counters or in none, no more than is left of each", async () => {
      const [meter] = await makeMeters(1);
      const wide = counter(1000);
      const tight = counter(15);
      expect(await meter!.reserve([wide, tight], [10, 10])).toEqual({
        allowed: true,
        spent: [10, 10],
        amounts: [10, 10],
      });
      // The tight counter has 5 left: the send is admitted with 5 reserved there.
      expect(await meter!.reserve([wide, tight], [10, 10])).toEqual({
        allowed: true,
        spent: [20, 15],
        amounts: [10, 5],
      });
      const refused = await meter!.reserve([wide, tight], [10, 10]);
      expect(refused).toEqual({ allowed: false, refused: 1, spent: [20, 15] });
      expect(await meter!.peek([wide.key, tight.key])).toEqual([20, 15]);
    });

    it("settles a reservation to what was spent", async () => {
      const [meter] = await makeMeters(1);
      const budget = counter(100);
      const reservation = await meter!.reserve([budget], [40]);
      expect(reservation).toEqual({ allowed: true, spent: [40], amounts: [40] });
      expect(await meter!.settle([budget.key], [40], [25])).toEqual([25]);
      // What the first send did not use is free again: 75 are left, and reserved even when more is asked.
      expect(await meter!.reserve([budget], [80])).toEqual({ allowed: true, spent: [100], amounts: [75] });
      expect((await meter!.reserve([budget], [1])).allowed).toBe(false);
      // A send may spend more than it reserved: spend passes the limit by that much, and nothing more is admitted.
      expect(await meter!.settle([budget.key], [75], [90])).toEqual([115]);
      expect(await meter!.reserve([budget], [1])).toEqual({ allowed: false, refused: 0, spent: [115] });
      expect(await meter!.peek([budget.key, "test:unknown"])).toEqual([115, null]);
      expect(await meter!.settle(["test:unknown"], [1], [2])).toEqual([null]);
    });
  });
}
