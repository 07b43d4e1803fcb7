import type { ErrorCode } from "./codes.js";

/** One problem with one field of a request, as `details` items of the error envelope. */
export interface FieldIssue {
  field: string;
  issue: string;
}

/**
 * An error whose message is safe to show to the caller. Anything else thrown is an internal error: it is
 * logged with its cause and answered with a generic message.
 */
export class AppError extends Error {
  override readonly name = "AppError";

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      details?: FieldIssue[];
      retryAfterSeconds?: number;
      cause?: unknown;
      /** Members of the error envelope's `error` beside code and message (a 402's `budget`). */
      extra?: Record<string, unknown>;
    } = {},
  ) {
    super(message, { cause: options.cause });
  }

  get details(): FieldIssue[] | undefined {
    return this.options.details;
  }

  get retryAfterSeconds(): number | undefined {
    return this.options.retryAfterSeconds;
  }
}

/** Anything thrown as an AppError: ours as they are, the rest INTERNAL_ERROR with the original kept as cause. */
export function asAppError(thrown: unknown): AppError {
  return thrown instanceof AppError
    ? thrown
    : new AppError("INTERNAL_ERROR", "Internal error.", { cause: thrown });
}
