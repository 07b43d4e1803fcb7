# frozen_string_literal: true

module Agentry
  # @api private
  # Reading an answer again, with growing pauses, until it is no longer pending (a background message's reply).
  module Polling
    # The first pause, in seconds; each next one is twice as long, up to MAX_POLL_INTERVAL.
    DEFAULT_POLL_INTERVAL = 0.5
    MAX_POLL_INTERVAL = 5.0
    # How long a wait lasts before it gives up, in seconds: longer than a turn with its fallbacks may take.
    DEFAULT_MAX_WAIT = 600.0

    module_function

    # Calls the block until its answer no longer has every attribute value of +pending+ (<tt>{status: "pending"}</tt>)
    # and returns that answer; raises Agentry::APITimeoutError once +max_wait+ seconds have passed.
    def until_done(pending:, poll_interval:, max_wait:, sleeper: method(:sleep))
      raise Error, "poll_interval must be above 0 seconds, got #{poll_interval.inspect}" unless poll_interval.to_f.positive?
      raise Error, "max_wait must be above 0 seconds, got #{max_wait.inspect}" unless max_wait.to_f.positive?

      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + max_wait
      pause = poll_interval.to_f
      longest = [MAX_POLL_INTERVAL, pause].max
      loop do
        answer = yield
        return answer unless pending.all? { |name, value| answer.public_send(name) == value }

        left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
        raise APITimeoutError, "Still pending after #{max_wait} seconds; read it again later." if left <= 0

        sleeper.call([pause, left].min)
        pause = [pause * 2, longest].min
      end
    end
  end
end
