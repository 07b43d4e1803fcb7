import type { Limiter } from "@agentry/limits";
import type { Metrics } from "@agentry/observability";

/** The limit a bucket or slot key names: its last segment (`acct:acct_1:getPerMinute` → `getPerMinute`). */
function limitName(key: string): string {
  return key.slice(key.lastIndexOf(":") + 1);
}

/**
 * Counts the limiter's decisions by limit name: an admitted request counts as allowed in each bucket it spent
 * from, a refused one as refused by the bucket that refused it; concurrency slots count as `concurrentMessages`.
 */
export function observedLimiter(limiter: Limiter, metrics: Metrics): Limiter {
  return {
    async take(buckets) {
      const decision = await limiter.take(buckets);
      if (decision.allowed)
        for (const bucket of buckets) metrics.limiterDecision(limitName(bucket.key), true);
      else metrics.limiterDecision(limitName(decision.key), false);
      return decision;
    },
    async acquireSlot(key, limit, ttlMs) {
      const slot = await limiter.acquireSlot(key, limit, ttlMs);
      metrics.limiterDecision(limitName(key), slot.acquired);
      return slot;
    },
    available: () => limiter.available(),
    close: () => limiter.close(),
  };
}
