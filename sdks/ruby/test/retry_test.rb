# frozen_string_literal: true

require_relative "test_helper"

class RetryPolicyTest < Minitest::Test
  P = Agentry::RetryPolicy

  def status(code_status, code = nil)
    { kind: :status, status: code_status, code: code }
  end

  {
    "429" => [{ kind: :status, status: 429, code: "RATE_LIMIT_EXCEEDED" }, true],
    "408" => [{ kind: :status, status: 408, code: nil }, true],
    "a connection failure" => [{ kind: :connection }, true],
    "a timeout" => [{ kind: :timeout }, true],
    "500" => [{ kind: :status, status: 500, code: "INTERNAL_ERROR" }, true],
    "502" => [{ kind: :status, status: 502, code: "MODEL_ERROR" }, true],
    "503" => [{ kind: :status, status: 503, code: "AGENT_UNAVAILABLE" }, true],
    "409 IDEMPOTENCY_KEY_IN_USE" => [{ kind: :status, status: 409, code: "IDEMPOTENCY_KEY_IN_USE" }, true],
    "409 AGENT_INACTIVE, never" => [{ kind: :status, status: 409, code: "AGENT_INACTIVE" }, false],
    "403 INSUFFICIENT_QUOTA, never" => [{ kind: :status, status: 403, code: "INSUFFICIENT_QUOTA" }, false],
    "422 IDEMPOTENCY_KEY_REUSED, never" => [{ kind: :status, status: 422, code: "IDEMPOTENCY_KEY_REUSED" }, false],
    "400, never" => [{ kind: :status, status: 400, code: "INVALID_REQUEST" }, false],
    "404, never" => [{ kind: :status, status: 404, code: "AGENT_NOT_FOUND" }, false]
  }.each do |name, (failure, expected)|
    define_method("test_retries_#{name.tr(' ,', '__')}") do
      assert_equal expected, P.retry?(failure)
    end
  end

  def test_doubles_from_half_a_second_up_to_8_seconds_less_up_to_a_quarter_of_jitter
    no_jitter = ->(retry_number) { P.delay(retry_number, nil, 60, random: -> { 0.0 }) }
    assert_equal [0.5, 1.0, 2.0, 4.0, 8.0, 8.0], (0..5).map(&no_jitter)
    assert_in_delta 0.375, P.delay(0, nil, 60, random: -> { 1.0 })
    100.times do
      delay = P.delay(2, nil, 60)
      assert_operator delay, :>, 1.5 - 1e-9
      assert_operator delay, :<=, 2.0
    end
  end

  def test_takes_retry_after_as_it_is_without_jitter_beyond_the_backoffs_8_seconds
    assert_equal 20.0, P.delay(0, 20, 60, random: -> { 1.0 })
    assert_equal 0.0, P.delay(3, 0, 60)
  end

  def test_never_waits_longer_than_max_retry_delay
    assert_equal 0.1, P.delay(0, 58, 0.1)
    assert_equal 0.1, P.delay(5, nil, 0.1)
  end

  def test_reads_seconds_and_http_dates
    now = Time.utc(2026, 11, 20, 9, 30)
    assert_equal 12, P.parse_retry_after("12", now: now)
    assert_equal 1.5, P.parse_retry_after(" 1.5 ", now: now)
    assert_equal 30, P.parse_retry_after("Fri, 20 Nov 2026 09:30:30 GMT", now: now)
    assert_equal 0, P.parse_retry_after("Fri, 20 Nov 2026 09:00:00 GMT", now: now)
  end

  def test_ignores_what_it_cannot_read
    [nil, "", "soon", "-3", "1e3", "Someday, 99 Foo 2026"].each do |value|
      assert_nil P.parse_retry_after(value), value.inspect
    end
  end
end

class RetryTest < Minitest::Test
  include TestHelpers

  def agents(server, sleeps = [], **options)
    Agentry::Resources::Agents.new(recording_transport(server.base_url, sleeps, **options))
  end

  def test_retries_an_idempotent_call_on_5xx_408_429_409_and_broken_connections_up_to_max_retries
    [
      [FakeServer.api_error(500, "INTERNAL_ERROR"), FakeServer.api_error(408, "TIMEOUT")],
      [FakeServer.api_error(429, "RATE_LIMIT_EXCEEDED"), FakeServer.api_error(409, "BUSY")],
      [FakeServer.drop, FakeServer.api_error(503, "AGENT_UNAVAILABLE")]
    ].each do |first, second|
      server = serve(first, second, FakeServer.data(TestHelpers::AGENT))
      assert_equal "Ada", agents(server).get("agt_1").name
      assert_equal 3, server.requests.size
    end
  end

  def test_gives_up_after_max_retries_with_the_last_error
    server = serve(FakeServer.api_error(500, "INTERNAL_ERROR"), FakeServer.api_error(502, "MODEL_ERROR"),
                   FakeServer.api_error(503, "AGENT_UNAVAILABLE"), FakeServer.data(TestHelpers::AGENT))
    error = assert_raises(Agentry::InternalServerError) { agents(server).get("agt_1") }
    assert_equal "AGENT_UNAVAILABLE", error.code
    assert_equal 3, server.requests.size
  end

  def test_does_not_retry_with_max_retries_0_nor_errors_that_will_not_fix_themselves
    server = serve(FakeServer.api_error(500, "INTERNAL_ERROR"))
    assert_raises(Agentry::InternalServerError) { agents(server, max_retries: 0).get("agt_1") }
    assert_equal 1, server.requests.size

    server = serve(FakeServer.api_error(409, "AGENT_INACTIVE"))
    assert_raises(Agentry::ConflictError) { agents(server).update("agt_1", name: "x") }
    assert_equal 1, server.requests.size

    server = serve(FakeServer.api_error(403, "INSUFFICIENT_QUOTA"))
    assert_raises(Agentry::PermissionDeniedError) { agents(server).create(name: "x") }
    assert_equal 1, server.requests.size

    server = serve(FakeServer.api_error(404, "AGENT_NOT_FOUND"))
    assert_raises(Agentry::NotFoundError) { agents(server).get("agt_1") }
    assert_equal 1, server.requests.size
  end

  def test_a_per_call_max_retries_overrides_the_clients
    server = serve(FakeServer.api_error(500, "INTERNAL_ERROR"))
    assert_raises(Agentry::InternalServerError) do
      agents(server).get("agt_1", request_options: { max_retries: 4 })
    end
    assert_equal 5, server.requests.size
  end

  UUID = /\A\h{8}-\h{4}-4\h{3}-[89ab]\h{3}-\h{12}\z/

  def test_retries_a_create_like_a_read_every_attempt_under_one_idempotency_key
    [FakeServer.api_error(500, "INTERNAL_ERROR"), FakeServer.api_error(503, "AGENT_UNAVAILABLE"), FakeServer.drop,
     FakeServer.api_error(429, "RATE_LIMIT_EXCEEDED")].each do |failure|
      server = serve(failure, failure, FakeServer.data(TestHelpers::AGENT, status: 201))
      assert_equal "Ada", agents(server).create(name: "Ada").name
      assert_equal 3, server.requests.size
      keys = server.requests.map { |request| request.headers["idempotency-key"] }
      assert_match UUID, keys.first
      assert_equal [keys.first] * 3, keys
    end
  end

  def test_every_write_carries_a_new_key_or_the_callers_own_and_a_read_none
    server = serve(FakeServer.data(TestHelpers::AGENT, status: 201), FakeServer.data(TestHelpers::AGENT, status: 201),
                   FakeServer.data(TestHelpers::AGENT), FakeServer.data({ "id" => "agt_1", "deleted" => true }),
                   FakeServer.data(TestHelpers::AGENT))
    client = agents(server)
    client.create(name: "Ada")
    client.create(name: "Ada")
    client.update("agt_1", name: "Eve", request_options: { idempotency_key: "rename-to-eve" })
    client.delete("agt_1")
    client.get("agt_1", request_options: { idempotency_key: "ignored" })
    keys = server.requests.map { |request| request.headers["idempotency-key"] }
    refute_equal keys[0], keys[1]
    assert_equal "rename-to-eve", keys[2]
    [keys[0], keys[1], keys[3]].each { |key| assert_match UUID, key }
    assert_nil keys[4]
  end

  def test_in_use_waits_its_retry_after_and_reused_is_a_bad_request_never_retried
    sleeps = []
    server = serve(FakeServer.api_error(409, "IDEMPOTENCY_KEY_IN_USE", headers: { "retry-after" => "1" }),
                   FakeServer.data(TestHelpers::AGENT, status: 201))
    agents(server, sleeps).create(name: "Ada", request_options: { idempotency_key: "ada-1" })
    assert_equal [1], sleeps
    assert_equal %w[ada-1 ada-1], server.requests.map { |request| request.headers["idempotency-key"] }

    server = serve(FakeServer.api_error(422, "IDEMPOTENCY_KEY_REUSED"))
    error = assert_raises(Agentry::BadRequestError) do
      agents(server).create(name: "Eve", request_options: { idempotency_key: "ada-1" })
    end
    assert_equal [422, "IDEMPOTENCY_KEY_REUSED"], [error.status, error.code]
    assert_equal 1, server.requests.size
  end

  def test_if_match_sends_the_agents_etag_and_a_precondition_failure_is_a_conflict_never_retried
    server = serve(FakeServer.data(TestHelpers::AGENT), FakeServer.api_error(412, "PRECONDITION_FAILED"))
    agents(server).update("agt_1", name: "B", if_match: "2026-11-29T01:40:00.123Z")
    error = assert_raises(Agentry::ConflictError) do
      agents(server).delete("agt_1", if_match: 'W/"2026-11-29T01:40:00.123Z"',
                                     request_options: { headers: { "x-extra" => "1" } })
    end
    assert_equal [412, "PRECONDITION_FAILED"], [error.status, error.code]
    assert_equal 2, server.requests.size
    assert_equal ['W/"2026-11-29T01:40:00.123Z"'] * 2, server.requests.map { |request| request.headers["if-match"] }
    assert_equal "1", server.requests[1].headers["x-extra"]
  end

  def test_retries_a_connection_that_was_never_made
    sleeps = []
    error = assert_raises(Agentry::APIConnectionError) do
      Agentry::Resources::Agents.new(recording_transport(FakeServer.refused_url, sleeps)).create(name: "Ada")
    end
    refute_kind_of Agentry::APITimeoutError, error
    assert_nil error.status
    assert_equal 2, sleeps.size, "two retries, then the error"
  end

  def test_retries_a_message_on_any_5xx_under_its_key
    [[503, "AGENT_UNAVAILABLE"], [502, "MODEL_ERROR"], [500, "INTERNAL_ERROR"]].each do |status, code|
      server = serve(FakeServer.api_error(status, code), FakeServer.data(TestHelpers::REPLY))
      messages = Agentry::Resources::Agents::Messages.new(recording_transport(server.base_url, []))
      assert_equal "Hello there.", messages.create("agt_1", text: "hi").text
      assert_equal 2, server.requests.size
      assert_equal 1, server.requests.map { |request| request.headers["idempotency-key"] }.uniq.size
    end
  end

  def test_waits_the_servers_retry_after_before_retrying
    sleeps = []
    server = serve(FakeServer.api_error(429, "RATE_LIMIT_EXCEEDED", headers: { "retry-after" => "3" }),
                   FakeServer.data(TestHelpers::AGENT))
    agents(server, sleeps).get("agt_1")
    assert_equal [3.0], sleeps
  end

  def test_cuts_a_long_retry_after_to_max_retry_delay_and_the_error_keeps_the_servers_value
    sleeps = []
    server = serve(FakeServer.api_error(429, "RATE_LIMIT_EXCEEDED", headers: { "retry-after" => "58" }))
    error = assert_raises(Agentry::RateLimitError) { agents(server, sleeps, max_retry_delay: 0.05).get("agt_1") }
    assert_equal [0.05, 0.05], sleeps
    assert_equal 58, error.retry_after
  end

  def test_backs_off_exponentially_without_retry_after
    sleeps = []
    server = serve(FakeServer.api_error(500, "INTERNAL_ERROR"))
    assert_raises(Agentry::InternalServerError) { agents(server, sleeps, max_retries: 3).get("agt_1") }
    assert_equal 3, sleeps.size
    [[0.375, 0.5], [0.75, 1.0], [1.5, 2.0]].zip(sleeps).each do |(low, high), slept|
      assert_operator slept, :>=, low
      assert_operator slept, :<=, high
    end
  end

  def test_times_out_each_attempt_and_retries_an_idempotent_call_after_a_timeout
    server = serve(FakeServer.hang, FakeServer.data(TestHelpers::AGENT))
    assert_equal "Ada", agents(server, timeout: 0.2).get("agt_1").name
    assert_equal 2, server.requests.size
  end

  def test_resends_a_message_that_timed_out_under_its_key_then_raises_api_timeout_error
    server = serve(FakeServer.hang)
    messages = Agentry::Resources::Agents::Messages.new(recording_transport(server.base_url, [], timeout: 0.2))
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    error = assert_raises(Agentry::APITimeoutError) { messages.create("agt_1", text: "hi") }
    assert_kind_of Agentry::APIConnectionError, error
    assert_in_delta 0.6, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, 0.3
    assert_equal 3, server.requests.size
    assert_equal 1, server.requests.map { |request| request.headers["idempotency-key"] }.uniq.size
  end

  def test_a_per_call_timeout_overrides_the_clients
    server = serve(FakeServer.hang)
    client = client_for(server, timeout: 30, max_retries: 0)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_raises(Agentry::APITimeoutError) { client.agents.get("agt_1", request_options: { timeout: 0.2 }) }
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 1
  end

  def test_the_timeout_covers_reading_the_body_not_only_the_headers
    slow_body = lambda do |_request, socket|
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{")
      10.times do
        sleep 0.1
        socket.write(" ")
      end
    end
    server = serve(slow_body)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_raises(Agentry::APITimeoutError) { client_for(server, timeout: 0.35, max_retries: 0).agents.get("agt_1") }
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 0.8
  end
end
