# frozen_string_literal: true

module Agentry
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
    include Enumerable

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

    def inspect
      "#<#{self.class.name} page=#{@page_number} items=#{@data.size} next_page?=#{next_page?}>"
    end
  end
end
