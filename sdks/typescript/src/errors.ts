/** One problem with one field of a request, e.g. `{ field: "bio[2]", issue: "must not be empty" }`. */
export interface FieldIssue {
  field: string;
  issue: string;
}

/** Base class of every error this SDK throws. */
export class AgentryError extends Error {
  override name = "AgentryError";
}

/**
 * Thrown by `messages.send` when the turn paused before tool calls that wait for a person's approval (the agent's
 * plugin item sets `requireApproval`): not a failure, the message waits, `requires_action`. Answer the calls with
 * `messages.approve(agentId, messageId, …)`; the reply then comes in the background (`waitForBackground`).
 */
export class ApprovalRequiredError extends AgentryError {
  override name = "ApprovalRequiredError";
  constructor(
    /** The paused message (the id its reply will carry). */
    readonly messageId: string,
    /** The calls to approve or refuse. */
    readonly pendingToolCalls: { id: string; tool: string; arguments: string }[],
  ) {
    super(`Message ${messageId} paused for tool approval; answer it with messages.approve().`);
  }
}

interface APIErrorInit {
  status?: number | undefined;
  code?: string | undefined;
  requestId?: string | undefined;
  details?: FieldIssue[] | undefined;
  headers?: Headers | undefined;
  retryAfter?: number | undefined;
  body?: unknown;
  cause?: unknown;
}

/**
 * A request to the API failed. Subclasses tell the status family apart; `code` is the API's error code
 * (`AGENT_NOT_FOUND`, `INSUFFICIENT_QUOTA`, `AGENT_INACTIVE`, `MODEL_ERROR`, ...), the finer distinction.
 */
export class APIError extends AgentryError {
  override name = "APIError";
  /** The HTTP status; `undefined` when no response was received. */
  readonly status: number | undefined;
  /** The API's error code, e.g. `RATE_LIMIT_EXCEEDED`. */
  readonly code: string | undefined;
  /** The request id (`X-Request-Id`), to quote when reporting a problem. */
  readonly requestId: string | undefined;
  /** Field problems of an invalid request, e.g. `[{ field: "name", issue: "must not be empty" }]`. */
  readonly details: FieldIssue[] | undefined;
  /** The response headers. */
  readonly headers: Headers | undefined;
  /** Seconds the server asked to wait before retrying (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;
  /** The parsed error body, as received. */
  readonly body: unknown;

  constructor(message: string, init: APIErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
    this.headers = init.headers;
    this.retryAfter = init.retryAfter;
    this.body = init.body;
  }
}

/**
 * 400 `INVALID_REQUEST`, and the other statuses that mean "this request, as sent, will never succeed": 405
 * `METHOD_NOT_ALLOWED`, 413 `PAYLOAD_TOO_LARGE`, 415 `UNSUPPORTED_MEDIA_TYPE`, 422. `status` and `code` tell
 * them apart; `details` names the fields at fault.
 */
export class BadRequestError extends APIError {
  override name = "BadRequestError";
}

/** 401 `UNAUTHORIZED`: the API key is missing, malformed, unknown, revoked or expired. */
export class AuthenticationError extends APIError {
  override name = "AuthenticationError";
}

/**
 * 403: `FORBIDDEN` (the key lacks the scope for this operation) or `INSUFFICIENT_QUOTA` (the account holds its
 * maximum number of agents, or of webhook endpoints; retrying will not help).
 */
export class PermissionDeniedError extends APIError {
  override name = "PermissionDeniedError";
}

/**
 * 404: `AGENT_NOT_FOUND`, `CONVERSATION_NOT_FOUND`, `MESSAGE_NOT_FOUND`, `WEBHOOK_NOT_FOUND`,
 * `DELIVERY_NOT_FOUND`, or `NOT_FOUND` for an unknown route or API key. Another account's resource is answered
 * like a missing one.
 */
export class NotFoundError extends APIError {
  override name = "NotFoundError";
}

/**
 * 409: `AGENT_INACTIVE`, a message sent to an inactive agent (activate the agent first); `CONVERSATION_BUSY`, a
 * message sent with `onConflict: "reject"` while its conversation has one in progress (send it again once that
 * one has ended, or with `enqueue` or `interrupt`); `IDEMPOTENCY_KEY_IN_USE`. 412 `PRECONDITION_FAILED`:
 * an `ifMatch` update or delete of an agent that changed since; read it again.
 */
export class ConflictError extends APIError {
  override name = "ConflictError";
}

/** 429 `RATE_LIMIT_EXCEEDED`: a rate or concurrency limit; `retryAfter` says when to try again. */
export class RateLimitError extends APIError {
  override name = "RateLimitError";
}

/**
 * 500 and above: `INTERNAL_ERROR` (500), `MODEL_ERROR` (502, the model provider refused or failed),
 * `AGENT_UNAVAILABLE` (503, try again shortly).
 */
export class InternalServerError extends APIError {
  override name = "InternalServerError";
}

/** No response was received: the server could not be reached or the connection broke. */
export class APIConnectionError extends APIError {
  override name = "APIConnectionError";

  constructor(message = "Connection error.", cause?: unknown) {
    super(message, { cause });
  }
}

/** No response within the client's `timeout` (or, for a stream, no data for that long). */
export class APITimeoutError extends APIConnectionError {
  override name = "APITimeoutError";

  constructor(message = "Request timed out.", cause?: unknown) {
    super(message, cause);
  }
}

/** The caller aborted the request (its `AbortSignal`, or `stream.abort()`). */
export class APIUserAbortError extends APIError {
  override name = "APIUserAbortError";

  constructor(message = "Request was aborted.") {
    super(message);
  }
}

/** Why a webhook delivery was refused; see `WebhookVerificationError`. */
export type WebhookVerificationFailure =
  | "missing_headers"
  | "invalid_timestamp"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "no_signature"
  | "signature_mismatch"
  | "invalid_payload";

/**
 * A webhook delivery did not verify: answer it with a 4xx and do not act on it. `reason` says why:
 * `missing_headers` (`webhook-id`, `webhook-timestamp` or `webhook-signature` absent), `invalid_timestamp`,
 * `timestamp_too_old` or `timestamp_too_new` (outside the tolerance: a replay, or a clock far off),
 * `no_signature` (no `v1` signature in a readable form), `signature_mismatch` (none of the signatures matches:
 * a wrong secret, or a body changed on the way, or re-serialized), `invalid_payload` (signed, but not an event).
 */
export class WebhookVerificationError extends AgentryError {
  override name = "WebhookVerificationError";
  readonly reason: WebhookVerificationFailure;

  constructor(reason: WebhookVerificationFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The HTTP status each public error code travels with (the API's "status codes per error code" table). */
export const ERROR_CODE_STATUS: Readonly<Record<string, number>> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_QUOTA: 403,
  AGENT_NOT_FOUND: 404,
  CONVERSATION_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  STREAM_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  SECRET_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  MEMORY_NOT_FOUND: 404,
  DOCUMENT_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  AGENT_INACTIVE: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PRECONDITION_FAILED: 412,
  CONVERSATION_BUSY: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  MODEL_ERROR: 502,
  AGENT_UNAVAILABLE: 503,
};

type APIErrorClass = new (message: string, init: APIErrorInit) => APIError;

/** The error class for an HTTP status (see each class for the statuses and codes it covers). */
export function errorClassFor(status: number): APIErrorClass {
  if (status === 400 || status === 405 || status === 413 || status === 415 || status === 422)
    return BadRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409 || status === 412) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return InternalServerError;
  return APIError;
}

interface ErrorEnvelope {
  error?: { code?: unknown; message?: unknown; details?: unknown; requestId?: unknown };
}

function isFieldIssueList(value: unknown): value is FieldIssue[] {
  return (
    Array.isArray(value) &&
    value.every(
      (item) =>
        typeof item === "object" &&
        item !== null &&
        typeof (item as FieldIssue).field === "string" &&
        typeof (item as FieldIssue).issue === "string",
    )
  );
}

/** Builds the typed error for an HTTP error response from its status, headers and (possibly non-JSON) body. */
export function errorFromResponse(
  status: number,
  headers: Headers,
  body: unknown,
  retryAfter: number | undefined,
): APIError {
  const envelope = (typeof body === "object" && body !== null ? body : {}) as ErrorEnvelope;
  const inner = envelope.error ?? {};
  const code = typeof inner.code === "string" ? inner.code : undefined;
  const requestId =
    (typeof inner.requestId === "string" ? inner.requestId : undefined) ??
    headers.get("x-request-id") ??
    undefined;
  const detail =
    typeof inner.message === "string"
      ? inner.message
      : typeof body === "string" && body !== ""
        ? body.slice(0, 500)
        : "(no error message)";
  const ErrorClass = errorClassFor(status);
  return new ErrorClass(`${status}${code ? ` ${code}` : ""}: ${detail}`, {
    status,
    code,
    requestId,
    details: isFieldIssueList(inner.details) ? inner.details : undefined,
    headers,
    retryAfter,
    body,
  });
}

/**
 * Builds the typed error for a stream's `error` event: the class of the status its code travels with, as if the
 * failure had come before the stream started. The stream's own response was a 200, so `headers` are its headers.
 */
export function errorFromStreamEvent(data: unknown, headers: Headers): APIError {
  const event = (typeof data === "object" && data !== null ? data : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const code = typeof event.code === "string" ? event.code : "INTERNAL_ERROR";
  const message = typeof event.message === "string" ? event.message : "The stream failed.";
  const status = ERROR_CODE_STATUS[code] ?? 500;
  const ErrorClass = errorClassFor(status);
  return new ErrorClass(`${status} ${code}: ${message}`, {
    status,
    code,
    requestId: headers.get("x-request-id") ?? undefined,
    headers,
    body: data,
  });
}
