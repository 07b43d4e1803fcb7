/**
 * When a failed attempt may be retried, and how long to wait first. Pure functions, so the policy can be read and
 * tested in one place.
 */

/**
 * How safe an operation is to send twice.
 * - `idempotent`: GET, PATCH, DELETE. Sending again has the same effect (a repeated DELETE may answer 404).
 * - `unsafe`: creating an agent or an API key. After a timeout or a 5xx the server may have created it, and a
 *   retry could create a second one.
 * - `message`: sending a message. The exchange is stored only when the reply is complete, so a 503
 *   (`AGENT_UNAVAILABLE`: provider overloaded, unreachable or timed out) left nothing behind; other failures
 *   after the request reached the server are not retried.
 */
export type RetrySafety = "idempotent" | "unsafe" | "message";

/** What went wrong with one attempt. */
export type AttemptFailure =
  | { kind: "status"; status: number; code: string | undefined }
  /** `unsent`: the connection was never established (refused, unknown host), so the server saw nothing. */
  | { kind: "connection"; unsent: boolean }
  | { kind: "timeout" };

/** Error codes that will not fix themselves, whatever their status. */
const PERMANENT_CODES = new Set(["AGENT_INACTIVE", "INSUFFICIENT_QUOTA"]);

/**
 * Whether a failed attempt is worth retrying.
 *
 * - 429 is always retried: the rate limiter refuses before the operation runs, so nothing happened.
 * - A connection that was never established is always retried, for the same reason.
 * - 408 means the server gave up waiting for the request, so it was not processed: always retried.
 * - 409 is retried for idempotent operations only, and never `AGENT_INACTIVE`, which only a PATCH of the
 *   agent's status can clear.
 * - Other connection failures, timeouts and 5xx are retried for idempotent operations only; for messages, 503
 *   too.
 */
export function shouldRetry(failure: AttemptFailure, safety: RetrySafety): boolean {
  if (failure.kind === "connection") return failure.unsent || safety === "idempotent";
  if (failure.kind === "timeout") return safety === "idempotent";
  const { status, code } = failure;
  if (code !== undefined && PERMANENT_CODES.has(code)) return false;
  if (status === 429 || status === 408) return true;
  if (status === 409) return safety === "idempotent";
  if (status === 503) return safety !== "unsafe";
  if (status >= 500) return safety === "idempotent";
  return false;
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

/** Error codes of a connection that was never established: the request cannot have reached the server. */
const UNSENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * Whether a fetch failure proves the request never left: Node's fetch reports the socket error's `code` in the
 * error's `cause` (an AggregateError when several addresses were tried). Browsers say nothing about the cause, so
 * there a failed create is never retried.
 */
export function isUnsentConnectionError(error: unknown): boolean {
  const codes: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (typeof value !== "object" || value === null || depth > 4) return;
    const { code, cause, errors } = value as { code?: unknown; cause?: unknown; errors?: unknown };
    if (Array.isArray(errors) && errors.length > 0) {
      for (const inner of errors) visit(inner, depth + 1);
    } else if (typeof code === "string") {
      codes.push(code);
    } else {
      visit(cause, depth + 1);
    }
  };
  visit(error, 0);
  return codes.length > 0 && codes.every((code) => UNSENT_CODES.has(code));
}
