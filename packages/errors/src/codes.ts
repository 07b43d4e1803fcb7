/**
 * The public error codes and the HTTP status each one travels with. This table is the only place that pairs a
 * code with a status; see docs/api/errors-and-status-codes.md, "Status codes per error code".
 */
const STATUS = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  BUDGET_EXCEEDED: 402,
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
  MEMBER_NOT_FOUND: 404,
  BUDGET_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  AGENT_INACTIVE: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PRECONDITION_FAILED: 412,
  CONVERSATION_BUSY: 409,
  MESSAGE_NOT_AWAITING_APPROVAL: 409,
  APPROVAL_EXPIRED: 409,
  MEMBER_EXISTS: 409,
  LAST_OWNER: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  MODEL_ERROR: 502,
  AGENT_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof STATUS;

export const ERROR_CODES = Object.keys(STATUS) as ErrorCode[];

export function httpStatusOf(code: ErrorCode): number {
  return STATUS[code];
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(STATUS, value);
}
