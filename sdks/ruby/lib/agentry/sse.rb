# frozen_string_literal: true

module Agentry
  # Reads a +text/event-stream+ body as events, by the SSE standard's framing: CRLF, LF or CR line ends (split
  # between chunks too), multi-line +data:+ joined with "\n", comments such as <tt>: ping</tt> skipped, unknown
  # fields ignored, a leading byte-order mark dropped, and an event the stream did not finish never dispatched.
  # Lines are split on bytes, so a UTF-8 character split between two chunks arrives whole.
  class SSEParser
    # One event, its fields as received. +event+ is +nil+ when the event had no +event:+ field.
    Event = Struct.new(:id, :event, :data, keyword_init: true)

    BOM = "\xEF\xBB\xBF".b.freeze
    LINE_END = /[\r\n]/.freeze

    def initialize
      @buffer = +"".b
      @started = false
      @skip_lf = false
      reset_event
    end

    # Feeds one chunk of the body (any size, any split) and returns the events it completed, in order.
    def feed(chunk)
      @buffer << chunk.b
      return [] unless strip_bom

      events = []
      position = 0
      if @skip_lf && !@buffer.empty?
        position = 1 if @buffer.getbyte(0) == 10
        @skip_lf = false
      end
      while (index = @buffer.index(LINE_END, position))
        line = @buffer.byteslice(position, index - position)
        position = index + 1
        if @buffer.getbyte(index) == 13
          if position == @buffer.bytesize then @skip_lf = true
          elsif @buffer.getbyte(position) == 10 then position += 1
          end
        end
        event = process_line(line)
        events << event if event
      end
      @buffer = @buffer.byteslice(position, @buffer.bytesize - position)
      events
    end

    private

    # Holds the first bytes back until it is known whether they are a byte-order mark.
    def strip_bom
      return true if @started
      return false if @buffer.bytesize < BOM.bytesize && BOM.start_with?(@buffer)

      @buffer = @buffer.byteslice(BOM.bytesize..) if @buffer.start_with?(BOM)
      @started = true
    end

    def process_line(raw)
      text = raw.force_encoding(Encoding::UTF_8)
      text = text.scrub unless text.valid_encoding?
      return dispatch if text.empty?
      return nil if text.start_with?(":")

      name, value = text.split(":", 2)
      value = value.nil? ? "" : value.delete_prefix(" ")
      case name
      when "data" then (@data ||= +"") << value << "\n"
      when "event" then @event = value
      when "id" then @id = value unless value.include?("\0")
      end
      nil
    end

    def dispatch
      event = @data && Event.new(id: @id, event: @event, data: @data.chomp("\n"))
      reset_event
      event
    end

    def reset_event
      @data = nil
      @event = nil
      @id = nil
    end
  end
end
