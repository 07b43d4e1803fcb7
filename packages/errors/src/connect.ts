import { Code, ConnectError } from "@connectrpc/connect";
import { AppError, type FieldIssue } from "./app-error.js";
import { type ErrorCode, isErrorCode } from "./codes.js";

/** Metadata keys that carry the public error code and its extras across an RPC. */
const CODE_KEY = "agentry-error-code";
const DETAILS_KEY = "agentry-error-details";
const RETRY_AFTER_KEY = "agentry-retry-after";

/** The RPC code each public error code travels as. */
const RPC_CODE: Record<ErrorCode, Code> = {
  INVALID_REQUEST: Code.InvalidArgument,
  UNAUTHORIZED: Code.Unauthenticated,
  BUDGET_EXCEEDED: Code.ResourceExhausted,
  FORBIDDEN: Code.PermissionDenied,
  INSUFFICIENT_QUOTA: Code.FailedPrecondition,
  AGENT_NOT_FOUND: Code.NotFound,
  CONVERSATION_NOT_FOUND: Code.NotFound,
  MESSAGE_NOT_FOUND: Code.NotFound,
  STREAM_NOT_FOUND: Code.NotFound,
  WEBHOOK_NOT_FOUND: Code.NotFound,
  DELIVERY_NOT_FOUND: Code.NotFound,
  SECRET_NOT_FOUND: Code.NotFound,
  API_KEY_NOT_FOUND: Code.NotFound,
  MEMORY_NOT_FOUND: Code.NotFound,
  DOCUMENT_NOT_FOUND: Code.NotFound,
  SCHEDULE_NOT_FOUND: Code.NotFound,
  MEMBER_NOT_FOUND: Code.NotFound,
  BUDGET_NOT_FOUND: Code.NotFound,
  NOT_FOUND: Code.NotFound,
  METHOD_NOT_ALLOWED: Code.Unimplemented,
  AGENT_INACTIVE: Code.FailedPrecondition,
  IDEMPOTENCY_KEY_IN_USE: Code.Aborted,
  CONVERSATION_BUSY: Code.FailedPrecondition,
  MESSAGE_NOT_AWAITING_APPROVAL: Code.FailedPrecondition,
  APPROVAL_EXPIRED: Code.FailedPrecondition,
  MEMBER_EXISTS: Code.AlreadyExists,
  LAST_OWNER: Code.FailedPrecondition,
  IDEMPOTENCY_KEY_REUSED: Code.FailedPrecondition,
  // A compare-and-set that found the agent changed: the caller reads it again and decides.
  PRECONDITION_FAILED: Code.Aborted,
  PAYLOAD_TOO_LARGE: Code.InvalidArgument,
  UNSUPPORTED_MEDIA_TYPE: Code.InvalidArgument,
  RATE_LIMIT_EXCEEDED: Code.ResourceExhausted,
  INTERNAL_ERROR: Code.Internal,
  MODEL_ERROR: Code.Aborted,
  AGENT_UNAVAILABLE: Code.Unavailable,
};

/**
 * The public error for an RPC code that came without one of ours: a failure of the transport or of a service
 * that did not answer with an AppError. Its message is generic on purpose; the cause is logged, never sent.
 */
const FALLBACK: Partial<Record<Code, [ErrorCode, string]>> = {
  [Code.InvalidArgument]: ["INVALID_REQUEST", "The request is invalid."],
  [Code.NotFound]: ["AGENT_NOT_FOUND", "The agent does not exist."],
  [Code.Unauthenticated]: ["UNAUTHORIZED", "The API key is missing or invalid."],
  [Code.PermissionDenied]: ["FORBIDDEN", "The API key lacks the permission for this operation."],
  [Code.ResourceExhausted]: ["RATE_LIMIT_EXCEEDED", "Too many requests."],
  [Code.Unavailable]: ["AGENT_UNAVAILABLE", "A service is temporarily unavailable. Retry shortly."],
  [Code.DeadlineExceeded]: ["AGENT_UNAVAILABLE", "A service did not answer in time. Retry shortly."],
  [Code.Canceled]: ["AGENT_UNAVAILABLE", "The request was cancelled."],
  // A connection to a service that broke mid-call (the service restarted or crashed).
  [Code.Aborted]: ["AGENT_UNAVAILABLE", "A service connection was interrupted. Retry shortly."],
};

/**
 * Whether a failed call was answered by the service with one of our errors, rather than lost on the way to it
 * (a refused connection, a service that died mid-call, a deadline that ran out with no answer).
 */
export function answeredByService(error: ConnectError): boolean {
  return error.metadata.has(CODE_KEY);
}

/** Turns an AppError into a ConnectError that fromConnectError turns back into the same AppError. */
export function toConnectError(error: AppError): ConnectError {
  const metadata = new Headers({ [CODE_KEY]: error.code });
  if (error.details) metadata.set(DETAILS_KEY, encodeURIComponent(JSON.stringify(error.details)));
  if (error.retryAfterSeconds !== undefined) metadata.set(RETRY_AFTER_KEY, String(error.retryAfterSeconds));
  return new ConnectError(error.message, RPC_CODE[error.code], metadata, undefined, error);
}

/**
 * Turns any error raised by an RPC call into an AppError: ours come back whole; the rest map by RPC code, with
 * INTERNAL_ERROR (and the original kept as cause, for the log) for anything unexpected.
 */
export function fromConnectError(cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  const error = ConnectError.from(cause);
  const code = error.metadata.get(CODE_KEY);
  if (code && isErrorCode(code)) {
    const details = error.metadata.get(DETAILS_KEY);
    const retryAfter = error.metadata.get(RETRY_AFTER_KEY);
    return new AppError(code, error.rawMessage, {
      ...(details ? { details: JSON.parse(decodeURIComponent(details)) as FieldIssue[] } : {}),
      ...(retryAfter ? { retryAfterSeconds: Number(retryAfter) } : {}),
      cause: error,
    });
  }
  const [fallbackCode, message] = FALLBACK[error.code] ?? ["INTERNAL_ERROR", "Internal error."];
  // A service that could not be reached is usually back within a second or two (a restart, a reconnect).
  const retry =
    fallbackCode === "AGENT_UNAVAILABLE" && error.code !== Code.Canceled ? { retryAfterSeconds: 1 } : {};
  return new AppError(fallbackCode, message, { ...retry, cause: error });
}
