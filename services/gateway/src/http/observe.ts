import type { Limiter } from "@agentry/limits";
import { type Metrics, observeHttpRequest } from "@agentry/observability";
import type { Middleware } from "koa";
import type { GatewayContext, GatewayState } from "../context.js";

/** What requests that matched no route are counted under, so unknown paths cannot multiply the series. */
const UNMATCHED = "unmatched";

/**
 * Records each request in the metrics by route pattern and status with its duration (a stream counts until it
 * ends) and, when tracing is on, runs it inside a server span that the RPCs it makes continue.
 */
export function observe(gateway: GatewayContext): Middleware<GatewayState> {
  return async (ctx, next) => {
    const observation = observeHttpRequest(gateway.metrics, ctx.method, ctx.headers);
    try {
      await observation.run(next);
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? UNMATCHED;
      observation.end(route, ctx.status, ctx.state.requestId);
    }
  };
}

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
    close: () => limiter.close(),
  };
}
