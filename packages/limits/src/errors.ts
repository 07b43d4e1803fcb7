import { AppError } from "@agentry/errors";
import { retryAfterSeconds } from "./headers.js";

/**
 * The limiter could not decide (its store is unreachable, timed out, or the limiter is closed). Requests are then
 * refused rather than let through unmetered, so the limits stay exact; the gateway's error handler answers it as
 * 503 AGENT_UNAVAILABLE with `Retry-After` like any other AppError.
 */
export class LimiterUnavailableError extends AppError {
  constructor(
    readonly retryAfterMs: number,
    cause?: unknown,
  ) {
    super("AGENT_UNAVAILABLE", "The service is temporarily unavailable; retry later.", {
      retryAfterSeconds: retryAfterSeconds(retryAfterMs),
      cause,
    });
  }
}
