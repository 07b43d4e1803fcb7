import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { forkLimiterChild } from "../test/children.js";
import { LimiterUnavailableError } from "./errors.js";
import { createRedisLimiter, type RedisLimiter, type RedisLimiterOptions } from "./redis.js";
import {
  freePort,
  limiterContract,
  serverFixture,
  sharedTestRedis,
  startTestRedis,
} from "./testing/index.js";
import type { Bucket } from "./types.js";

const shared = serverFixture(sharedTestRedis);
const opened: RedisLimiter[] = [];

beforeAll(async () => {
  await shared.start();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});
afterAll(async () => {
  await shared.stop();
});

/** A limiter on its own client; every test gets a fresh key prefix so a shared server is never polluted. */
function limiter(options: Partial<RedisLimiterOptions> & { url?: string } = {}): RedisLimiter {
  const l = createRedisLimiter({ url: shared.get().url, keyPrefix: `test:${randomUUID()}:`, ...options });
  opened.push(l);
  return l;
}

async function connected(options: Partial<RedisLimiterOptions> = {}): Promise<RedisLimiter> {
  const l = limiter(options);
  await l.ready();
  return l;
}

limiterContract("redis", () => connected());

describe("redis limiter across gateways", () => {
  it("admits exactly 60 of 100 from two limiters on two clients", async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const [a, b] = await Promise.all([connected({ keyPrefix }), connected({ keyPrefix })]);
    const bucket: Bucket = { key: "acct:acct_1:tier", limit: 60, windowMs: 60_000 };
    const decisions = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).take([bucket])),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
    expect(await a.take([bucket])).toMatchObject({ allowed: false, remaining: 0 });
  });

  it("admits exactly 60 of 100 from two child processes", async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const children = await Promise.all(
      [1, 2].map(() => forkLimiterChild([shared.get().url, keyPrefix, "take", "tier", "50"])),
    );
    const reports = await Promise.all(children.map((c) => c.go()));
    expect(reports.reduce((sum, r) => sum + (r.allowed ?? 0), 0)).toBe(60);
    await Promise.all(
      children.map((c) => (c.process.exitCode === null ? once(c.process, "exit") : undefined)),
    );
  });

  it("gives the slots of a killed process back within the lease ttl", async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const child = await forkLimiterChild([shared.get().url, keyPrefix, "hold", "agent:agt_1", "10"]);
    expect(await child.go()).toEqual({ acquired: 10 });
    const exited = once(child.process, "exit");
    child.process.kill("SIGKILL");
    await exited;
    const l = await connected({ keyPrefix });
    const refused = await l.acquireSlot("agent:agt_1", 10, 1000);
    expect(refused.acquired).toBe(false);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(1000);
    await sleep(refused.retryAfterMs + 20);
    const results = await Promise.all(
      Array.from({ length: 11 }, () => l.acquireSlot("agent:agt_1", 10, 1000)),
    );
    expect(results.filter((r) => r.acquired)).toHaveLength(10);
  });

  it("sets keys to expire with their last entry", async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const l = await connected({ keyPrefix });
    const raw = createClient({ url: shared.get().url });
    raw.on("error", () => {});
    await raw.connect();
    try {
      await l.take([{ key: "b", limit: 5, windowMs: 1500 }]);
      const bucketTtl = await raw.pTTL(`${keyPrefix}rate:b`);
      expect(bucketTtl).toBeGreaterThan(1000);
      expect(bucketTtl).toBeLessThanOrEqual(1500);
      const slot = await l.acquireSlot("s", 2, 3000);
      const slotTtl = await raw.pTTL(`${keyPrefix}slot:s`);
      expect(slotTtl).toBeGreaterThan(2500);
      expect(slotTtl).toBeLessThanOrEqual(3000);
      if (slot.acquired) await slot.lease.release();
      expect(await raw.exists(`${keyPrefix}slot:s`)).toBe(0);
    } finally {
      raw.destroy();
    }
  });
});

describe("redis limiter on a server of its own", () => {
  const own = serverFixture(() => startTestRedis());
  let raw: ReturnType<typeof createClient> | undefined;

  beforeAll(async () => {
    await own.start();
  });
  afterAll(async () => {
    raw?.destroy();
    await own.stop();
  });

  /** A plain client on the server, to look at it from outside the limiter. */
  async function inspect(): Promise<ReturnType<typeof createClient>> {
    if (raw === undefined) {
      raw = createClient({ url: own.get().url });
      raw.on("error", () => {});
      await raw.connect();
    }
    return raw;
  }

  async function scriptCalls(): Promise<{ evalsha: number; eval: number }> {
    const info = await (await inspect()).info("commandstats");
    const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return { evalsha: calls("evalsha"), eval: calls("eval") };
  }

  it("takes in one round trip, and reloads its script when Redis lost it", async () => {
    const l = await connected({ url: own.get().url });
    const buckets: Bucket[] = [
      { key: "tier", limit: 60, windowMs: 60_000 },
      { key: "create", limit: 10, windowMs: 60_000 },
      { key: "agent", limit: 60, windowMs: 60_000 },
    ];
    await l.take(buckets);
    const before = await scriptCalls();
    for (let i = 0; i < 5; i++) await l.take(buckets);
    // One EVALSHA per take, whatever the number of buckets; EVAL only when the server lost the script.
    expect(await scriptCalls()).toEqual({ evalsha: before.evalsha + 5, eval: before.eval });

    await (await inspect()).scriptFlush();
    expect((await l.take(buckets)).remaining).toBe(3);
    expect((await l.take(buckets)).remaining).toBe(2);
  });

  it("fails closed with a typed error while Redis is down, and recovers when it is back", async () => {
    const errors: unknown[] = [];
    let recoveries = 0;
    const redis = own.get();
    const l = await connected({
      url: redis.url,
      commandTimeoutMs: 300,
      availability: { failed: (e) => errors.push(e), recovered: () => recoveries++ },
    });
    const bucket: Bucket = { key: "tier", limit: 60, windowMs: 60_000 };
    expect((await l.take([bucket])).allowed).toBe(true);
    const held = await l.acquireSlot("agent", 10, 5000);

    await redis.stop();
    const started = Date.now();
    const failure = await l.take([bucket]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LimiterUnavailableError);
    expect((failure as LimiterUnavailableError).retryAfterSeconds).toBe(1);
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(l.acquireSlot("agent", 10, 5000)).rejects.toBeInstanceOf(LimiterUnavailableError);
    if (held.acquired) await expect(held.lease.release()).rejects.toBeInstanceOf(LimiterUnavailableError);
    await sleep(300);
    expect(errors.length).toBeGreaterThan(0);
    expect(l.available()).toBe(false);
    recoveries = 0;

    await redis.start();
    const deadline = Date.now() + 10_000;
    let recovered = false;
    while (!recovered && Date.now() < deadline) {
      recovered = await l.take([bucket]).then(
        (d) => d.allowed,
        () => false,
      );
      if (!recovered) await sleep(50);
    }
    expect(recovered).toBe(true);
    expect(recoveries).toBeGreaterThan(0);
    expect(l.available()).toBe(true);
    // The restarted server is empty; slots work again too.
    expect((await l.acquireSlot("agent", 10, 5000)).acquired).toBe(true);
  });

  it("times out instead of hanging when Redis stops answering", async () => {
    const redis = own.get();
    const l = await connected({ url: redis.url, commandTimeoutMs: 300 });
    const bucket: Bucket = { key: "tier", limit: 60, windowMs: 60_000 };
    expect((await l.take([bucket])).allowed).toBe(true);
    redis.pause();
    try {
      const started = Date.now();
      await expect(l.take([bucket])).rejects.toBeInstanceOf(LimiterUnavailableError);
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      redis.resume();
    }
    // The timed-out take reached Redis before it froze and ran when it thawed: refused to its caller yet spent,
    // so an outage can only make the limiter stricter, never looser.
    expect(await l.take([bucket])).toMatchObject({ allowed: true, remaining: 57 });
  });

  it("answers its first calls once connected, rather than failing them while it connects", async () => {
    const l = limiter();
    const bucket: Bucket = { key: "tier", limit: 1, windowMs: 1000 };
    expect(l.available()).toBe(false);
    expect((await l.take([bucket])).allowed).toBe(true);
    expect((await l.acquireSlot("agent", 1, 1000)).acquired).toBe(true);
  });

  it("starts before its Redis does, failing closed until it can connect", async () => {
    const port = await freePort();
    const l = limiter({ url: `redis://127.0.0.1:${port}`, maxReconnectDelayMs: 200 });
    const bucket: Bucket = { key: "tier", limit: 1, windowMs: 1000 };
    await expect(l.take([bucket])).rejects.toBeInstanceOf(LimiterUnavailableError);
    await expect(l.acquireSlot("agent", 1, 1000)).rejects.toBeInstanceOf(LimiterUnavailableError);
    const late = await startTestRedis(port);
    try {
      await l.ready();
      expect((await l.take([bucket])).allowed).toBe(true);
    } finally {
      await l.close();
      await late.stop();
    }
  });
});
