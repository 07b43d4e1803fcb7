# frozen_string_literal: true

require "time"

module Agentry
  # When a failed attempt may be retried, and how long to wait first. Pure functions, so the policy can be read
  # and tested in one place.
  #
  # Every call may be sent again: a read changes nothing, and every write (POST, PATCH, DELETE) carries an
  # +Idempotency-Key+, the same on each of its attempts, so the service runs it once and answers a repeat with the
  # first answer. Which failures are worth a retry is therefore the same for every operation.
  #
  # What went wrong with one attempt (its +failure+), a Hash:
  # - <tt>{kind: :status, status: 503, code: "AGENT_UNAVAILABLE"}</tt>
  # - <tt>{kind: :connection}</tt>: the connection could not be made, or broke
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
    # - Connection failures and timeouts are: the request may not have arrived, and if it did, the retry gets its
    #   answer.
    # - 408, 429 (the rate limiter refuses before the operation runs) and 5xx are.
    # - 409 is (+IDEMPOTENCY_KEY_IN_USE+: the first attempt still runs; its +Retry-After+ says when to come back),
    #   but not +AGENT_INACTIVE+, which only a PATCH of the agent's status can clear.
    # - Other 4xx are final: +INSUFFICIENT_QUOTA+, and +IDEMPOTENCY_KEY_REUSED+ (a key given with another request).
    def retry?(failure)
      return true unless failure[:kind] == :status
      return false if PERMANENT_CODES.include?(failure[:code])

      status = failure[:status]
      [408, 409, 429].include?(status) || status >= 500
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
