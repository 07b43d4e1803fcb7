# frozen_string_literal: true

require "time"

module Agentry
  # When a failed attempt may be retried, and how long to wait first. Pure functions, so the policy can be read
  # and tested in one place.
  #
  # How safe an operation is to send twice (its +safety+):
  # - +:idempotent+: GET, PATCH, DELETE. Sending again has the same effect (a repeated DELETE may answer 404).
  # - +:unsafe+: creating an agent or an API key. After a timeout or a 5xx the server may have created it, and a
  #   retry could create a second one.
  # - +:message+: sending a message. The exchange is stored only when the reply is complete, so a 503
  #   (+AGENT_UNAVAILABLE+) left nothing behind; other failures after the request reached the server are not
  #   retried.
  #
  # What went wrong with one attempt (its +failure+), a Hash:
  # - <tt>{kind: :status, status: 503, code: "AGENT_UNAVAILABLE"}</tt>
  # - <tt>{kind: :connection, unsent: true}</tt>: +unsent+ when the connection was never established, so the
  #   server saw nothing
  # - <tt>{kind: :timeout}</tt>
  module RetryPolicy
    # The first wait, doubled after each retry up to MAX_BACKOFF, in seconds.
    INITIAL_BACKOFF = 0.5
    MAX_BACKOFF = 8.0
    # Error codes that will not fix themselves, whatever their status.
    PERMANENT_CODES = %w[AGENT_INACTIVE INSUFFICIENT_QUOTA].freeze

    module_function

    # Whether a failed attempt is worth retrying.
    #
    # - 429 is always retried: the rate limiter refuses before the operation runs, so nothing happened.
    # - A connection that was never established is always retried, for the same reason.
    # - 408 means the server gave up waiting for the request, so it was not processed: always retried.
    # - 409 is retried except +AGENT_INACTIVE+, which only a PATCH of the agent's status can clear.
    # - Other connection failures, timeouts and 5xx are retried for idempotent operations only; for messages,
    #   503 too.
    def retry?(failure, safety)
      case failure[:kind]
      when :connection then failure[:unsent] || safety == :idempotent
      when :timeout then safety == :idempotent
      else
        status = failure[:status]
        return false if PERMANENT_CODES.include?(failure[:code])
        return true if [429, 408].include?(status)
        return safety == :idempotent if status == 409
        return safety != :unsafe if status == 503
        return safety == :idempotent if status >= 500

        false
      end
    end

    # Seconds to wait before retry number +retry+ (0 for the first). +Retry-After+ wins when the server sent it;
    # otherwise exponential backoff from 0.5 s to 8 s, less up to 25 % jitter so that clients refused together do
    # not come back together. Either way the wait is capped at +max_delay+: a wait cut short costs one more
    # refused request, while a concurrency slot often frees before the server's estimate.
    def delay(retry_number, retry_after, max_delay, random: Kernel.method(:rand))
      wanted =
        if retry_after
          retry_after.to_f
        else
          [INITIAL_BACKOFF * (2**retry_number), MAX_BACKOFF].min * (1 - (0.25 * random.call))
        end
      wanted.clamp(0.0, max_delay.to_f)
    end

    # +Retry-After+ in seconds: a number of seconds or an HTTP date. Unparseable or negative values give +nil+.
    def parse_retry_after(value, now: Time.now)
      return nil if value.nil?

      text = value.strip
      return nil if text.empty?
      return (text.include?(".") ? Float(text) : Integer(text, 10)) if text.match?(/\A\d+(\.\d+)?\z/)
      # An HTTP date names its day and month.
      return nil unless text.match?(/[A-Za-z]/)

      seconds = (Time.httpdate(text) - now).ceil
      seconds.negative? ? 0 : seconds
    rescue ArgumentError
      nil
    end
  end
end
