import type { Decision } from "./types.js";

/**
 * The rate-limit response headers (docs/api/limits-and-quotas.md, "Headers") for one decision. Reset is rounded up so that at that second
 * the bucket really is full; Retry-After is rounded up (and at least 1) so a client that honours it is admitted.
 */
export function rateLimitHeaders(decision: Decision): Record<string, string> {
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(Math.ceil(decision.resetAtMs / 1000)),
  };
  if (!decision.allowed) headers["Retry-After"] = String(retryAfterSeconds(decision.retryAfterMs));
  return headers;
}

/** `Retry-After` seconds for a wait in milliseconds. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
