export { LimiterUnavailableError } from "./errors.js";
export { type HeaderTarget, rateLimitHeaders, retryAfterSeconds, writeRateLimitHeaders } from "./headers.js";
export { createMemoryLimiter, MemoryLimiter, type MemoryLimiterOptions } from "./memory.js";
export { createRedisLimiter, RedisLimiter, type RedisLimiterOptions } from "./redis.js";
export type { Reservation, SpendCounter, SpendMeter } from "./spend.js";
export { MemorySpendMeter } from "./spend-memory.js";
export { RedisSpendMeter } from "./spend-redis.js";
export type { Bucket, Decision, Lease, Limiter, SlotResult } from "./types.js";
