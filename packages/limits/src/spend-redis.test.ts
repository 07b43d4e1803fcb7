import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createRedisLimiter, type RedisLimiter } from "./redis.js";
import { RedisSpendMeter } from "./spend-redis.js";
import { serverFixture, sharedTestRedis, spendMeterContract } from "./testing/index.js";

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

// Each meter has a connection of its own, as two gateways would; they share one prefix on one Redis.
spendMeterContract("RedisSpendMeter", async (n) => {
  const prefix = `test:${randomUUID()}:`;
  return Promise.all(
    Array.from({ length: n }, async () => {
      const limiter = createRedisLimiter({ url: shared.get().url });
      opened.push(limiter);
      await limiter.ready();
      return new RedisSpendMeter(limiter, prefix);
    }),
  );
});
