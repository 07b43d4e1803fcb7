# frozen_string_literal: true

# Generated from sdks/openapi.json by sdks/generator (src/ruby.ts) — do not edit.
# Regenerate with: pnpm --filter @agentry/sdk-generator generate

module Agentry
  # The version of the API description (Agentry Agent Management API) this library was generated from.
  API_VERSION = "1.0.0"
  # The address of a service started locally with its defaults.
  DEFAULT_BASE_URL = "http://localhost:8080/v1"

  # The HTTP status each public error code travels with; a stream's `error` event raises the error class
  # of its code's status.
  ERROR_CODE_STATUS = {
    "INVALID_REQUEST" => 400,
    "UNAUTHORIZED" => 401,
    "BUDGET_EXCEEDED" => 402,
    "FORBIDDEN" => 403,
    "INSUFFICIENT_QUOTA" => 403,
    "AGENT_NOT_FOUND" => 404,
    "CONVERSATION_NOT_FOUND" => 404,
    "MESSAGE_NOT_FOUND" => 404,
    "STREAM_NOT_FOUND" => 404,
    "WEBHOOK_NOT_FOUND" => 404,
    "DELIVERY_NOT_FOUND" => 404,
    "SECRET_NOT_FOUND" => 404,
    "API_KEY_NOT_FOUND" => 404,
    "MEMORY_NOT_FOUND" => 404,
    "DOCUMENT_NOT_FOUND" => 404,
    "SCHEDULE_NOT_FOUND" => 404,
    "MEMBER_NOT_FOUND" => 404,
    "BUDGET_NOT_FOUND" => 404,
    "NOT_FOUND" => 404,
    "AGENT_INACTIVE" => 409,
    "IDEMPOTENCY_KEY_IN_USE" => 409,
    "PRECONDITION_FAILED" => 412,
    "CONVERSATION_BUSY" => 409,
    "MESSAGE_NOT_AWAITING_APPROVAL" => 409,
    "MEMBER_EXISTS" => 409,
    "LAST_OWNER" => 409,
    "PAYLOAD_TOO_LARGE" => 413,
    "UNSUPPORTED_MEDIA_TYPE" => 415,
    "IDEMPOTENCY_KEY_REUSED" => 422,
    "RATE_LIMIT_EXCEEDED" => 429,
    "INTERNAL_ERROR" => 500,
    "MODEL_ERROR" => 502,
    "AGENT_UNAVAILABLE" => 503
  }.freeze
end
