import { isId, type LimitName } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type Bucket,
  type Lease,
  type Limiter,
  retryAfterSeconds,
  writeRateLimitHeaders,
} from "@agentry/limits";
import type { Logger } from "@agentry/logging";
import type { Middleware, Next, ParameterizedContext } from "koa";
import type { GatewayState, Principal } from "../context.js";
import type { ServedRoute } from "../routes/define.js";
import { type Beating, heartbeatFor } from "./heartbeat.js";

const MINUTE_MS = 60_000;

/** What a bucket limits, in words for the 429 message. */
const DESCRIPTIONS: Record<LimitName, string> = {
  requestsPerMinute: "requests per minute for this account",
  createPerMinute: "agent creations per minute",
  listPerMinute: "listings and exports per minute",
  getPerMinute: "reads per minute",
  updatePerMinute: "agent updates per minute",
  deletePerMinute: "deletions per minute",
  messagesPerMinute: "messages per minute to this agent",
  concurrentMessages: "simultaneous messages to this agent",
  maxAgents: "agents",
};

export interface LimitsOptions {
  limiter: Limiter;
  logger: Logger;
  /** How long a concurrency slot outlives a gateway that died holding it; renewed while the request runs. */
  leaseMs: number;
}

/**
 * The buckets a request spends from (docs/api/limits-and-quotas.md, "Buckets"): the account's tier bucket, and the
 * endpoint's bucket, which for messages is the agent's own (keyed under the account, so no other account can
 * drain it). Limits come from the caller's principal, so a plan change applies as soon as the key's cache
 * entry is refreshed.
 */
function bucketsFor(route: ServedRoute, principal: Principal, agentId: string | undefined): Bucket[] {
  const account = `acct:${principal.accountId}`;
  const buckets: Bucket[] = [
    { key: `${account}:requestsPerMinute`, limit: principal.limits.requestsPerMinute, windowMs: MINUTE_MS },
  ];
  if (route.limit === "messagesPerMinute") {
    // A malformed id is answered 404 without reaching a model, so it needs no bucket of its own.
    if (agentId && isId("agent", agentId)) {
      buckets.push({
        key: `${account}:agent:${agentId}:messagesPerMinute`,
        limit: principal.limits.messagesPerMinute,
        windowMs: MINUTE_MS,
      });
    }
  } else if (route.limit) {
    buckets.push({
      key: `${account}:${route.limit}`,
      limit: principal.limits[route.limit],
      windowMs: MINUTE_MS,
    });
  }
  return buckets;
}

function limitNameOf(key: string): LimitName {
  return key.slice(key.lastIndexOf(":") + 1) as LimitName;
}

/**
 * Enforces rate limits, then reports the tightest bucket, by name in `X-RateLimit-Bucket`, in `X-RateLimit-*` on
 * every response that follows, errors included. A refused request is 429 with `Retry-After`. Every request counts,
 * a malformed one included. The headers go straight onto the response (`setHeader`): through Koa's `set`, which
 * builds and walks arrays of them, they were the larger part of this step's own cost.
 */
export function limitsMiddleware(options: LimitsOptions) {
  const { limiter } = options;
  return (route: ServedRoute): Middleware<GatewayState> =>
    async (ctx, next) => {
      const principal = ctx.state.principal!;
      const agentId = (ctx as { params?: Record<string, string> }).params?.agentId;
      const decision = await limiter.take(bucketsFor(route, principal, agentId));
      const name = limitNameOf(decision.key);
      writeRateLimitHeaders(ctx.res, decision);
      ctx.res.setHeader("X-RateLimit-Bucket", name);
      if (!decision.allowed) {
        const seconds = retryAfterSeconds(decision.retryAfterMs);
        throw new AppError(
          "RATE_LIMIT_EXCEEDED",
          `Rate limit exceeded: at most ${decision.limit} ${DESCRIPTIONS[name]}. Retry after ${seconds} s.`,
          { retryAfterSeconds: seconds },
        );
      }
      return next();
    };
}

/**
 * The per-agent concurrency limit of the routes that hold a slot (`concurrency`), taken once the request is
 * valid: a slot is a lease renewed while the request (or its stream, or the background message it started) runs
 * and released when it ends; a gateway that dies frees its slots when their leases lapse. Refused: 429 with
 * `Retry-After`.
 */
export function concurrencyMiddleware(options: LimitsOptions) {
  const { limiter, leaseMs } = options;
  return reservingMiddleware(async (ctx, next, principal, agentId) => {
    const limit = principal.limits.concurrentMessages;
    const slot = await limiter.acquireSlot(
      `acct:${principal.accountId}:agent:${agentId}:concurrentMessages`,
      limit,
      leaseMs,
    );
    if (!slot.acquired) {
      const seconds = retryAfterSeconds(slot.retryAfterMs);
      ctx.set("Retry-After", String(seconds));
      throw new AppError(
        "RATE_LIMIT_EXCEEDED",
        `Concurrency limit reached: at most ${limit} ${DESCRIPTIONS.concurrentMessages}. Retry when one finishes.`,
        { retryAfterSeconds: seconds },
      );
    }
    const renewal = new SlotRenewal(slot.lease, Math.max(1000, Math.floor(leaseMs / 3)), options.logger);
    const heartbeat = heartbeatFor(renewal.everyMs);
    heartbeat.add(renewal);
    const release = async () => {
      heartbeat.delete(renewal);
      await slot.lease.release().catch((error: unknown) => {
        options.logger.warn(
          { err: error },
          "could not release a concurrency slot; it frees itself when its lease lapses",
        );
      });
    };
    let held: Promise<unknown> | undefined;
    ctx.state.holdSlotUntil = (work) => {
      held = work;
    };
    try {
      await next();
    } finally {
      ctx.state.holdSlotUntil = undefined;
      if (held) void held.catch(() => undefined).then(release);
      else await release();
    }
  });
}

/** Renews a held slot's lease every `everyMs`, on the process's heartbeat rather than a timer of its own. */
class SlotRenewal implements Beating {
  private renewedAt = Date.now();

  constructor(
    private readonly lease: Lease,
    readonly everyMs: number,
    private readonly logger: Logger,
  ) {}

  beat(now: number): void {
    if (now - this.renewedAt < this.everyMs) return;
    this.renewedAt = now;
    this.lease
      .renew()
      .catch((error: unknown) => this.logger.warn({ err: error }, "could not renew a concurrency slot"));
  }
}

/**
 * A middleware of the routes that reserve for the agent a request addresses (`concurrency`): `reserve` runs with
 * the caller and the agent's id. A request without a well-formed agent id reserves nothing: it is answered 404
 * without reaching a model.
 */
export function reservingMiddleware(
  reserve: (
    ctx: ParameterizedContext<GatewayState>,
    next: Next,
    principal: Principal,
    agentId: string,
  ) => Promise<unknown>,
) {
  return (route: ServedRoute): Middleware<GatewayState> | undefined => {
    if (!route.concurrency) return undefined;
    return async (ctx, next) => {
      const agentId = (ctx as { params?: Record<string, string> }).params?.agentId;
      if (!agentId || !isId("agent", agentId)) return next();
      return reserve(ctx, next, ctx.state.principal!, agentId);
    };
  };
}
