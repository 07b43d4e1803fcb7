/**
 * When a failed attempt may be retried, and how long to wait first. Pure functions, so the policy can be read and
 * tested in one place.
 */

/** What went wrong with one attempt. */
export type AttemptFailure =
  | { kind: "status"; status: number; code: string | undefined }
  | { kind: "connection" }
  | { kind: "timeout" };

/** Error codes that will not fix themselves, whatever their status. */
const PERMANENT_CODES = new Set(["AGENT_INACTIVE", "INSUFFICIENT_QUOTA"]);

/**
 * Whether a failed attempt is worth retrying. Every call may be sent again: reads change nothing, and every
 * write (POST, PUT, PATCH, DELETE) carries an `Idempotency-Key`, the same on each attempt, so the service runs it once
 * and answers a repeat with the first answer.
 *
 * - Connection failures and timeouts are retried: the request may not have arrived, and if it did, the retry
 *   gets its answer.
 * - 408, 429 (the rate limiter refuses before the operation runs) and 5xx are retried.
 * - 409 is retried (`IDEMPOTENCY_KEY_IN_USE`: the first attempt is still running; `Retry-After` says when to come
 *   back), but never `AGENT_INACTIVE`, which only a PATCH of the agent's status can clear.
 * - Other 4xx are final: `INSUFFICIENT_QUOTA`, and `IDEMPOTENCY_KEY_REUSED` (a key given with another request).
 */
export function shouldRetry(failure: AttemptFailure): boolean {
  if (failure.kind !== "status") return true;
  const { status, code } = failure;
  if (code !== undefined && PERMANENT_CODES.has(code)) return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The first wait, doubled after each retry up to `MAX_BACKOFF_MS`. */
export const INITIAL_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;

/**
 * Milliseconds to wait before retry number `retry` (0 for the first). `Retry-After` wins when the server sent
 * it; otherwise exponential backoff from 0.5 s to 8 s, less up to 25 % jitter so that clients refused together do
 * not come back together. Either way the wait is capped at `maxRetryDelayMs`: a wait cut short costs one more
 * refused request, while a concurrency slot often frees before the server's estimate.
 */
export function retryDelayMs(
  retry: number,
  retryAfterSeconds: number | undefined,
  maxRetryDelayMs: number,
  random: () => number = Math.random,
): number {
  const wanted =
    retryAfterSeconds !== undefined
      ? retryAfterSeconds * 1000
      : Math.min(INITIAL_BACKOFF_MS * 2 ** retry, MAX_BACKOFF_MS) * (1 - 0.25 * random());
  return Math.max(0, Math.min(wanted, maxRetryDelayMs));
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date. Unparseable or negative values are ignored. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  // An HTTP date names its day and month; Date.parse would also take "-3" as a year.
  if (!/[A-Za-z]/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Methods whose requests carry an `Idempotency-Key`: every one but a read. */
export function takesIdempotencyKey(method: string): boolean {
  return method !== "GET";
}

/**
 * A new random `Idempotency-Key`: a version 4 UUID. `crypto.randomUUID` exists only in secure contexts (HTTPS
 * pages, Node), so pages served over plain HTTP build one from `crypto.getRandomValues`.
 */
export function newIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
