# frozen_string_literal: true

require "json"
require "pathname"

module Agentry
  # The default of a keyword argument that may be +nil+ on purpose (a field whose +nil+ resets it): "not given".
  OMIT = Object.new.tap do |omit|
    def omit.inspect = "Agentry::OMIT"
    omit.freeze
  end

  # @api private
  # What the generated resources (Agentry::Resources) build on: requests, pages and streams over the transport.
  class Resource
    def initialize(transport)
      @transport = transport
    end

    def inspect
      "#<#{self.class.name}>"
    end

    private

    # The call's +request_options+ with the operation's own headers that were given (the caller's +headers:+ win).
    def with_headers(options, own)
      given = own.compact
      return options if given.empty?

      options = (options || {}).dup
      options[:headers] = given.merge((options[:headers] || {}).to_h { |name, value| [name.to_s, value] })
      options
    end

    # An ETag as the service answered it, or an agent's +updated_at+, which is its version: <tt>W/"<updated_at>"</tt>.
    def entity_tag(value)
      return nil if value.nil?

      value = value.to_s
      return value if value == "*" || value.start_with?("\"", "W/")

      "W/\"#{value}\""
    end

    # Sends a JSON request and returns the envelope's +field+ (+data+), or the whole body when +field+ is +nil+,
    # converted to +type+ (see Agentry::Model::Types). With +data_as+, the result is the envelope with its +data+
    # under that name (<tt>{"agent", "warnings"}</tt>).
    def api_request(method, path, type:, query: nil, body: nil, options: nil, field: "data", data_as: nil)
      envelope = @transport.json(method, path, query: query, body: wire_body(body), options: options)
      result = field ? envelope[field] : envelope
      result = result.except("success", "data").merge(data_as => result["data"]) if data_as
      Model::Types.decode(type, result)
    end

    # Sends a JSON request whose +data+ may be of several types, and returns it as +type+ when it has the field
    # +marker+, which the other types lack; otherwise raises Agentry::Error naming the method that reads it.
    def api_variant_request(method, path, type:, marker:, main_method:, options: nil)
      data = @transport.json(method, path, options: options)["data"]
      unless data.is_a?(Hash) && data.key?(marker)
        raise Error, "The answer is not a #{type} (it has no #{marker.inspect}); read it with #{main_method}."
      end

      Model::Types.decode(type, data)
    end

    # Fetches the page +query[page_parameter]+ (the first when absent) of a numbered listing.
    def api_paginate(path, query:, pagination:, options:)
      fetch_page = lambda do |number|
        envelope = @transport.json(:get, path, query: query.merge(pagination[:page_parameter] => number),
                                               options: options)
        info = envelope[pagination[:info_field]]
        info = {} unless info.is_a?(Hash)
        items = envelope[pagination[:items_field]]
        Page.new(
          data: Model::Types.decode([:array, pagination[:item_type]], items.is_a?(Array) ? items : []),
          pagination: Model::Types.decode(pagination[:info_type], info),
          page_number: info[pagination[:page_parameter]] || number || 1,
          has_more: info[pagination[:has_more_field]] == true,
          fetch_page: fetch_page
        )
      end
      fetch_page.call(query[pagination[:page_parameter]])
    end

    # Fetches the page of a cursor-paged listing that +query+ asks for; its next page follows on (#following).
    def api_cursor_paginate(path, query:, pagination:, options:)
      envelope = @transport.json(:get, path, query: query, options: options)
      info = envelope[pagination[:info_field]]
      info = {} unless info.is_a?(Hash)
      items = envelope[pagination[:items_field]]
      items = [] unless items.is_a?(Array)
      cursor, following = following(query, pagination, items)
      CursorPage.new(
        data: Model::Types.decode([:array, pagination[:item_type]], items),
        pagination: Model::Types.decode(pagination[:info_type], info),
        has_more: info[pagination[:has_more_field]] == true,
        next_cursor: cursor,
        fetch_next: -> { api_cursor_paginate(path, query: following, pagination: pagination, options: options) }
      )
    end

    # The cursor and the query of the page after +items+ (+nil+ after an empty page). Paging goes on the way the
    # query went: toward older items (+before+ given, or no cursor and newest first, the default), the next page
    # is +before+ the page's oldest item; toward newer ones (+after+ given, or no cursor and <tt>order: "asc"</tt>),
    # +after+ its newest. The rest of the query is kept.
    def following(query, pagination, items)
      before, after, order = pagination.values_at(:before_parameter, :after_parameter, :order_parameter)
      ascending = !order.nil? && query[order].to_s == "asc"
      older = !query[before].nil? || (query[after].nil? && !ascending)
      # Items come in the list's order: newest first unless ascending.
      item = older == ascending ? items.first : items.last
      cursor = item.is_a?(Hash) ? item[pagination[:cursor_field]] : nil
      return [nil, nil] unless cursor.is_a?(String) && !cursor.empty?

      [cursor, query.reject { |name, _| [before, after].include?(name) }.merge((older ? before : after) => cursor)]
    end

    # An NDJSONStream over an +application/x-ndjson+ request, each line converted to +type+; with a block, reads
    # it at once, yielding each item, and returns the stream.
    def api_lines(method, path, type:, query: nil, options: nil, &block)
      timeout = (options && options[:timeout]) || @transport.timeout
      stream = NDJSONStream.new(item_type: type, timeout: timeout) do |&consumer|
        @transport.stream(method, path, query: query, options: options, accept: Transport::NDJSON,
                                        &consumer)
      end
      return stream unless block

      stream.each(&block)
    end

    # A MessageStream over a +text/event-stream+ request; with a block, reads it at once, yielding each event, and
    # returns the completed reply (+nil+ when the block left early or closed the stream).
    def api_stream(method, path, events:, body: nil, options: nil, &block)
      timeout = (options && options[:timeout]) || @transport.timeout
      # So that a dropped stream can be resumed, the service goes on generating unless the caller chose.
      body = { "onDisconnect" => "continue" }.merge(body) if body.is_a?(Hash) && !body.key?("onDisconnect")
      resume = lambda do |message_id, after, &consumer|
        @transport.stream(:get, "#{path}/#{path_segment(:message_id, message_id)}/events",
                          options: resume_options(options, after), &consumer)
      end
      stream = MessageStream.new(events: events, timeout: timeout, resume: resume) do |&consumer|
        @transport.stream(method, path, body: wire_body(body), options: options, &consumer)
      end
      return stream unless block

      stream.each(&block)
      stream.completed? ? stream.final_message : nil
    end

    # An id as one URL path segment; an empty one is refused here rather than turned into another route.
    def path_segment(name, value)
      text = value.to_s
      raise ArgumentError, "#{name} must be a non-empty string" if value.nil? || text.empty?

      text.b.gsub(/[^A-Za-z0-9\-._~]/n) { |byte| format("%%%02X", byte.ord) }
    end

    # A JSON object argument as given (a Hash, a model), or read from the path (a String or Pathname) of a file
    # holding one, here, before anything is sent.
    def json_object_argument(name, value)
      return value unless value.is_a?(String) || value.is_a?(Pathname)

      parsed =
        begin
          JSON.parse(File.read(value, encoding: "UTF-8"))
        rescue SystemCallError, IOError => e
          raise Error, "Cannot read #{name} from #{value}: #{e.message}"
        rescue JSON::ParserError => e
          raise Error, "#{name}: #{value} is not JSON: #{e.message}"
        end
      raise Error, "#{name}: #{value} does not hold a JSON object" unless parsed.is_a?(Hash)

      parsed
    end

    # The options of a stream's resumption: the call's own, asking for the events after +after+.
    def resume_options(options, after)
      own = (options || {}).reject { |name, _| %i[extra_body idempotency_key].include?(name) }
      own.merge(headers: (own[:headers] || {}).merge("Last-Event-ID" => after.to_s))
    end

    def wire_body(body)
      body.nil? ? nil : Model::Types.to_wire(body)
    end
  end
end
