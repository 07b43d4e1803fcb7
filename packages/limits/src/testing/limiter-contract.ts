import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { LimiterUnavailableError } from "../errors.js";
import type { Bucket, Decision, Lease, Limiter } from "../types.js";

/**
 * The behaviour every Limiter implementation owes the gateway, on the real clock. Each test uses fresh keys, so
 * implementations backed by a shared server can run it side by side.
 */
export function limiterContract(name: string, makeLimiter: () => Limiter | Promise<Limiter>): void {
  describe(`${name}: Limiter contract`, () => {
    const open: Limiter[] = [];
    const newLimiter = async () => {
      const limiter = await makeLimiter();
      open.push(limiter);
      return limiter;
    };
    const key = (label: string) => `${label}:${randomUUID()}`;

    afterEach(async () => {
      await Promise.all(open.splice(0).map((l) => l.close()));
    });

    it("admits exactly the limit out of 100 simultaneous takes", async () => {
      const limiter = await newLimiter();
      const bucket: Bucket = { key: key("tier"), limit: 60, windowMs: 60_000 };
      const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.take([bucket])));
      const allowed = decisions.filter((d) => d.allowed);
      expect(allowed).toHaveLength(60);
      // Each admitted request saw a different count: no two were decided on the same state.
      expect(new Set(allowed.map((d) => d.remaining)).size).toBe(60);
      expect(Math.min(...allowed.map((d) => d.remaining))).toBe(0);
      for (const d of decisions.filter((d) => !d.allowed)) {
        expect(d.remaining).toBe(0);
        expect(d.retryAfterMs).toBeGreaterThan(0);
        expect(d.retryAfterMs).toBeLessThanOrEqual(60_000);
      }
    });

    it("spends from all buckets or from none", async () => {
      const limiter = await newLimiter();
      const tight: Bucket = { key: key("create"), limit: 1, windowMs: 60_000 };
      const loose: Bucket = { key: key("tier"), limit: 5, windowMs: 60_000 };
      expect((await limiter.take([loose, tight])).allowed).toBe(true);
      const refused = await limiter.take([loose, tight]);
      expect(refused.allowed).toBe(false);
      expect(refused.key).toBe(tight.key);
      // The refused request spent nothing from the bucket that would have allowed it: 5 - 1 - 1 left.
      const next = await limiter.take([loose]);
      expect(next).toMatchObject({ allowed: true, key: loose.key, remaining: 3 });
    });

    it("stays all-or-nothing under concurrency", async () => {
      const limiter = await newLimiter();
      const tier: Bucket = { key: key("tier"), limit: 60, windowMs: 60_000 };
      const endpoint: Bucket = { key: key("create"), limit: 10, windowMs: 60_000 };
      const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.take([tier, endpoint])));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
      expect(await limiter.take([tier])).toMatchObject({ allowed: true, remaining: 60 - 10 - 1 });
    });

    it("reports remaining, reset and retry-after of the tightest bucket", async () => {
      const limiter = await newLimiter();
      const bucket: Bucket = { key: key("get"), limit: 3, windowMs: 2000 };
      const other: Bucket = { key: key("tier"), limit: 10, windowMs: 2000 };
      const timed = async (): Promise<[Decision, number, number]> => {
        const before = Date.now();
        const d = await limiter.take([other, bucket]);
        return [d, before, Date.now()];
      };
      const [first, before1, after1] = await timed();
      expect(first).toMatchObject({
        allowed: true,
        key: bucket.key,
        limit: 3,
        remaining: 2,
        retryAfterMs: 0,
      });
      // Full again one window after the newest admitted request.
      expect(first.resetAtMs).toBeGreaterThanOrEqual(before1 + 2000 - 1);
      expect(first.resetAtMs).toBeLessThanOrEqual(after1 + 2000 + 1);
      expect((await limiter.take([other, bucket])).remaining).toBe(1);
      const [third] = await timed();
      expect(third).toMatchObject({ allowed: true, remaining: 0 });
      const [refused, before4, after4] = await timed();
      expect(refused).toMatchObject({ allowed: false, key: bucket.key, limit: 3, remaining: 0 });
      expect(refused.resetAtMs).toBe(third.resetAtMs);
      // A unit frees when the oldest admitted request leaves the window, i.e. at first.resetAtMs.
      expect(refused.retryAfterMs).toBeGreaterThanOrEqual(first.resetAtMs - after4 - 1);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(first.resetAtMs - before4 + 1);
    });

    it("reports the longest wait among the refusing buckets", async () => {
      const limiter = await newLimiter();
      const short: Bucket = { key: key("short"), limit: 1, windowMs: 1000 };
      const long: Bucket = { key: key("long"), limit: 1, windowMs: 5000 };
      const open: Bucket = { key: key("open"), limit: 100, windowMs: 1000 };
      expect((await limiter.take([short, long, open])).allowed).toBe(true);
      const refused = await limiter.take([short, open, long]);
      expect(refused).toMatchObject({ allowed: false, key: long.key, limit: 1, remaining: 0 });
      expect(refused.retryAfterMs).toBeGreaterThan(4000);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(5000);
    });

    it("slides: a unit comes back when its request leaves the window, not at a boundary", async () => {
      const limiter = await newLimiter();
      const bucket: Bucket = { key: key("slide"), limit: 2, windowMs: 1000 };
      const first = await limiter.take([bucket]);
      await sleep(400);
      expect((await limiter.take([bucket])).allowed).toBe(true);
      const before = Date.now();
      const refused = await limiter.take([bucket]);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(first.resetAtMs - before + 1);
      await sleep(refused.retryAfterMs + 20);
      // Only the first request has left the window: one unit is back, the second is still spent.
      expect(await limiter.take([bucket])).toMatchObject({ allowed: true, remaining: 0 });
      expect((await limiter.take([bucket])).allowed).toBe(false);
    });

    it("refuses everything with limit 0", async () => {
      const limiter = await newLimiter();
      const d = await limiter.take([{ key: key("off"), limit: 0, windowMs: 1000 }]);
      expect(d).toMatchObject({ allowed: false, limit: 0, remaining: 0, retryAfterMs: 1000 });
    });

    it("rejects an empty bucket list, a key listed twice and bad numbers", async () => {
      const limiter = await newLimiter();
      const k = key("dup");
      await expect(limiter.take([])).rejects.toThrow(RangeError);
      await expect(
        limiter.take([
          { key: k, limit: 1, windowMs: 1000 },
          { key: k, limit: 2, windowMs: 1000 },
        ]),
      ).rejects.toThrow(RangeError);
      await expect(limiter.take([{ key: k, limit: 1.5, windowMs: 1000 }])).rejects.toThrow(RangeError);
      await expect(limiter.take([{ key: k, limit: 1, windowMs: 0 }])).rejects.toThrow(RangeError);
      await expect(limiter.acquireSlot(k, 1, 0)).rejects.toThrow(RangeError);
    });

    it("refuses the 11th of 11 simultaneous slot acquisitions with limit 10; release frees one", async () => {
      const limiter = await newLimiter();
      const k = key("agent");
      const results = await Promise.all(Array.from({ length: 11 }, () => limiter.acquireSlot(k, 10, 10_000)));
      const leases = results.flatMap((r) => (r.acquired ? [r.lease] : []));
      expect(leases).toHaveLength(10);
      const refused = results.find((r) => !r.acquired);
      expect(refused?.retryAfterMs).toBeGreaterThan(0);
      expect(refused?.retryAfterMs).toBeLessThanOrEqual(10_000);
      expect((await limiter.acquireSlot(k, 10, 10_000)).acquired).toBe(false);
      await leases[0]!.release();
      await leases[0]!.release();
      const again = await limiter.acquireSlot(k, 10, 10_000);
      expect(again.acquired).toBe(true);
      expect((await limiter.acquireSlot(k, 10, 10_000)).acquired).toBe(false);
      // Slots and rate buckets are separate namespaces, even under the same key.
      expect((await limiter.take([{ key: k, limit: 1, windowMs: 1000 }])).allowed).toBe(true);
    });

    it("frees an expired lease within its ttl and does not revive it", async () => {
      const limiter = await newLimiter();
      const k = key("agent");
      const held = await limiter.acquireSlot(k, 1, 300);
      expect(held.acquired).toBe(true);
      const refused = await limiter.acquireSlot(k, 1, 300);
      expect(refused.acquired).toBe(false);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(300);
      await sleep(refused.retryAfterMs + 20);
      const next = await limiter.acquireSlot(k, 1, 300);
      expect(next.acquired).toBe(true);
      const lost = held.acquired ? held.lease : undefined;
      expect(await lost?.renew()).toBe(false);
      expect((await limiter.acquireSlot(k, 1, 300)).acquired).toBe(false);
    });

    it("keeps a renewed lease past its first ttl", async () => {
      const limiter = await newLimiter();
      const k = key("agent");
      const result = await limiter.acquireSlot(k, 1, 400);
      if (!result.acquired) throw new Error("expected a lease");
      const lease: Lease = result.lease;
      await sleep(250);
      expect(await lease.renew()).toBe(true);
      await sleep(250);
      // 500 ms after acquisition: without the renewal the slot would be free.
      expect((await limiter.acquireSlot(k, 1, 400)).acquired).toBe(false);
      await lease.release();
      expect(await lease.renew()).toBe(false);
      expect((await limiter.acquireSlot(k, 1, 400)).acquired).toBe(true);
    });

    it("fails closed after close()", async () => {
      const limiter = await newLimiter();
      expect(limiter.available()).toBe(true);
      await limiter.close();
      expect(limiter.available()).toBe(false);
      await expect(limiter.take([{ key: key("x"), limit: 1, windowMs: 1000 }])).rejects.toBeInstanceOf(
        LimiterUnavailableError,
      );
      await expect(limiter.acquireSlot(key("x"), 1, 1000)).rejects.toBeInstanceOf(LimiterUnavailableError);
    });
  });
}
