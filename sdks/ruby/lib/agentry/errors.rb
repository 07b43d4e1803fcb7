# frozen_string_literal: true

module Agentry
  # Base class of every error this library raises.
  class Error < StandardError; end

  # A request to the API failed. Subclasses tell the status family apart; +code+ is the API's error code
  # (+AGENT_NOT_FOUND+, +INSUFFICIENT_QUOTA+, +AGENT_INACTIVE+, +MODEL_ERROR+, ...), the finer distinction.
  class APIError < Error
    # The HTTP status (Integer); +nil+ when no response was received.
    attr_reader :status
    # The API's error code, e.g. <tt>"RATE_LIMIT_EXCEEDED"</tt>; +nil+ when the response carried none.
    attr_reader :code
    # The request id (+X-Request-Id+), to quote when reporting a problem.
    attr_reader :request_id
    # The field problems of an invalid request: an Array of Agentry::Models::FieldIssue, or +nil+.
    attr_reader :details
    # The response headers, as a Hash of lower-case names to values; +nil+ without a response.
    attr_reader :headers
    # Seconds the server asked to wait before retrying (+Retry-After+), when it said.
    attr_reader :retry_after
    # The error body as received: the parsed JSON, its Hashes with Symbol keys like every Hash this library gives
    # back (<tt>body[:error][:code]</tt>), or the text when it was not JSON.
    attr_reader :body

    def initialize(message = nil, status: nil, code: nil, request_id: nil, details: nil, headers: nil,
                   retry_after: nil, body: nil)
      super(message)
      @status = status
      @code = code
      @request_id = request_id
      @details = details
      @headers = headers
      @retry_after = retry_after
      @body = Model::Types.symbolize(body)
    end
  end

  # 400 +INVALID_REQUEST+, and the other statuses that mean "this request, as sent, will never succeed": 405
  # +METHOD_NOT_ALLOWED+, 413 +PAYLOAD_TOO_LARGE+, 415 +UNSUPPORTED_MEDIA_TYPE+, 422. +details+ names the fields at
  # fault.
  class BadRequestError < APIError; end

  # 401 +UNAUTHORIZED+: the API key is missing, malformed, unknown, revoked or expired.
  class AuthenticationError < APIError; end

  # 403: +FORBIDDEN+ (the key lacks the scope for this operation) or +INSUFFICIENT_QUOTA+ (the account holds its
  # maximum number of agents; retrying will not help).
  class PermissionDeniedError < APIError; end

  # 404: +AGENT_NOT_FOUND+, or +NOT_FOUND+ for an unknown route or API key.
  class NotFoundError < APIError; end

  # 409 +AGENT_INACTIVE+: a message sent to an inactive agent. Activate the agent first.
  # 412 +PRECONDITION_FAILED+: an +if_match:+ update or delete of an agent that changed since; read it again.
  class ConflictError < APIError; end

  # 429 +RATE_LIMIT_EXCEEDED+: a rate or concurrency limit; +retry_after+ says when to try again.
  class RateLimitError < APIError; end

  # 500 and above: +INTERNAL_ERROR+ (500), +MODEL_ERROR+ (502, the model provider refused or failed),
  # +AGENT_UNAVAILABLE+ (503, try again shortly).
  class InternalServerError < APIError; end

  # No response was received: the service could not be reached, the connection broke, or a stream ended before
  # its reply was complete.
  class APIConnectionError < APIError
    def initialize(message = "Connection error.", **rest)
      super
    end
  end

  # No response within the client's +timeout+ (for a stream: no data for that long).
  class APITimeoutError < APIConnectionError
    def initialize(message = "Request timed out.", **rest)
      super
    end
  end

  # The stream was closed by its reader before the reply was complete, so there is no text or final message.
  class APIUserAbortError < APIError
    def initialize(message = "The stream was closed before the reply was complete.", **rest)
      super
    end
  end

  # A webhook delivery did not verify: answer it with a 4xx and do not act on it. +reason+ says why:
  # +:missing_headers+ (+webhook-id+, +webhook-timestamp+ or +webhook-signature+ absent), +:invalid_timestamp+,
  # +:timestamp_too_old+ or +:timestamp_too_new+ (outside the tolerance: a replay, or a clock far off),
  # +:no_signature+ (no +v1+ signature in a readable form), +:signature_mismatch+ (none matches: a wrong secret, or
  # a body changed on the way or re-serialized), +:invalid_payload+ (signed, but not an event).
  class WebhookVerificationError < Error
    # Why, as a Symbol (see the class).
    attr_reader :reason

    def initialize(message = nil, reason: nil)
      super(message)
      @reason = reason
    end
  end

  # @api private
  module Errors
    module_function

    # The error class for an HTTP status (see each class for the statuses and codes it covers).
    def class_for(status)
      case status
      when 400, 405, 413, 415, 422 then BadRequestError
      when 401 then AuthenticationError
      when 403 then PermissionDeniedError
      when 404 then NotFoundError
      when 409, 412 then ConflictError
      when 429 then RateLimitError
      else status >= 500 ? InternalServerError : APIError
      end
    end

    # The typed error of an HTTP error response, from its status, headers and body (parsed JSON or text).
    def from_response(status, headers, body, retry_after)
      inner = body.is_a?(Hash) && body["error"].is_a?(Hash) ? body["error"] : {}
      code = inner["code"].is_a?(String) ? inner["code"] : nil
      request_id = inner["requestId"].is_a?(String) ? inner["requestId"] : headers["x-request-id"]
      detail =
        if inner["message"].is_a?(String) then inner["message"]
        elsif body.is_a?(String) && !body.empty? then body[0, 500]
        else "(no error message)"
        end
      class_for(status).new(
        "#{status}#{code ? " #{code}" : ""}: #{detail}",
        status: status, code: code, request_id: request_id, details: field_issues(inner["details"]),
        headers: headers, retry_after: retry_after, body: body
      )
    end

    # The typed error of a stream's +error+ event: the class of the status its code travels with, as if the
    # failure had come before the stream started. +headers+ are the stream's own (a 200).
    def from_stream_event(data, headers)
      data = {} unless data.is_a?(Hash)
      code = data["code"].is_a?(String) ? data["code"] : "INTERNAL_ERROR"
      message = data["message"].is_a?(String) ? data["message"] : "The stream failed."
      status = ERROR_CODE_STATUS.fetch(code, 500)
      class_for(status).new(
        "#{status} #{code}: #{message}",
        status: status, code: code, request_id: headers["x-request-id"], headers: headers, body: data
      )
    end

    def field_issues(value)
      return nil unless value.is_a?(Array) && value.all? { |item| item.is_a?(Hash) && item["field"].is_a?(String) && item["issue"].is_a?(String) }

      value.map { |item| Models::FieldIssue.from_wire(item) }
    end
  end
end
