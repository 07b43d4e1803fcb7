# frozen_string_literal: true

require "json"

module Agentry
  # One event of a streamed reply: +type+ (<tt>"message.started"</tt>, <tt>"message.delta"</tt>,
  # <tt>"tool.call"</tt>, <tt>"tool.result"</tt>, <tt>"message.completed"</tt>), +id+ (the SSE +id:+ field, its
  # sequence number as a String) and +data+, a model (Models::MessageStarted, Models::MessageDelta,
  # Models::ToolCallStarted, Models::ToolCall, Models::Reply). Works with pattern matching:
  #
  #   case event
  #   in {type: "message.delta", data: {text:}} then print text
  #   in {type: "message.completed", data: reply} then puts "\n#{reply.usage.total_tokens} tokens"
  #   else nil
  #   end
  StreamEvent = Struct.new(:type, :id, :data, keyword_init: true) do
    # The event as the API's JSON: <tt>{"type", "id", "data"}</tt>.
    def to_wire
      { "type" => type, "id" => id, "data" => Model::Types.to_wire(data) }
    end
  end

  # A reply streamed as it is written. Nothing is sent until it is read: iterate it (+each+ with a block, or any
  # Enumerable method: +map+, +lazy+, +each_with_object+ ...), or ask for #text or #final_message. It is Enumerable
  # once: the request is sent when iteration starts and its events cannot be read twice; #text and
  # #final_message still answer afterwards.
  #
  #   stream = client.agents.messages.stream(agent_id, text: "Tell me a story")
  #   stream.each { |event| print event.data.text if event.type == "message.delta" }
  #   stream.final_message.usage.total_tokens
  #
  # A failure before the stream starts (404, 409, 429, ...) is raised like any call's error, after the retries
  # that are safe. A failure after it started (the +error+ event) raises the error class its code has as an HTTP
  # status, e.g. InternalServerError with code +AGENT_UNAVAILABLE+, and is never retried. A connection that
  # drops, or stays silent for longer than the client's +timeout+ (the service sends a keep-alive comment every
  # 15 s), after the stream started is resumed where it stopped (+Last-Event-ID+), up to MAX_RECONNECTS times in
  # a row, unseen by the loop, which gets every event once, in order; then it raises APIConnectionError
  # (APITimeoutError after silence). So that the service goes on generating meanwhile, the send asks for
  # <tt>on_disconnect: "continue"</tt> unless given another value. Leaving the loop early (+break+, an exception,
  # or #close) closes the connection; #text and #final_message then raise APIUserAbortError.
  class MessageStream
    include Enumerable

    # The event carrying the next piece of text, the event that completes the reply, and the failure event.
    DELTA_EVENT = "message.delta"
    COMPLETED_EVENT = "message.completed"
    ERROR_EVENT = "error"
    # How many times in a row a dropped stream is resumed before it fails.
    MAX_RECONNECTS = 3
    # Seconds before the first resumption; each next one waits twice as long.
    RECONNECT_DELAY = 0.2

    # The request id (+X-Request-Id+) once the response has arrived.
    attr_reader :request_id

    # @api private
    # +events+: each event name the API documents, with the type of its data (see Agentry::Model::Types).
    # +open+ starts the request and yields the response and its connection (Transport#stream).
    # +resume+ opens the message's events after an event id (the message's id and the event's), as +open+ does.
    def initialize(events:, timeout:, resume: nil, &open)
      @events = events
      @timeout = timeout
      @open = open
      @resume = resume
      @message_id = nil
      @last_id = 0
      @resumed = false
      @in_caller = false
      @text = +""
      @final = nil
      @failure = nil
      @consumed = false
      @closed = false
      @http = nil
    end

    # Yields each event in order (an Enumerator without a block). Unknown event types, from a newer API version,
    # are skipped. Returns +self+.
    def each(&block)
      return enum_for(:each) unless block
      raise Error, "A MessageStream can be read once; use text or final_message after that." if @consumed

      @consumed = true
      read(&block)
      self
    end

    # The whole reply text (the deltas joined), reading the stream first if nobody has.
    def text
      drain
      @text.dup
    end

    # The completed reply (Models::Reply, the +message.completed+ event's data), reading the stream first if
    # nobody has.
    def final_message
      drain
      @final
    end

    # Whether the reply arrived whole.
    def completed?
      !@final.nil?
    end

    # Ends the stream and closes its connection, from inside the loop or from another thread; the loop then ends
    # quietly. The reply is still generated and stored unless the stream was sent with <tt>on_disconnect:
    # "cancel"</tt>.
    def close
      @closed = true
      @consumed = true
      http = @http
      http.finish if http&.started?
    rescue IOError, SystemCallError
      nil
    end

    private

    def drain
      each { |_event| nil } unless @consumed
      raise @failure if @failure
      raise APIUserAbortError if @final.nil?
    end

    # Reads the connections of the stream: the first, then each resumption of a dropped one.
    def read(&block)
      reconnects = 0
      opener = @open
      begin
        read_connection(opener) do |event|
          reconnects = 0
          block.call(event)
        end
      rescue APIConnectionError
        raise if @in_caller || @closed || @resume.nil? || @message_id.nil? || reconnects >= MAX_RECONNECTS

        reconnects += 1
        @resumed = true
        @failure = nil
        sleep(RECONNECT_DELAY * (2**(reconnects - 1)))
        message_id = @message_id
        after = @last_id
        opener = proc { |&consumer| @resume.call(message_id, after, &consumer) }
        retry
      end
    end

    def read_connection(opener)
      in_caller = false
      catch(:stop) do
        opener.call do |response, http|
          @http = http
          @request_id = response["x-request-id"]
          headers = response.each_header.to_h
          parser = SSEParser.new
          response.read_body do |chunk|
            parser.feed(chunk).each do |message|
              event = accept(message, headers)
              next unless event
              # Closed from another thread: nothing more reaches the loop.
              throw :stop if @closed

              in_caller = @in_caller = true
              yield event
              in_caller = @in_caller = false
              throw :stop if @closed || @final
            end
          end
        end
      end
      return if @closed || @final

      raise APIConnectionError, "The stream ended before the reply was complete."
    rescue APIError => e
      raise if in_caller

      @failure = e
      raise
    rescue Timeout::Error, *Transport::NETWORK_ERRORS => e
      raise if in_caller
      return if @closed

      @failure =
        if e.is_a?(Timeout::Error)
          APITimeoutError.new("The stream sent nothing for #{@timeout} s.")
        else
          APIConnectionError.new("The stream broke: #{e.message} (#{e.class})")
        end
      raise @failure
    ensure
      # Left early: the caller's break or exception, or close.
      @failure ||= APIUserAbortError.new if @final.nil?
    end

    # Turns one server-sent event into the event to yield; raises the error of an +error+ event.
    def accept(message, headers)
      type = message.event
      return nil unless @events.key?(type)

      # A resumed connection starts after the last event seen; an event seen already is never yielded twice.
      if message.id.to_s.match?(/\A[0-9]+\z/)
        seq = message.id.to_i
        return nil if @resumed && seq <= @last_id

        @last_id = [@last_id, seq].max
      end

      begin
        data = JSON.parse(message.data)
      rescue JSON::ParserError
        raise APIError.new("The '#{type}' event's data is not JSON.", headers: headers, body: message.data)
      end
      raise Errors.from_stream_event(data, headers) if type == ERROR_EVENT

      if type == DELTA_EVENT
        unless data.is_a?(Hash) && data["text"].is_a?(String)
          raise APIError.new("A '#{DELTA_EVENT}' event carries no text.", headers: headers, body: data)
        end

        @text << data["text"]
      end
      decoded = Model::Types.decode(@events[type], data)
      @final = decoded if type == COMPLETED_EVENT
      @message_id ||= data["id"] if type == "message.started" && data.is_a?(Hash)
      StreamEvent.new(type: type, id: message.id || "", data: decoded)
    end
  end
end
