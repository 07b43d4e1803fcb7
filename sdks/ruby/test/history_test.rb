# frozen_string_literal: true

require_relative "test_helper"

# Cursor-paged history lists and the delivery log, a user's export (NDJSON), and erasure, against a local server.
class HistoryTest < Minitest::Test
  include TestHelpers

  AGENT_ID = TestHelpers::AGENT["id"]

  def history_message(number, role: "user")
    item = {
      "id" => format("msg_%02d", number), "agentId" => AGENT_ID, "conversationId" => "conv_1",
      "userId" => "user-42", "roomId" => nil, "role" => role, "text" => "text #{number}",
      "createdAt" => format("2026-11-20T09:30:%02d.000Z", number)
    }
    return item unless role == "assistant"

    item.merge("model" => "gpt-4o-mini", "modelProvider" => "openai", "finishReason" => "stop",
               "usage" => { "inputTokens" => 4, "outputTokens" => 3, "totalTokens" => 7 }, "latencyMs" => 12)
  end

  def memory(number, source: "msg_01")
    {
      "id" => format("mem_%02d", number), "agentId" => AGENT_ID, "userId" => "user-42", "text" => "fact #{number}",
      "source" => source && { "messageId" => source }, "createdAt" => format("2026-11-21T09:30:%02d.000Z", number)
    }
  end

  def cursor_page(items, has_more:, limit: 2)
    FakeServer.data(items, pagination: { limit: limit, hasMore: has_more })
  end

  # An NDJSON answer: +chunks+ written one by one (an Integer is a pause in milliseconds), then the end of the
  # body unless +cut+, which drops the connection before the last chunk.
  def ndjson(chunks, cut: false)
    FakeServer.sse(chunks, headers: { "content-type" => "application/x-ndjson", "x-request-id" => "req_export" },
                           cut: cut)
  end

  def line(item)
    "#{JSON.generate(item)}\n"
  end

  def test_newest_first_each_next_page_is_before_the_last_item
    server = serve(cursor_page([history_message(4), history_message(3)], has_more: true),
                   cursor_page([history_message(2), history_message(1)], has_more: true), cursor_page([], has_more: false))
    first = client_for(server).agents.messages.list(AGENT_ID, user_id: "user-42", limit: 2)
    assert_instance_of Agentry::CursorPage, first
    assert_equal %w[msg_04 msg_03], first.data.map(&:id)
    assert_instance_of Agentry::Models::HistoryMessage, first.data[0]
    assert_equal [2, true], [first.pagination.limit, first.pagination.has_more]
    assert first.next_page?
    assert_equal "msg_03", first.next_cursor
    assert_equal 1, server.requests.size
    assert_equal %w[msg_04 msg_03 msg_02 msg_01], first.map(&:id)
    assert_equal [{ "userId" => "user-42", "limit" => "2" },
                  { "userId" => "user-42", "limit" => "2", "before" => "msg_03" },
                  { "userId" => "user-42", "limit" => "2", "before" => "msg_01" }], server.requests.map(&:query)
    assert_equal "/v1/agents/#{AGENT_ID}/messages", server.requests[0].path
  end

  def test_oldest_first_the_next_page_is_after_the_last_item_and_a_cursor_given_sets_the_way
    server = serve(cursor_page([history_message(1), history_message(2)], has_more: true), cursor_page([history_message(3)], has_more: false))
    listing = client_for(server).agents.messages.list(AGENT_ID, order: :asc, limit: 2)
    assert_equal %w[msg_01 msg_02 msg_03], listing.to_a.map(&:id)
    assert_equal({ "order" => "asc", "limit" => "2", "after" => "msg_02" }, server.requests[1].query)

    # After a cursor, newest first: toward newer items, so after the page's newest (first) item.
    server = serve(cursor_page([history_message(6), history_message(5)], has_more: true), cursor_page([], has_more: false))
    page = client_for(server).agents.messages.list(AGENT_ID, after: "msg_04")
    assert_equal "msg_06", page.next_cursor
    page.next_page
    assert_equal({ "after" => "msg_06" }, server.requests[1].query)
  end

  def test_the_last_page_an_empty_page_and_a_failing_page_end_the_listing
    server = serve(cursor_page([history_message(1)], has_more: false), cursor_page([], has_more: true),
                   cursor_page([history_message(2)], has_more: true), FakeServer.api_error(400, "INVALID_REQUEST"))
    client = client_for(server, max_retries: 0)
    last = client.agents.messages.list(AGENT_ID)
    refute last.next_page?
    assert_raises(Agentry::Error) { last.next_page }
    assert_empty client.agents.messages.list(AGENT_ID).to_a
    seen = []
    assert_raises(Agentry::BadRequestError) { client.agents.messages.list(AGENT_ID).each { |m| seen << m.id } }
    assert_equal ["msg_02"], seen
  end

  def test_conversations_and_the_delivery_log_page_the_same_way
    conversation = { "id" => "conv_2", "agentId" => AGENT_ID, "userId" => "u", "roomId" => nil,
                     "messageCount" => 2, "createdAt" => "2026-11-20T09:30:00.000Z",
                     "lastMessageAt" => "2026-11-20T09:31:00.000Z" }
    delivery = { "id" => "dlv_2", "eventId" => "evt_1", "eventType" => "webhook.test", "attempt" => 1,
                 "status" => "succeeded", "responseStatus" => 204, "durationMs" => 5, "error" => nil,
                 "createdAt" => "2026-11-20T09:30:00.000Z", "nextAttemptAt" => nil }
    server = serve(cursor_page([conversation], has_more: true, limit: 1),
                   cursor_page([conversation.merge("id" => "conv_1")], has_more: false, limit: 1),
                   cursor_page([delivery], has_more: true, limit: 1),
                   cursor_page([delivery.merge("id" => "dlv_1")], has_more: false, limit: 1))
    client = client_for(server)
    assert_equal %w[conv_2 conv_1], client.agents.conversations.list(AGENT_ID, limit: 1).map(&:id)
    deliveries = client.webhook_endpoints.deliveries.list("whk_1", limit: 1).to_a
    assert_equal %w[dlv_2 dlv_1], deliveries.map(&:id)
    assert_instance_of Agentry::Models::Delivery, deliveries[0]
    assert_equal({ "limit" => "1", "before" => "conv_2" }, server.requests[1].query)
    assert_equal "/v1/webhooks/whk_1/deliveries", server.requests[3].path
    assert_equal({ "limit" => "1", "before" => "dlv_2" }, server.requests[3].query)
  end

  def test_an_export_yields_typed_messages_as_the_lines_arrive
    server = serve(ndjson([line(history_message(1)), 300, line(history_message(2, role: "assistant")).sub("\n", "\r\n"),
                           line(history_message(3))[0, 20], line(history_message(3))[20..]]))
    export = client_for(server).users.export("user/42")
    assert_empty server.requests
    arrivals = []
    export.each { |item| arrivals << [item, Process.clock_gettime(Process::CLOCK_MONOTONIC)] }
    assert_equal %w[msg_01 msg_02 msg_03], arrivals.map { |item, _| item.id }
    assert_instance_of Agentry::Models::HistoryMessage, arrivals[0][0]
    assert_equal 7, arrivals[1][0].usage.total_tokens
    # The first message was handed over before the server sent the second.
    assert_operator arrivals[1][1] - arrivals[0][1], :>=, 0.2
    assert_equal "/v1/users/user%2F42/export", server.requests[0].path
    assert_equal "application/x-ndjson", server.requests[0].headers["accept"]
    assert_equal "req_export", export.request_id
    assert_raises(Agentry::Error) { export.each { nil } }
  end

  def test_the_memories_after_the_messages_are_read_as_memories
    server = serve(ndjson([line(history_message(1)), line(history_message(2, role: "assistant")),
                           line(memory(1)) + line(memory(2, source: nil))]))
    items = client_for(server).users.export("user-42").to_a
    assert_equal [[Agentry::Models::HistoryMessage, "msg_01"], [Agentry::Models::HistoryMessage, "msg_02"],
                  [Agentry::Models::Memory, "mem_01"], [Agentry::Models::Memory, "mem_02"]],
                 items.map { |item| [item.class, item.id] }
    learnt, by_hand = items[2], items[3]
    assert_equal ["fact 1", "user-42", "msg_01"], [learnt.text, learnt.user_id, learnt.source.message_id]
    assert_instance_of Agentry::Models::MemorySource, learnt.source
    assert_nil by_hand.source
    assert_equal 7, items[1].usage.total_tokens
  end

  def test_an_empty_export_and_one_read_with_a_block
    server = serve(ndjson([]), ndjson([line(history_message(1))]))
    client = client_for(server)
    assert_empty client.users.export("nobody").to_a
    seen = []
    returned = client.users.export("user-42") { |item| seen << item.id }
    assert_equal ["msg_01"], seen
    assert_instance_of Agentry::NDJSONStream, returned
  end

  def test_an_export_cut_short_in_the_middle_of_a_line_raises_after_the_whole_lines
    server = serve(ndjson([line(history_message(1)) + line(history_message(2))[0, 25]]))
    seen = []
    error = assert_raises(Agentry::APIConnectionError) do
      client_for(server).users.export("user-42").each { |item| seen << item.id }
    end
    assert_match(/cut short/, error.message)
    assert_equal ["msg_01"], seen
    # A started export is never retried.
    assert_equal 1, server.requests.size
  end

  def test_a_connection_dropped_before_the_last_chunk_raises
    server = serve(ndjson([line(history_message(1)), line(history_message(2))[0, 30]], cut: true))
    seen = []
    assert_raises(Agentry::APIConnectionError) do
      client_for(server).users.export("user-42").each { |item| seen << item.id }
    end
    assert_equal ["msg_01"], seen
  end

  def test_an_export_silent_for_longer_than_the_timeout_raises
    server = serve(ndjson([line(history_message(1)), 1500, line(history_message(2))]))
    seen = []
    assert_raises(Agentry::APITimeoutError) do
      client_for(server, timeout: 0.3).users.export("user-42").each { |item| seen << item.id }
    end
    assert_equal ["msg_01"], seen
  end

  def test_failures_before_an_export_starts_are_retried_as_a_read_then_raised
    server = serve(FakeServer.api_error(503, "AGENT_UNAVAILABLE"), ndjson([line(history_message(1))]))
    assert_equal ["msg_01"], client_for(server).users.export("user-42").map(&:id)
    assert_equal 2, server.requests.size
    server = serve(FakeServer.api_error(400, "INVALID_REQUEST"))
    assert_raises(Agentry::BadRequestError) { client_for(server).users.export("x" * 300).to_a }
    assert_equal 1, server.requests.size
    server = serve(FakeServer.data({}))
    error = assert_raises(Agentry::APIError) { client_for(server).users.export("user-42").to_a }
    assert_match(/expected NDJSON/, error.message)
  end

  def test_a_line_that_is_not_json_raises_and_leaving_early_closes_the_connection
    server = serve(ndjson(["not json\n"]), ndjson([line(history_message(1)), 200, line(history_message(2)), 200, line(history_message(3))]))
    client = client_for(server)
    assert_raises(Agentry::APIError) { client.users.export("user-42").to_a }
    assert_equal "msg_01", client.users.export("user-42").first.id
    assert server.saw_early_close?
  end

  def test_erase
    server = serve(FakeServer.data({ "userId" => "user-42", "deleted" => true, "messagesDeleted" => 6 }))
    erased = client_for(server).users.erase("user-42")
    assert_equal ["user-42", true, 6], [erased.user_id, erased.deleted, erased.messages_deleted]
    assert_equal %w[DELETE /v1/users/user-42], [server.requests[0].method, server.requests[0].path]
  end
end
