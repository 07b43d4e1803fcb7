# frozen_string_literal: true

require_relative "test_helper"

class PaginationTest < Minitest::Test
  include TestHelpers

  def agent(name)
    TestHelpers::AGENT.merge("id" => "agt_#{name}", "name" => name)
  end

  def page(number, names, total:, limit: 2)
    pages = (total + limit - 1) / limit
    FakeServer.data(names.map { |name| agent(name) },
                    pagination: { page: number, limit: limit, total: total, totalPages: pages, hasMore: number < pages })
  end

  # Answers each request with the page it asks for (the first when it names none).
  def three_pages
    pages = { 1 => page(1, %w[a b], total: 5), 2 => page(2, %w[c d], total: 5), 3 => page(3, %w[e], total: 5) }
    serve(->(request, socket) { pages.fetch(request.query.fetch("page", "1").to_i).call(request, socket) })
  end

  def test_gives_one_page_with_its_pagination_and_the_query_as_sent
    server = three_pages
    first = client_for(server).agents.list(limit: 2, sort_by: :name, order: "asc")
    assert_equal %w[a b], first.data.map(&:name)
    assert_instance_of Agentry::Models::Agent, first.data[0]
    assert_equal 1, first.pagination.page
    assert_equal 3, first.pagination.total_pages
    assert first.pagination.has_more
    assert first.next_page?
    assert_equal [{ "limit" => "2", "sortBy" => "name", "order" => "asc" }], server.requests.map(&:query)
  end

  def test_sends_no_query_parameters_the_caller_did_not_give
    server = three_pages
    client_for(server).agents.list
    assert_equal({}, server.requests[0].query)
  end

  def test_walks_every_agent_of_every_page_fetching_pages_only_as_needed
    server = three_pages
    listing = client_for(server).agents.list(limit: 2)
    assert_equal 1, server.requests.size
    assert_equal %w[a b c], listing.lazy.map(&:name).first(3)
    assert_equal 2, server.requests.size
    assert_equal %w[a b c d e], listing.map(&:name)
    assert_equal [nil, "2", "2", "3"], server.requests.map { |r| r.query["page"] }
    assert_equal({ "limit" => "2", "page" => "3" }, server.requests.last.query)
  end

  def test_is_enumerable_across_pages
    server = three_pages
    listing = client_for(server).agents.list(limit: 2)
    assert_equal "c", listing.find { |a| a.name == "c" }.name
    assert_equal 2, server.requests.size
    assert_equal %w[a e], listing.select { |a| %w[a e].include?(a.name) }.map(&:name)
    enum = listing.each
    assert_equal "a", enum.next.name
    assert_equal "b", enum.next.name
  end

  def test_starts_from_the_page_asked_for
    server = serve(page(2, %w[c d], total: 5), page(3, %w[e], total: 5))
    names = client_for(server).agents.list(page: 2, limit: 2).map(&:name)
    assert_equal %w[c d e], names
    assert_equal %w[2 3], server.requests.map { |r| r.query["page"] }
  end

  def test_next_page_and_each_page_go_page_by_page_then_stop
    server = three_pages
    first = client_for(server).agents.list(limit: 2)
    second = first.next_page
    assert_equal %w[c d], second.data.map(&:name)
    assert_equal [1, 2, 3], first.each_page.map { |p| p.pagination.page }
    last = second.next_page
    refute last.next_page?
    error = assert_raises(Agentry::Error) { last.next_page }
    assert_equal "There is no next page.", error.message
  end

  def test_an_empty_listing_iterates_nothing
    server = serve(FakeServer.data([], pagination: { page: 1, limit: 20, total: 0, totalPages: 0, hasMore: false }))
    listing = client_for(server).agents.list(status: "inactive")
    assert_equal [], listing.to_a
    refute listing.next_page?
    assert_equal 1, server.requests.size
  end

  def test_a_page_that_says_has_more_but_is_empty_ends_the_walk
    server = serve(FakeServer.data([], pagination: { page: 4, limit: 20, total: 99, totalPages: 5, hasMore: true }))
    assert_equal [], client_for(server).agents.list(page: 4).to_a
    assert_equal 1, server.requests.size
  end

  def test_a_failing_later_page_fails_the_loop_after_the_items_before_it
    server = serve(page(1, %w[a b], total: 5), FakeServer.api_error(400, "INVALID_REQUEST"))
    seen = []
    assert_raises(Agentry::BadRequestError) { client_for(server).agents.list(limit: 2).each { |a| seen << a.name } }
    assert_equal %w[a b], seen
  end
end
