import { AppError } from "./app-error.js";

/**
 * The refusals of an `Idempotency-Key` (docs/api/messages-and-streams.md,
 * "Idempotency"), worded once for the gateway, which claims most keys, and the registry, which claims a create's key
 * in the create's own transaction.
 */

/** The key's first request is still running. */
export function idempotencyKeyInUse(): AppError {
  return new AppError(
    "IDEMPOTENCY_KEY_IN_USE",
    "A request with this Idempotency-Key is still running; retry once it has finished.",
    { retryAfterSeconds: 1 },
  );
}

/** The key was used with another request. */
export function idempotencyKeyReused(): AppError {
  return new AppError(
    "IDEMPOTENCY_KEY_REUSED",
    "This Idempotency-Key was used with a different request (method, path or body); use a new key for a new request.",
  );
}
