# frozen_string_literal: true

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

    # Sends a JSON request and returns the envelope's +data+, converted to +type+ (see Agentry::Model::Types).
    def api_request(method, path, type:, safety:, query: nil, body: nil, options: nil)
      envelope = @transport.json(method, path, safety: safety, query: query, body: wire_body(body), options: options)
      Model::Types.decode(type, envelope["data"])
    end

    # Fetches the page +query[page_parameter]+ (the first when absent) of a numbered listing.
    def api_paginate(path, query:, pagination:, safety:, options:)
      fetch_page = lambda do |number|
        envelope = @transport.json(:get, path, safety: safety, query: query.merge(pagination[:page_parameter] => number),
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

    # A MessageStream over a +text/event-stream+ request; with a block, reads it at once, yielding each event, and
    # returns the completed reply (+nil+ when the block left early or closed the stream).
    def api_stream(method, path, events:, safety:, body: nil, options: nil, &block)
      timeout = (options && options[:timeout]) || @transport.timeout
      stream = MessageStream.new(events: events, timeout: timeout) do |&consumer|
        @transport.stream(method, path, safety: safety, body: wire_body(body), options: options, &consumer)
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

    def wire_body(body)
      body.nil? ? nil : Model::Types.to_wire(body)
    end
  end
end
