# frozen_string_literal: true

module Agentry
  # What numbered and cursor pages share: walking a listing page by page, and item by item (Enumerable), from
  # pages that answer +data+, +next_page?+ and +next_page+.
  module Paging
    include Enumerable

    # Yields this page and every page after it, fetching each as the loop asks for it (an Enumerator without a
    # block).
    def each_page
      return enum_for(:each_page) unless block_given?

      page = self
      loop do
        yield page
        break unless page.next_page?

        page = page.next_page
      end
      self
    end

    # Yields every item from this page to the end of the listing.
    def each(&block)
      return enum_for(:each) unless block

      each_page { |page| page.data.each(&block) }
      self
    end
  end

  # One page of a listing, and an Enumerable of every item from this page to the end of the listing: +each+,
  # +map+, +first(n)+, +lazy+ ... fetch the next pages as they go, and only as far as they need.
  #
  #   page = client.agents.list(limit: 50, status: "active")
  #   page.data              # the agents of this page
  #   page.pagination        # page, limit, total, total_pages, has_more
  #   page.each { |agent| puts agent.name }          # every agent of every page
  #   page.lazy.select { |a| a.name.start_with?("A") }.first(3)
  #   page.each_page { |p| puts p.pagination.page }  # page by page
  #
  # Pages are numbered: items created or deleted while you iterate can shift between pages, so an item may be seen
  # twice or not at all.
  class Page
    include Paging

    # The items of this page.
    attr_reader :data
    # Where this page sits in the listing.
    attr_reader :pagination

    # @api private
    # +fetch_page+ fetches the page with the given number, with the same query.
    def initialize(data:, pagination:, page_number:, has_more:, fetch_page:)
      @data = data
      @pagination = pagination
      @page_number = page_number
      @has_more = has_more
      @fetch_page = fetch_page
    end

    # Whether another page follows this one.
    def next_page?
      @has_more && !@data.empty?
    end

    # Fetches the next page; raises Agentry::Error when there is none.
    def next_page
      raise Error, "There is no next page." unless next_page?

      @fetch_page.call(@page_number + 1)
    end

    def inspect
      "#<#{self.class.name} page=#{@page_number} items=#{@data.size} next_page?=#{next_page?}>"
    end
  end

  # One page of a cursor-paged listing (the history lists, a webhook endpoint's delivery log), and an Enumerable
  # of every item from this page to the end of the listing, in its order. Each next page is the one before this
  # page's last item (newest first, the default) or after it (<tt>order: "asc"</tt>), so items added while you
  # iterate do not shift the pages. A first page asked for with +before:+ or +after:+ goes on that way: toward older
  # items, or newer ones.
  #
  #   page = client.agents.messages.list(agent_id, user_id: "user-42", limit: 50)
  #   page.data              # the messages of this page
  #   page.pagination        # limit, has_more
  #   page.each { |message| puts message.text }     # every message of every page
  #   page.each_page { |p| puts p.next_cursor }     # page by page
  class CursorPage
    include Paging

    # The items of this page.
    attr_reader :data
    # The page size and whether another page follows.
    attr_reader :pagination
    # The cursor of the next page (usually the last item's id), +nil+ on an empty page.
    attr_reader :next_cursor

    # @api private
    # +fetch_next+ fetches the next page, with the same query but its cursor.
    def initialize(data:, pagination:, has_more:, next_cursor:, fetch_next:)
      @data = data
      @pagination = pagination
      @has_more = has_more
      @next_cursor = next_cursor
      @fetch_next = fetch_next
    end

    # Whether another page follows this one.
    def next_page?
      @has_more && !@next_cursor.nil?
    end

    # Fetches the next page; raises Agentry::Error when there is none.
    def next_page
      raise Error, "There is no next page." unless next_page?

      @fetch_next.call
    end

    def inspect
      "#<#{self.class.name} items=#{@data.size} next_cursor=#{@next_cursor.inspect} next_page?=#{next_page?}>"
    end
  end
end
