# frozen_string_literal: true

require_relative "test_helper"

class StreamingTest < Minitest::Test
  include TestHelpers

  STARTED = { "id" => "msg_1", "agentId" => "agt_1", "userId" => "u1", "roomId" => nil }.freeze

  def frame(id, event, data)
    "id: #{id}\nevent: #{event}\ndata: #{JSON.generate(data)}\n\n"
  end

  def reply_frames
    [frame(1, "message.started", STARTED), frame(2, "message.delta", { "text" => "Hello" }),
     ": ping\n\n", frame(3, "message.delta", { "text" => " there." }),
     frame(4, "message.completed", TestHelpers::REPLY)]
  end

  def messages(server, **options)
    client_for(server, **options).agents.messages
  end

  def test_asks_for_a_stream_and_yields_typed_events_in_order
    server = serve(FakeServer.sse(reply_frames))
    events = messages(server).stream("agt_1", text: "hi", user_id: "u1").to_a
    assert_equal %w[message.started message.delta message.delta message.completed], events.map(&:type)
    assert_equal %w[1 2 3 4], events.map(&:id)
    assert_instance_of Agentry::Models::MessageStarted, events[0].data
    assert_equal "u1", events[0].data.user_id
    assert_equal "Hello", events[1].data.text
    assert_instance_of Agentry::Models::Reply, events[3].data
    request = server.requests[0]
    assert_equal "text/event-stream", request.headers["accept"]
    assert_equal({ "text" => "hi", "userId" => "u1", "stream" => true, "onDisconnect" => "continue" }, request.body)
  end

  def test_sends_nothing_until_it_is_read
    server = serve(FakeServer.sse(reply_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    assert_empty server.requests
    assert_equal "Hello there.", stream.text
    assert_equal 1, server.requests.size
  end

  def test_text_and_final_message_consume_the_stream_themselves_and_answer_after_a_loop_too
    server = serve(FakeServer.sse(reply_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    assert_equal 45, stream.final_message.usage.total_tokens
    assert_equal "Hello there.", stream.text
    assert stream.completed?

    server = serve(FakeServer.sse(reply_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    stream.each { |_event| nil }
    assert_equal "Hello there.", stream.text
    assert_equal "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1", stream.final_message.id
    assert_equal "req_stream", stream.request_id
  end

  def test_with_a_block_reads_at_once_and_returns_the_completed_reply
    server = serve(FakeServer.sse(reply_frames))
    text = +""
    reply = messages(server).stream("agt_1", text: "hi") do |event|
      case event
      in { type: "message.delta", data: { text: piece } } then text << piece
      else nil
      end
    end
    assert_equal "Hello there.", text
    assert_equal TestHelpers::REPLY, reply.to_wire
  end

  def test_without_a_block_each_is_an_enumerator_and_the_stream_is_enumerable
    server = serve(FakeServer.sse(reply_frames))
    enum = messages(server).stream("agt_1", text: "hi").each
    assert_equal "message.started", enum.next.type
    assert_equal "Hello", enum.next.data.text

    server = serve(FakeServer.sse(reply_frames))
    deltas = messages(server).stream("agt_1", text: "hi").lazy.select { |e| e.type == "message.delta" }.map { |e| e.data.text }
    assert_equal ["Hello", " there."], deltas.to_a
  end

  def test_can_be_read_once
    server = serve(FakeServer.sse(reply_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    stream.each { |_event| nil }
    error = assert_raises(Agentry::Error) { stream.each { |_event| nil } }
    assert_match(/read once/, error.message)
    assert_equal 1, server.requests.size
  end

  def test_skips_event_types_it_does_not_know
    frames = reply_frames.insert(1, frame(9, "message.thinking", { "text" => "hmm" }), "data: no event name\n\n")
    server = serve(FakeServer.sse(frames))
    assert_equal %w[message.started message.delta message.delta message.completed],
                 messages(server).stream("agt_1", text: "hi").map(&:type)
  end

  def test_raises_the_error_event_as_the_class_of_its_code_after_the_events_before_it_without_retrying
    frames = [frame(1, "message.started", STARTED), frame(2, "message.delta", { "text" => "Hel" }),
              frame(3, "error", { "code" => "AGENT_UNAVAILABLE", "message" => "The provider is overloaded." })]
    server = serve(FakeServer.sse(frames), FakeServer.sse(reply_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    seen = []
    error = assert_raises(Agentry::InternalServerError) { stream.each { |event| seen << event.type } }
    assert_equal %w[message.started message.delta], seen
    assert_equal 503, error.status
    assert_equal "AGENT_UNAVAILABLE", error.code
    assert_equal "req_stream", error.request_id
    assert_equal "503 AGENT_UNAVAILABLE: The provider is overloaded.", error.message
    assert_same error, assert_raises(Agentry::InternalServerError) { stream.text }
    assert_equal 1, server.requests.size
  end

  def test_maps_a_model_error_and_an_unknown_code_in_an_error_event
    { "MODEL_ERROR" => 502, "SOMETHING_NEW" => 500 }.each do |code, status|
      server = serve(FakeServer.sse([frame(1, "error", { "code" => code, "message" => "no" })]))
      error = assert_raises(Agentry::InternalServerError) { messages(server).stream("agt_1", text: "hi").text }
      assert_equal status, error.status
      assert_equal code, error.code
    end
  end

  def test_fails_with_a_connection_error_when_the_stream_ends_before_the_reply_is_complete
    server = serve(FakeServer.sse(reply_frames.first(2)))
    error = assert_raises(Agentry::APIConnectionError) { messages(server).stream("agt_1", text: "hi").to_a }
    assert_match(/before the reply was complete/, error.message)

    server = serve(FakeServer.sse(reply_frames.first(2), cut: true))
    error = assert_raises(Agentry::APIConnectionError) { messages(server).stream("agt_1", text: "hi").to_a }
    refute_kind_of Agentry::APITimeoutError, error
    # Resumed after its last event each time, until the resumptions were spent.
    assert_equal 1 + Agentry::MessageStream::MAX_RECONNECTS, server.requests.size
    resumed = server.requests[1]
    assert_equal "GET", resumed.method
    assert_equal "/v1/agents/agt_1/messages/msg_1/events", resumed.path
    assert_equal "2", resumed.headers["last-event-id"]
    assert_nil resumed.headers["idempotency-key"]
  end

  def test_resumes_a_dropped_stream_after_its_last_event_unseen_by_the_loop
    frames = reply_frames
    server = serve(FakeServer.sse(frames.first(2), cut: true), FakeServer.sse(frames.drop(1)))
    stream = messages(server).stream("agt_1", text: "hi")
    assert_equal %w[1 2 3 4], stream.map(&:id)
    assert_equal "Hello there.", stream.text
    assert_equal 2, server.requests.size
    assert_equal "2", server.requests[1].headers["last-event-id"]

    server = serve(FakeServer.sse(frames.first(1), cut: true), FakeServer.api_error(404, "STREAM_NOT_FOUND"))
    error = assert_raises(Agentry::NotFoundError) do
      messages(server, max_retries: 0).stream("agt_1", text: "hi", on_disconnect: "cancel").text
    end
    assert_equal "STREAM_NOT_FOUND", error.code
    assert_equal "cancel", server.requests[0].body["onDisconnect"]
  end

  def test_fails_before_it_starts_like_any_request_retried_under_one_key
    server = serve(FakeServer.api_error(503, "AGENT_UNAVAILABLE"), FakeServer.sse(reply_frames))
    assert_equal "Hello there.", messages(server).stream("agt_1", text: "hi").text
    assert_equal 2, server.requests.size
    assert_equal 1, server.requests.map { |request| request.headers["idempotency-key"] }.uniq.size

    server = serve(FakeServer.api_error(409, "AGENT_INACTIVE"), FakeServer.sse(reply_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    seen = []
    error = assert_raises(Agentry::ConflictError) { stream.each { |event| seen << event } }
    assert_equal "AGENT_INACTIVE", error.code
    assert_empty seen
    assert_equal 1, server.requests.size

    server = serve(FakeServer.api_error(422, "IDEMPOTENCY_KEY_REUSED"), FakeServer.sse(reply_frames))
    assert_raises(Agentry::BadRequestError) do
      messages(server).stream("agt_1", text: "hi", request_options: { idempotency_key: "story-1" }).text
    end
    assert_equal ["story-1"], server.requests.map { |request| request.headers["idempotency-key"] }
  end

  def test_refuses_a_200_that_is_not_an_event_stream
    server = serve(FakeServer.data(TestHelpers::REPLY))
    error = assert_raises(Agentry::APIError) { messages(server).stream("agt_1", text: "hi").to_a }
    assert_match(/expected an event stream/, error.message)
  end

  def slow_frames
    [frame(1, "message.started", STARTED)] + (2..40).flat_map { |id| [50, frame(id, "message.delta", { "text" => "x" })] } +
      [frame(41, "message.completed", TestHelpers::REPLY)]
  end

  def test_breaking_out_of_the_loop_closes_the_connection_and_the_helpers_then_raise
    server = serve(FakeServer.sse(slow_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    stream.each { |event| break if event.type == "message.delta" }
    assert server.saw_early_close?, "the server saw the connection close"
    assert_raises(Agentry::APIUserAbortError) { stream.text }
    refute stream.completed?
  end

  def test_a_block_given_to_stream_may_break_too
    server = serve(FakeServer.sse(slow_frames))
    result = messages(server).stream("agt_1", text: "hi") { |event| break :stopped if event.type == "message.delta" }
    assert_equal :stopped, result
    assert server.saw_early_close?
  end

  def test_close_inside_the_loop_ends_it_quietly
    server = serve(FakeServer.sse(slow_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    seen = stream.each_with_object([]) do |event, types|
      types << event.type
      stream.close if types.size == 2
    end
    assert_equal 2, seen.size
    assert server.saw_early_close?
    assert_raises(Agentry::APIUserAbortError) { stream.final_message }
  end

  def test_close_from_another_thread_ends_the_loop_quietly
    server = serve(FakeServer.sse(slow_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    closer = Thread.new do
      sleep 0.2
      stream.close
    end
    count = 0
    stream.each { |_event| count += 1 }
    closer.join
    assert_operator count, :<, 40
    assert_raises(Agentry::APIUserAbortError) { stream.text }
  end

  def test_breaking_out_right_after_message_completed_keeps_the_outcome
    server = serve(FakeServer.sse(reply_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    stream.each { |event| break if event.type == "message.completed" }
    assert_equal "Hello there.", stream.text
  end

  def test_an_exception_in_the_loop_reaches_the_caller_unchanged_and_closes_the_connection
    server = serve(FakeServer.sse(slow_frames))
    stream = messages(server).stream("agt_1", text: "hi")
    assert_raises(IOError) { stream.each { |_event| raise IOError, "the caller's own" } }
    assert server.saw_early_close?
  end

  def test_times_out_a_stream_that_goes_silent_but_not_one_whose_loop_body_is_slow
    silent = [frame(1, "message.started", STARTED), 600, frame(2, "message.completed", TestHelpers::REPLY)]
    server = serve(FakeServer.sse(silent))
    error = assert_raises(Agentry::APITimeoutError) { messages(server, timeout: 0.3).stream("agt_1", text: "hi").to_a }
    assert_match(/sent nothing for 0.3 s/, error.message)

    pings = [frame(1, "message.started", STARTED)] + Array.new(4) { [200, ": ping\n\n"] }.flatten +
            [frame(2, "message.completed", TestHelpers::REPLY)]
    server = serve(FakeServer.sse(pings))
    assert_equal 2, messages(server, timeout: 0.3).stream("agt_1", text: "hi").count

    server = serve(FakeServer.sse(reply_frames))
    types = messages(server, timeout: 0.3).stream("agt_1", text: "hi").map do |event|
      sleep 0.4
      event.type
    end
    assert_equal 4, types.size
  end
end
