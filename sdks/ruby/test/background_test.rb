# frozen_string_literal: true

require_relative "test_helper"
require "minitest/mock"

# Background messages against a local server: the 202 send, the read by state, and the wait with its pauses.
class BackgroundTest < Minitest::Test
  include TestHelpers

  AGENT_ID = TestHelpers::AGENT["id"]
  MESSAGE_ID = "msg_01JAAAAAAAAAAAAAAAAAAAAAAA"
  PENDING = { "id" => MESSAGE_ID, "agentId" => AGENT_ID, "userId" => nil, "roomId" => nil,
              "status" => "pending" }.freeze
  FAILED = PENDING.merge("status" => "failed", "error" => { "code" => "MODEL_ERROR", "message" => "no" }).freeze
  COMPLETED = TestHelpers::REPLY.merge("id" => MESSAGE_ID, "status" => "completed").freeze

  def test_create_background_posts_background_true_with_a_key_and_returns_the_accepted_id
    server = serve(FakeServer.data({ "id" => MESSAGE_ID, "status" => "pending" }, status: 202))
    accepted = client_for(server).agents.messages.create_background(AGENT_ID, text: "work", user_id: "u1")
    assert_instance_of Agentry::Models::BackgroundMessageAccepted, accepted
    assert_equal [MESSAGE_ID, "pending"], [accepted.id, accepted.status]
    request = server.requests[0]
    assert_equal ["POST", "/v1/agents/#{AGENT_ID}/messages"], [request.method, request.path]
    assert_equal({ "text" => "work", "userId" => "u1", "background" => true }, request.body)
    refute_empty request.headers["idempotency-key"].to_s
  end

  def test_create_and_stream_take_no_background_keyword
    messages = client_for(serve).agents.messages
    assert_raises(ArgumentError) { messages.create(AGENT_ID, text: "x", background: true) }
    assert_raises(ArgumentError) { messages.stream(AGENT_ID, text: "x", background: true) }
  end

  def test_get_background_reads_each_state_and_refuses_a_stored_message
    stored = TestHelpers::REPLY.merge("id" => MESSAGE_ID, "conversationId" => "conv_1", "role" => "assistant")
    server = serve(FakeServer.data(PENDING), FakeServer.data(COMPLETED), FakeServer.data(FAILED),
                   FakeServer.data(stored))
    messages = client_for(server).agents.messages
    assert_equal "pending", messages.get_background(AGENT_ID, MESSAGE_ID).status
    completed = messages.get_background(AGENT_ID, MESSAGE_ID)
    assert_instance_of Agentry::Models::BackgroundMessage, completed
    assert_equal ["completed", "Hello there.", 45, nil],
                 [completed.status, completed.text, completed.usage.total_tokens, completed.error]
    failed = messages.get_background(AGENT_ID, MESSAGE_ID)
    assert_equal %w[failed MODEL_ERROR], [failed.status, failed.error.code]
    error = assert_raises(Agentry::Error) { messages.get_background(AGENT_ID, MESSAGE_ID) }
    assert_match(/read it with get/, error.message)
    assert_equal "/v1/agents/#{AGENT_ID}/messages/#{MESSAGE_ID}", server.requests[0].path
  end

  def test_wait_pauses_twice_as_long_each_time_up_to_the_longest
    server = serve(*Array.new(6) { FakeServer.data(PENDING) }, FakeServer.data(COMPLETED))
    pauses = []
    message = Agentry::Polling.stub(:sleep, ->(seconds) { pauses << seconds }) do
      client_for(server).agents.messages.wait_for_background(AGENT_ID, MESSAGE_ID, poll_interval: 1)
    end
    assert_equal ["completed", 7], [message.status, server.requests.size]
    assert_equal [1.0, 2.0, 4.0, 5.0, 5.0, 5.0], pauses
  end

  def test_wait_returns_a_failed_message_as_it_is
    server = serve(FakeServer.data(PENDING), FakeServer.data(FAILED))
    message = client_for(server).agents.messages.wait_for_background(AGENT_ID, MESSAGE_ID, poll_interval: 0.01)
    assert_equal %w[failed MODEL_ERROR], [message.status, message.error.code]
  end

  def test_wait_gives_up_after_max_wait
    server = serve(FakeServer.data(PENDING))
    messages = client_for(server).agents.messages
    error = assert_raises(Agentry::APITimeoutError) do
      messages.wait_for_background(AGENT_ID, MESSAGE_ID, poll_interval: 0.01, max_wait: 0.05)
    end
    assert_match(/Still pending after 0.05 seconds/, error.message)
    assert_raises(Agentry::Error) { messages.wait_for_background(AGENT_ID, MESSAGE_ID, poll_interval: 0) }
  end
end
