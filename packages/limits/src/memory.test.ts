import { describe, expect, it } from "vitest";
import { createMemoryLimiter } from "./memory.js";
import { limiterContract } from "./testing/index.js";
import type { Bucket } from "./types.js";

limiterContract("memory", () => createMemoryLimiter());

/** A limiter on a clock the test moves by hand. */
function onFakeClock(start = 1_000_000) {
  const clock = { now: start };
  const limiter = createMemoryLimiter({ now: () => clock.now, sweepIntervalMs: 1000 });
  return { clock, limiter };
}

describe("memory limiter on an injected clock", () => {
  it("computes remaining, reset and retry-after exactly", async () => {
    const { clock, limiter } = onFakeClock(10_000);
    const bucket: Bucket = { key: "b", limit: 2, windowMs: 1000 };
    expect(await limiter.take([bucket])).toEqual({
      allowed: true,
      key: "b",
      limit: 2,
      remaining: 1,
      resetAtMs: 11_000,
      retryAfterMs: 0,
    });
    clock.now = 10_500;
    expect(await limiter.take([bucket])).toMatchObject({ allowed: true, remaining: 0, resetAtMs: 11_500 });
    clock.now = 10_600;
    expect(await limiter.take([bucket])).toMatchObject({
      allowed: false,
      remaining: 0,
      resetAtMs: 11_500,
      retryAfterMs: 400,
    });
    // At exactly one window after it, the first request no longer counts.
    clock.now = 11_000;
    expect(await limiter.take([bucket])).toMatchObject({ allowed: true, remaining: 0, resetAtMs: 12_000 });
    clock.now = 11_499;
    expect(await limiter.take([bucket])).toMatchObject({ allowed: false, retryAfterMs: 1 });
    clock.now = 13_000;
    expect(await limiter.take([bucket])).toMatchObject({ allowed: true, remaining: 1, resetAtMs: 14_000 });
  });

  it("never admits more than the limit in any window, and never refuses below it", async () => {
    const { clock, limiter } = onFakeClock(0);
    const limit = 7;
    const windowMs = 1000;
    const a: Bucket = { key: "a", limit, windowMs };
    const b: Bucket = { key: "b", limit: 11, windowMs: 1500 };
    const admittedA: number[] = [];
    const admittedB: number[] = [];
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 5000; i++) {
      clock.now += Math.floor(random() * 60);
      const both = random() < 0.5;
      const buckets = both ? [a, b] : [a];
      const inWindow = (times: number[], w: number) => times.filter((t) => t > clock.now - w).length;
      const expected = inWindow(admittedA, windowMs) < limit && (!both || inWindow(admittedB, 1500) < 11);
      const d = await limiter.take(buckets);
      expect(d.allowed).toBe(expected);
      if (d.allowed) {
        admittedA.push(clock.now);
        if (both) admittedB.push(clock.now);
      }
    }
    // Any limit + 1 admitted requests span at least a full window.
    for (let i = 0; i + limit < admittedA.length; i++) {
      expect(admittedA[i + limit]! - admittedA[i]!).toBeGreaterThanOrEqual(windowMs);
    }
    expect(admittedA.length).toBeGreaterThan(1000);
  });

  it("does not allow a double burst across a minute boundary, as a fixed window would", async () => {
    const { clock, limiter } = onFakeClock(59_900);
    const bucket: Bucket = { key: "tier", limit: 60, windowMs: 60_000 };
    let admitted = 0;
    for (let i = 0; i < 60; i++) if ((await limiter.take([bucket])).allowed) admitted++;
    clock.now = 60_100;
    for (let i = 0; i < 60; i++) if ((await limiter.take([bucket])).allowed) admitted++;
    expect(admitted).toBe(60);
    clock.now = 119_899;
    expect((await limiter.take([bucket])).allowed).toBe(false);
    // All 60 were admitted at 59.9 s, so all 60 units come back together one window later.
    clock.now = 119_900;
    expect(await limiter.take([bucket])).toMatchObject({ allowed: true, remaining: 59 });
  });

  it("evicts idle buckets and lease sets", async () => {
    const { clock, limiter } = onFakeClock(0);
    for (let i = 0; i < 1000; i++) {
      await limiter.take([{ key: `k${i}`, limit: 5, windowMs: 1000 }]);
      await limiter.acquireSlot(`s${i}`, 5, 500);
    }
    clock.now = 500;
    await limiter.take([{ key: "late", limit: 5, windowMs: 1000 }]);
    expect(limiter.stats()).toEqual({ buckets: 1001, slotKeys: 1000 });
    // The next call after the sweep interval drops everything whose window or lease has run out.
    clock.now = 1000;
    await limiter.take([{ key: "fresh", limit: 5, windowMs: 1000 }]);
    expect(limiter.stats()).toEqual({ buckets: 2, slotKeys: 0 });
  });

  it("treats a clock that steps back as standing still", async () => {
    const { clock, limiter } = onFakeClock(5000);
    const bucket: Bucket = { key: "b", limit: 1, windowMs: 1000 };
    await limiter.take([bucket]);
    clock.now = 1000;
    expect(await limiter.take([bucket])).toMatchObject({
      allowed: false,
      retryAfterMs: 1000,
      resetAtMs: 6000,
    });
    clock.now = 6000;
    expect((await limiter.take([bucket])).allowed).toBe(true);
  });

  it("reports a slot's wait as the time to the earliest lease expiry", async () => {
    const { clock, limiter } = onFakeClock(0);
    await limiter.acquireSlot("agent", 2, 1000);
    clock.now = 300;
    await limiter.acquireSlot("agent", 2, 1000);
    clock.now = 400;
    expect(await limiter.acquireSlot("agent", 2, 1000)).toEqual({ acquired: false, retryAfterMs: 600 });
    clock.now = 1000;
    expect((await limiter.acquireSlot("agent", 2, 1000)).acquired).toBe(true);
    expect(await limiter.acquireSlot("none", 0, 1000)).toEqual({ acquired: false, retryAfterMs: 1000 });
  });
});
