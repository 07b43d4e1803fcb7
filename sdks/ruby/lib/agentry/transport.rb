# frozen_string_literal: true

require "json"
require "net/http"
require "openssl"
require "securerandom"
require "uri"
require "zlib"

module Agentry
  # The rate-limit state (+X-RateLimit-*+) of a response: the bucket of that request with the least left.
  # +reset_at+ is a Time.
  RateLimit = Struct.new(:limit, :remaining, :reset_at, keyword_init: true)

  # @api private
  # Sends requests: headers, timeouts, retries with backoff, error mapping and the rate-limit state. The generated
  # resources call it; nothing else should.
  class Transport
    # Failures of the network below HTTP; Timeout::Error (Net::OpenTimeout, ReadTimeout, WriteTimeout) apart.
    NETWORK_ERRORS = [
      SystemCallError, IOError, SocketError, Net::ProtocolError, Net::HTTPBadResponse, OpenSSL::SSL::SSLError,
      Zlib::Error
    ].freeze
    # The per-call options every operation takes as +request_options:+ (see Agentry::Client).
    REQUEST_OPTIONS = %i[timeout max_retries headers extra_body extra_query idempotency_key].freeze

    Outcome = Struct.new(:value, :error, :failure, :retry_after)

    attr_reader :last_rate_limit, :timeout

    def initialize(api_key:, base_url:, timeout:, max_retries:, max_retry_delay:, default_headers:,
                   sleeper: ->(seconds) { sleep(seconds) })
      @api_key = api_key
      @base_url = base_url
      @timeout = timeout
      @max_retries = max_retries
      @max_retry_delay = max_retry_delay
      @default_headers = default_headers
      @sleeper = sleeper
      @last_rate_limit = nil
    end

    # Performs a JSON request and returns the parsed success body (the <tt>{"success", "data", ...}</tt> envelope).
    def json(method, path, query: nil, body: nil, options: nil)
      options = check_options(options)
      body = with_extra_body(body, options)
      uri = url(path, query, options)
      send_with_retries(method, options) do |timeout, headers|
        json_attempt(method, uri, body, timeout, headers)
      end
    end

    # The media types of answers read as they arrive.
    EVENT_STREAM = "text/event-stream"
    NDJSON = "application/x-ndjson"
    MEDIA_NAMES = { EVENT_STREAM => "an event stream", NDJSON => "NDJSON (application/x-ndjson)" }.freeze

    # Starts a request whose answer is read as it arrives (+text/event-stream+, or +accept+), retrying failures
    # before the answer starts, then yields the response and its Net::HTTP connection to the block, which reads
    # the body. Returns what the block returns. The connection is closed when the block ends, however it ends; the
    # body is never retried.
    def stream(method, path, body: nil, query: nil, options: nil, accept: EVENT_STREAM, &consumer)
      options = check_options(options)
      body = with_extra_body(body, options)
      uri = url(path, query, options)
      send_with_retries(method, options) do |timeout, headers|
        stream_attempt(method, uri, body, timeout, headers, accept, &consumer)
      end
    end

    private

    # Runs attempts until one succeeds, one fails for good, or the retries are spent. A write's attempts share one
    # +Idempotency-Key+ (the caller's +idempotency_key:+, or a new random one), so the service runs it once however
    # many of them reach it; the caller's own +headers:+ still win.
    def send_with_retries(method, options)
      max_retries = options[:max_retries] || @max_retries
      timeout = options[:timeout] || @timeout
      headers = {}
      unless method.to_s.casecmp?("get")
        headers["idempotency-key"] = (options[:idempotency_key] || SecureRandom.uuid).to_s
      end
      headers = headers.merge(@default_headers).merge(options[:headers].to_h { |name, value| [name.to_s, value.to_s] })
      retry_number = 0
      loop do
        outcome = yield(timeout, headers)
        return outcome.value unless outcome.error
        raise outcome.error if retry_number >= max_retries || !RetryPolicy.retry?(outcome.failure)

        @sleeper.call(RetryPolicy.delay(retry_number, outcome.retry_after, @max_retry_delay))
        retry_number += 1
      end
    end

    def check_options(options)
      return {} if options.nil?
      raise ArgumentError, "request_options must be a Hash" unless options.is_a?(Hash)

      unknown = options.keys - REQUEST_OPTIONS
      raise ArgumentError, "unknown request option #{unknown.first.inspect}; known: #{REQUEST_OPTIONS.join(', ')}" if unknown.any?

      options
    end

    def json_attempt(method, uri, body, timeout, extra_headers)
      deadline = now + timeout
      http, failure = connect(uri, timeout)
      return failure if failure

      outcome = nil
      begin
        set_timeouts(http, deadline - now)
        http.request(build_request(method, uri, body, "application/json", extra_headers)) do |response|
          record_rate_limit(response)
          text = read_within(response, http, deadline)
          outcome = json_outcome(response, text)
        end
      rescue Timeout::Error => e
        outcome = timeout_failure(timeout, e)
      rescue *NETWORK_ERRORS => e
        outcome = connection_failure(e)
      ensure
        close(http)
      end
      outcome
    end

    def stream_attempt(method, uri, body, timeout, extra_headers, accept)
      deadline = now + timeout
      http, failure = connect(uri, timeout)
      return failure if failure

      outcome = nil
      started = false
      begin
        set_timeouts(http, deadline - now)
        request = build_request(method, uri, body, accept, extra_headers)
        # A compressed stream could be held back by the decompressor; events must arrive as they are sent.
        request["accept-encoding"] = "identity"
        http.request(request) do |response|
          record_rate_limit(response)
          if response.is_a?(Net::HTTPSuccess) && media_type?(response, accept)
            started = true
            # From here each wait for data may take the whole timeout: a stream is timed by its silences.
            http.read_timeout = timeout
            outcome = Outcome.new(yield(response, http))
          else
            outcome = stream_refused(response, read_within(response, http, deadline), accept)
          end
        end
      rescue Timeout::Error => e
        raise if started

        outcome = timeout_failure(timeout, e)
      rescue *NETWORK_ERRORS => e
        raise if started

        outcome = connection_failure(e)
      ensure
        close(http)
      end
      outcome
    end

    # Opens the connection; a failure here means the request was never sent.
    def connect(uri, timeout)
      http = Net::HTTP.new(uri.hostname, uri.port)
      http.use_ssl = uri.scheme == "https"
      http.open_timeout = timeout
      # Net::HTTP would otherwise resend some requests by itself, outside this policy.
      http.max_retries = 0
      http.start
      [http, nil]
    rescue Timeout::Error => e
      [nil, Outcome.new(nil, APITimeoutError.new("Could not connect within #{seconds(timeout)}: #{e.message}"),
                        { kind: :connection })]
    rescue *NETWORK_ERRORS => e
      [nil, Outcome.new(nil, APIConnectionError.new("Could not connect: #{describe(e)}"),
                        { kind: :connection })]
    end

    def set_timeouts(http, remaining)
      raise Net::WriteTimeout, "no time left" if remaining <= 0

      http.read_timeout = remaining
      http.write_timeout = remaining
    end

    # Reads the whole body, within the attempt's deadline rather than a fresh timeout per read.
    def read_within(response, http, deadline)
      text = +""
      response.read_body do |chunk|
        text << chunk
        remaining = deadline - now
        raise Net::ReadTimeout, "the body took too long" if remaining <= 0

        http.read_timeout = remaining
      end
      text.force_encoding(Encoding::UTF_8)
    end

    def build_request(method, uri, body, accept, extra_headers)
      request = Net::HTTP.const_get(method.to_s.capitalize, false).new(uri.request_uri)
      request["accept"] = accept
      request["authorization"] = "Bearer #{@api_key}"
      request["user-agent"] = "agentry-ruby/#{VERSION}"
      if !body.nil?
        request["content-type"] = "application/json"
        request.body = JSON.generate(body)
      elsif request.request_body_permitted?
        # A POST without a body (rotate a secret, send a test event) is sent empty, as JSON rather than as the
        # form Net::HTTP would otherwise name.
        request["content-type"] = "application/json"
        request.body = ""
      end
      extra_headers.each { |name, value| request[name] = value }
      request
    end

    def json_outcome(response, text)
      return status_failure(response, text) unless response.is_a?(Net::HTTPSuccess)

      parsed = parse_json(text)
      unless parsed.is_a?(Hash)
        raise APIError.new("#{response.code}: the response is not JSON.", status: response.code.to_i,
                                                                          request_id: response["x-request-id"],
                                                                          headers: headers_of(response), body: text)
      end
      Outcome.new(parsed)
    end

    def stream_refused(response, text, accept)
      return status_failure(response, text) unless response.is_a?(Net::HTTPSuccess)

      raise APIError.new("#{response.code}: expected #{MEDIA_NAMES[accept]}, got '#{response['content-type']}'.",
                         status: response.code.to_i, request_id: response["x-request-id"],
                         headers: headers_of(response), body: parse_json(text) || text)
    end

    def status_failure(response, text)
      retry_after = RetryPolicy.parse_retry_after(response["retry-after"])
      error = Errors.from_response(response.code.to_i, headers_of(response), parse_json(text) || text, retry_after)
      Outcome.new(nil, error, { kind: :status, status: error.status, code: error.code }, retry_after)
    end

    def timeout_failure(timeout, cause)
      Outcome.new(nil, APITimeoutError.new("Request timed out after #{seconds(timeout)} (#{cause.message})."),
                  { kind: :timeout })
    end

    def connection_failure(cause)
      Outcome.new(nil, APIConnectionError.new("Connection error: #{describe(cause)}"),
                  { kind: :connection })
    end

    def record_rate_limit(response)
      limit, remaining, reset = %w[x-ratelimit-limit x-ratelimit-remaining x-ratelimit-reset].map do |name|
        Float(response[name], exception: false) if response[name]
      end
      return unless limit && remaining && reset

      @last_rate_limit = RateLimit.new(limit: integral(limit), remaining: integral(remaining), reset_at: Time.at(reset))
    end

    def integral(number)
      number == number.floor ? number.to_i : number
    end

    # Fields this version of the library does not know yet, sent as given (+extra_body:+).
    def with_extra_body(body, options)
      extra = options[:extra_body]
      return body if extra.nil?

      (body || {}).merge(Model::Types.to_wire(extra.to_h))
    end

    def url(path, query, options)
      query = (query || {}).merge(options[:extra_query].to_h)
      pairs = query.reject { |_, value| value.nil? }.map { |name, value| [name.to_s, query_text(value)] }
      URI("#{@base_url}#{path}#{pairs.empty? ? '' : "?#{URI.encode_www_form(pairs)}"}")
    end

    # A query value as sent: a list as one comma-separated value (<tt>group_by: %w[agentId model]</tt> is
    # <tt>groupBy=agentId,model</tt>), a Time in ISO 8601.
    def query_text(value)
      case value
      when Array then value.map { |item| query_text(item) }.join(",")
      when Time then value.getutc.iso8601(3)
      else value.to_s
      end
    end

    def headers_of(response)
      response.each_header.to_h
    end

    def media_type?(response, type)
      response["content-type"].to_s.split(";").first.to_s.strip.downcase == type
    end

    def parse_json(text)
      return nil if text.strip.empty?

      JSON.parse(text)
    rescue JSON::ParserError
      nil
    end

    def close(http)
      http.finish if http&.started?
    rescue IOError, SystemCallError
      nil
    end

    def describe(error)
      "#{error.message} (#{error.class})"
    end

    def seconds(value)
      "#{value} s"
    end

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
