import type { Decision } from "./types.js";

/**
 * The rate-limit response headers (docs/api/limits-and-quotas.md, "Headers") for one decision. Reset is rounded up so that at that second
 * the bucket really is full; Retry-After is rounded up (and at least 1) so a client that honours it is admitted.
 */
export function rateLimitHeaders(decision: Decision): Record<string, string> {
  const headers: Record<string, string> = {};
  writeRateLimitHeaders({ setHeader: (name, value) => (headers[name] = value) }, decision);
  return headers;
}

/** Where `writeRateLimitHeaders` puts the headers: a `ServerResponse`, or anything with its `setHeader`. */
export interface HeaderTarget {
  setHeader(name: string, value: string): unknown;
}

/**
 * Sets `rateLimitHeaders(decision)` on `target` one by one, without building an object of them first: what a
 * server that answers every request with them calls, on its response, as directly as it can.
 */
export function writeRateLimitHeaders(target: HeaderTarget, decision: Decision): void {
  target.setHeader("X-RateLimit-Limit", String(decision.limit));
  target.setHeader("X-RateLimit-Remaining", String(decision.remaining));
  target.setHeader("X-RateLimit-Reset", String(Math.ceil(decision.resetAtMs / 1000)));
  if (!decision.allowed) target.setHeader("Retry-After", String(retryAfterSeconds(decision.retryAfterMs)));
}

/** `Retry-After` seconds for a wait in milliseconds. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
