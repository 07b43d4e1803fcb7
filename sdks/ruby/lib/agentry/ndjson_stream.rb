# frozen_string_literal: true

require "json"

module Agentry
  # An answer of one JSON object per line (+application/x-ndjson+), such as a user's export, read line by line as
  # it arrives: memory stays flat whatever its size. Nothing is sent until it is read: iterate it (+each+ with a
  # block, or any Enumerable method: +map+, +first+, +lazy+ ...). It is Enumerable once: the request is sent when
  # iteration starts and its items cannot be read twice.
  #
  #   client.users.export("user-42").each { |message| puts "#{message.agent_id} #{message.role}: #{message.text}" }
  #   File.open("user-42.ndjson", "w") do |file|
  #     client.users.export("user-42") { |message| file.puts(JSON.generate(message.to_wire)) }
  #   end
  #
  # A failure before the answer starts (400, 404, 429, ...) is raised like any call's error, after the retries
  # that are safe. Once started, it is never retried: an answer cut short (a broken connection, or a body that
  # ends in the middle of a line) raises APIConnectionError after the items that arrived whole; ask again.
  # Leaving the loop early (+break+, an exception, or #close) closes the connection. An answer silent for longer
  # than the client's +timeout+ raises APITimeoutError.
  class NDJSONStream
    include Enumerable

    # The request id (+X-Request-Id+) once the response has arrived.
    attr_reader :request_id

    # @api private
    # +item_type+: the type of each line (see Agentry::Model::Types). +open+ starts the request and yields the
    # response and its connection (Transport#stream).
    def initialize(item_type:, timeout:, &open)
      @item_type = item_type
      @timeout = timeout
      @open = open
      @consumed = false
      @closed = false
      @http = nil
    end

    # Yields each item in order (an Enumerator without a block). Returns +self+.
    def each(&block)
      return enum_for(:each) unless block
      raise Error, "An NDJSONStream can be read once." if @consumed

      @consumed = true
      read(&block)
      self
    end

    # Ends the answer and closes its connection, from inside the loop or from another thread; the loop then ends
    # quietly.
    def close
      @closed = true
      @consumed = true
      http = @http
      http.finish if http&.started?
    rescue IOError, SystemCallError
      nil
    end

    private

    def read(&block)
      in_caller = false
      catch(:stop) do
        @open.call do |response, http|
          @http = http
          @request_id = response["x-request-id"]
          headers = response.each_header.to_h
          rest = String.new(encoding: Encoding::BINARY)
          response.read_body do |chunk|
            rest << chunk.b
            while (index = rest.index("\n"))
              line = rest.slice!(0, index + 1).force_encoding(Encoding::UTF_8).strip
              next if line.empty?

              item = decode(line, headers)
              throw :stop if @closed

              in_caller = true
              block.call(item)
              in_caller = false
              throw :stop if @closed
            end
          end
          raise APIConnectionError, "The answer ended in the middle of a line: it was cut short. Ask again." \
            unless rest.strip.empty?
        end
      end
    rescue Timeout::Error, *Transport::NETWORK_ERRORS => e
      raise if in_caller
      return if @closed

      raise APITimeoutError, "The answer sent nothing for #{@timeout} s." if e.is_a?(Timeout::Error)

      raise APIConnectionError, "The answer broke off: #{e.message} (#{e.class}). Ask again."
    end

    def decode(line, headers)
      data = JSON.parse(line)
      Model::Types.decode(@item_type, data)
    rescue JSON::ParserError
      raise APIError.new("A line of the answer is not JSON.", headers: headers, body: line)
    end
  end
end
