# frozen_string_literal: true

module Agentry
  # The Agentry API client.
  #
  #   client = Agentry::Client.new # AGENTRY_API_KEY, AGENTRY_BASE_URL
  #   agent = client.agents.create(name: "Ada", bio: ["Counts things"])
  #   reply = client.agents.messages.create(agent.id, text: "Hello!", user_id: "u1")
  #   puts reply.text
  #
  # A client is safe to share between threads: each call opens its own connection.
  class Client
    include Resources::Accessors

    # The recommended client timeout of the API, in seconds.
    DEFAULT_TIMEOUT = 30
    DEFAULT_MAX_RETRIES = 2
    # No wait before a retry is longer than this by default (seconds); the API's rate-limit window is one minute.
    DEFAULT_MAX_RETRY_DELAY = 60

    # The API's address in use, without a trailing slash.
    attr_reader :base_url
    # Seconds each attempt may take.
    attr_reader :timeout
    # Retries per call.
    attr_reader :max_retries
    # Longest wait before a retry, in seconds.
    attr_reader :max_retry_delay

    # Creates a client. Each setting given as +nil+ falls back to the environment, then to its default.
    #
    # - +api_key+: sent as <tt>Authorization: Bearer <key></tt>; default +AGENTRY_API_KEY+. Required.
    # - +base_url+: the API's address, ending in +/v1+; default +AGENTRY_BASE_URL+, else DEFAULT_BASE_URL.
    # - +max_retries+: how many times a failed attempt is retried (2); 0 disables retries.
    # - +timeout+: seconds each attempt may take before it fails with APITimeoutError (30). For a stream: until it
    #   starts, then each silence between two chunks.
    # - +max_retry_delay+: the longest wait before a retry, in seconds (60). A longer +Retry-After+ is cut to this;
    #   the error finally raised still carries the server's +retry_after+.
    # - +default_headers+: headers sent with every request.
    #
    # Raises Agentry::Error when there is no API key, or a setting is out of range.
    def initialize(api_key: nil, base_url: nil, max_retries: DEFAULT_MAX_RETRIES, timeout: DEFAULT_TIMEOUT,
                   max_retry_delay: DEFAULT_MAX_RETRY_DELAY, default_headers: {})
      api_key ||= env("AGENTRY_API_KEY")
      if api_key.nil? || api_key.empty?
        raise Error, "No API key: pass api_key: to Agentry::Client.new or set the AGENTRY_API_KEY environment variable."
      end

      @base_url = (base_url || env("AGENTRY_BASE_URL") || DEFAULT_BASE_URL).sub(%r{/+\z}, "")
      unless @base_url.match?(%r{\Ahttps?://[^/]}i)
        raise Error, "base_url must be an http(s) URL such as #{DEFAULT_BASE_URL}; got '#{@base_url}'."
      end

      @timeout = check("timeout", timeout.nil? ? DEFAULT_TIMEOUT : timeout, minimum: 0, exclusive: true)
      @max_retries = check("max_retries", max_retries.nil? ? DEFAULT_MAX_RETRIES : max_retries, minimum: 0,
                                                                                                  integer: true)
      @max_retry_delay = check("max_retry_delay", max_retry_delay.nil? ? DEFAULT_MAX_RETRY_DELAY : max_retry_delay,
                               minimum: 0)
      @settings = { api_key: api_key, base_url: base_url, max_retries: max_retries, timeout: timeout,
                    max_retry_delay: max_retry_delay, default_headers: default_headers }
      @transport = Transport.new(
        api_key: api_key, base_url: @base_url, timeout: @timeout, max_retries: @max_retries,
        max_retry_delay: @max_retry_delay,
        default_headers: default_headers.to_h { |name, value| [name.to_s, value.to_s] }
      )
    end

    # The rate-limit state (+X-RateLimit-*+) of the most recent response that reported it, errors included, as an
    # Agentry::RateLimit (+limit+, +remaining+, +reset_at+); +nil+ before the first. It describes the bucket of
    # that request with the least left.
    def last_rate_limit
      @transport.last_rate_limit
    end

    # Verification of webhook deliveries: the Agentry::Webhooks module, which needs no client.
    def webhooks
      Webhooks
    end

    # A new client with these settings changed and the others kept (its rate-limit state starts empty).
    def with_options(**settings)
      self.class.new(**@settings.merge(settings))
    end

    # Shows the settings, never the API key.
    def inspect
      "#<#{self.class.name} base_url=#{@base_url.inspect} timeout=#{@timeout} max_retries=#{@max_retries}>"
    end
    alias to_s inspect

    private

    def env(name)
      value = ENV.fetch(name, nil)&.strip
      value.nil? || value.empty? ? nil : value
    end

    def check(name, value, minimum:, integer: false, exclusive: false)
      valid = integer ? value.is_a?(Integer) : value.is_a?(Numeric)
      valid &&= exclusive ? value > minimum : value >= minimum
      valid &&= value.to_f.finite?
      return value if valid

      raise Error, "#{name} must be #{integer ? 'an integer' : 'a number'} #{exclusive ? 'above' : 'of at least'} " \
                   "#{minimum}; got #{value.inspect}."
    end
  end
end
