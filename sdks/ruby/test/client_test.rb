# frozen_string_literal: true

require_relative "test_helper"

class ClientTest < Minitest::Test
  include TestHelpers

  def test_takes_the_key_and_base_url_from_the_environment_when_not_given
    server = serve(FakeServer.data(TestHelpers::AGENT))
    with_env("AGENTRY_API_KEY" => "agentry_sk_env", "AGENTRY_BASE_URL" => "#{server.base_url}/") do
      client = Agentry::Client.new
      assert_equal server.base_url, client.base_url
      client.agents.get("agt_1")
    end
    assert_equal "Bearer agentry_sk_env", server.requests[0].headers["authorization"]
  end

  def test_prefers_the_constructors_settings_to_the_environment
    with_env("AGENTRY_API_KEY" => "agentry_sk_env", "AGENTRY_BASE_URL" => "http://env.example/v1") do
      client = Agentry::Client.new(api_key: "agentry_sk_arg", base_url: "https://api.example.com/v1")
      assert_equal "https://api.example.com/v1", client.base_url
    end
  end

  def test_defaults_to_the_local_service_30_seconds_and_2_retries
    with_env("AGENTRY_BASE_URL" => nil) do
      client = Agentry::Client.new(api_key: "agentry_sk_x")
      assert_equal "http://localhost:8080/v1", client.base_url
      assert_equal 30, client.timeout
      assert_equal 2, client.max_retries
      assert_equal 60, client.max_retry_delay
    end
  end

  def test_says_clearly_when_there_is_no_key
    with_env("AGENTRY_API_KEY" => " ") do
      error = assert_raises(Agentry::Error) { Agentry::Client.new }
      assert_match(/AGENTRY_API_KEY/, error.message)
    end
  end

  def test_refuses_settings_out_of_range
    assert_raises(Agentry::Error) { Agentry::Client.new(api_key: "k", timeout: 0) }
    assert_raises(Agentry::Error) { Agentry::Client.new(api_key: "k", max_retries: -1) }
    assert_raises(Agentry::Error) { Agentry::Client.new(api_key: "k", max_retries: 1.5) }
    assert_raises(Agentry::Error) { Agentry::Client.new(api_key: "k", max_retry_delay: -1) }
    assert_raises(Agentry::Error) { Agentry::Client.new(api_key: "k", base_url: "localhost:8080/v1") }
  end

  def test_never_shows_the_key
    client = Agentry::Client.new(api_key: "agentry_sk_secret", base_url: "http://localhost:1/v1")
    refute_includes client.inspect, "agentry_sk_secret"
    refute_includes client.to_s, "agentry_sk_secret"
  end

  def test_with_options_keeps_the_other_settings
    server = serve(FakeServer.data(TestHelpers::AGENT))
    client = Agentry::Client.new(api_key: "agentry_sk_one", base_url: server.base_url, max_retries: 5)
    other = client.with_options(timeout: 7)
    assert_equal 7, other.timeout
    assert_equal 5, other.max_retries
    other.agents.get("agt_1")
    assert_equal "Bearer agentry_sk_one", server.requests[0].headers["authorization"]
  end

  def test_sends_json_with_the_key_the_libraries_name_and_the_callers_headers
    server = serve(FakeServer.data(TestHelpers::AGENT, status: 201))
    client = client_for(server, default_headers: { "x-team" => "core" })
    client.agents.create(name: "Ada", request_options: { headers: { "X-Request-Id" => "mine-1" } })
    request = server.requests[0]
    assert_equal "POST", request.method
    assert_equal "/v1/agents", request.path
    assert_equal "Bearer agentry_sk_test", request.headers["authorization"]
    assert_equal "application/json", request.headers["content-type"]
    assert_equal "application/json", request.headers["accept"]
    assert_equal "agentry-ruby/#{Agentry::VERSION}", request.headers["user-agent"]
    assert_equal "core", request.headers["x-team"]
    assert_equal "mine-1", request.headers["x-request-id"]
    assert_equal({ "name" => "Ada" }, request.body)
  end

  def test_maps_every_operation_to_its_route_with_snake_case_keywords
    deleted = { "id" => "agt_1", "deleted" => true }
    key = { "id" => "key_1", "name" => "ci", "prefix" => "agentry_sk_ab", "scopes" => ["agents:read"],
            "createdAt" => "2026-11-20T09:30:00.000Z", "lastUsedAt" => nil, "expiresAt" => "2027-01-01T00:00:00.000Z" }
    server = serve(
      FakeServer.data(TestHelpers::AGENT, status: 201),
      FakeServer.data([TestHelpers::AGENT], pagination: { page: 2, limit: 1, total: 3, totalPages: 3, hasMore: true }),
      FakeServer.data(TestHelpers::AGENT),
      FakeServer.data(TestHelpers::AGENT),
      FakeServer.data(deleted),
      FakeServer.data(TestHelpers::REPLY),
      FakeServer.data(key.merge("key" => "agentry_sk_#{'a' * 38}"), status: 201),
      FakeServer.data([key]),
      FakeServer.data({ "id" => "key_1", "revoked" => true })
    )
    client = client_for(server)
    client.agents.create(name: "Ada", model_provider: :openai, settings: { temperature: 0.2, theme: "dark" },
                         plugins: ["web-search", Agentry::Models::PluginConfig.new(name: "calendar", enabled: false)])
    client.agents.list(page: 2, limit: 1, sort_by: "name", order: :asc, status: "active")
    client.agents.get("agt_1")
    client.agents.update("agt_1", name: "Ada II", model: nil, status: :inactive)
    client.agents.delete("agt_1")
    client.agents.messages.create("agt_1", text: "hi", user_id: "u1", context: { locale: "en-GB" })
    client.api_keys.create(name: "ci", scopes: ["agents:read"], expires_at: Time.utc(2027, 1, 1))
    client.api_keys.list
    client.api_keys.revoke("key_1")

    seen = server.requests.map { |r| [r.method, r.path, r.query, r.body] }
    assert_equal [
      ["POST", "/v1/agents", {}, { "name" => "Ada", "modelProvider" => "openai",
                                   "settings" => { "temperature" => 0.2, "theme" => "dark" },
                                   "plugins" => ["web-search", { "name" => "calendar", "enabled" => false }] }],
      ["GET", "/v1/agents", { "page" => "2", "limit" => "1", "status" => "active", "sortBy" => "name",
                              "order" => "asc" }, nil],
      ["GET", "/v1/agents/agt_1", {}, nil],
      ["PATCH", "/v1/agents/agt_1", {}, { "name" => "Ada II", "model" => nil, "status" => "inactive" }],
      ["DELETE", "/v1/agents/agt_1", {}, nil],
      ["POST", "/v1/agents/agt_1/messages", {}, { "text" => "hi", "userId" => "u1", "context" => { "locale" => "en-GB" } }],
      ["POST", "/v1/api-keys", {}, { "name" => "ci", "scopes" => ["agents:read"], "expiresAt" => "2027-01-01T00:00:00.000Z" }],
      ["GET", "/v1/api-keys", {}, nil],
      ["DELETE", "/v1/api-keys/key_1", {}, nil]
    ], seen
  end

  def test_free_form_hashes_sent_with_symbol_keys_come_back_equal
    echo = lambda do |request, socket|
      FakeServer.data(TestHelpers::AGENT.merge(request.body), status: 201).call(request, socket)
    end
    client = client_for(serve(echo))
    personality = { tone: "warm", traits: ["curious", { depth: 2 }] }
    agent = client.agents.create(name: "Ada", personality: personality, settings: { temperature: 0.2, theme: "dark" },
                                 plugins: [{ name: "calendar", config: { region: "eu" } }])
    assert_equal personality, agent.personality
    assert_equal "dark", agent.settings[:theme]
    assert_equal({ temperature: 0.2, max_tokens: nil, max_tool_steps: nil, tool_choice: nil, fallbacks: nil,
                   theme: "dark" }, agent.settings.to_h)
    assert_equal({ region: "eu" }, agent.plugins[0].config)

    sent_with_strings = client.agents.create(name: "Ada", personality: { "tone" => "warm" })
    assert_equal({ tone: "warm" }, sent_with_strings.personality, "String keys come back as Symbols too")
  end

  def test_requires_the_required_keywords_and_refuses_unknown_ones_before_sending
    server = serve(FakeServer.data(TestHelpers::AGENT))
    client = client_for(server)
    assert_raises(ArgumentError) { client.agents.create(bio: ["x"]) }
    assert_raises(ArgumentError) { client.agents.create(name: "Ada", nickname: "A") }
    assert_raises(ArgumentError) { client.agents.get("agt_1", request_options: { retries: 1 }) }
    assert_empty server.requests
  end

  def test_sends_fields_it_does_not_know_yet_as_extra_body_and_extra_query
    server = serve(FakeServer.data(TestHelpers::AGENT), FakeServer.data([], pagination: { page: 1, limit: 20, total: 0, totalPages: 0, hasMore: false }))
    client = client_for(server)
    client.agents.create(name: "Ada", request_options: { extra_body: { mood: "sunny" } })
    client.agents.list(request_options: { extra_query: { tag: "x" } })
    assert_equal({ "name" => "Ada", "mood" => "sunny" }, server.requests[0].body)
    assert_equal({ "tag" => "x" }, server.requests[1].query)
  end

  def test_escapes_ids_in_paths_and_refuses_empty_ones_before_sending
    server = serve(FakeServer.data(TestHelpers::AGENT))
    client = client_for(server)
    assert_raises(ArgumentError) { client.agents.get("") }
    assert_raises(ArgumentError) { client.agents.get(nil) }
    assert_empty server.requests
    client.agents.get("a/b c?d")
    assert_equal "/v1/agents/a%2Fb%20c%3Fd", server.requests[0].path
  end

  def test_records_the_rate_limit_state_of_the_last_response_errors_included
    limits = ->(remaining) { { "x-ratelimit-limit" => "60", "x-ratelimit-remaining" => remaining.to_s, "x-ratelimit-reset" => "1790000000" } }
    server = serve(
      FakeServer.data(TestHelpers::AGENT, headers: limits.call(59)),
      FakeServer.json(200, { "success" => true, "data" => TestHelpers::AGENT }),
      FakeServer.api_error(429, "RATE_LIMIT_EXCEEDED", headers: limits.call(0).merge("retry-after" => "30"))
    )
    client = client_for(server, max_retries: 0)
    assert_nil client.last_rate_limit
    client.agents.get("agt_1")
    assert_equal Agentry::RateLimit.new(limit: 60, remaining: 59, reset_at: Time.at(1_790_000_000)), client.last_rate_limit
    client.agents.get("agt_1")
    assert_equal 59, client.last_rate_limit.remaining, "a response without the headers keeps the last state"
    assert_raises(Agentry::RateLimitError) { client.agents.get("agt_1") }
    assert_equal 0, client.last_rate_limit.remaining
  end

  {
    [400, "INVALID_REQUEST"] => Agentry::BadRequestError,
    [401, "UNAUTHORIZED"] => Agentry::AuthenticationError,
    [403, "FORBIDDEN"] => Agentry::PermissionDeniedError,
    [403, "INSUFFICIENT_QUOTA"] => Agentry::PermissionDeniedError,
    [404, "AGENT_NOT_FOUND"] => Agentry::NotFoundError,
    [405, "METHOD_NOT_ALLOWED"] => Agentry::BadRequestError,
    [409, "AGENT_INACTIVE"] => Agentry::ConflictError,
    [413, "PAYLOAD_TOO_LARGE"] => Agentry::BadRequestError,
    [415, "UNSUPPORTED_MEDIA_TYPE"] => Agentry::BadRequestError,
    [422, "UNPROCESSABLE"] => Agentry::BadRequestError,
    [418, "TEAPOT"] => Agentry::APIError,
    [429, "RATE_LIMIT_EXCEEDED"] => Agentry::RateLimitError,
    [500, "INTERNAL_ERROR"] => Agentry::InternalServerError,
    [502, "MODEL_ERROR"] => Agentry::InternalServerError,
    [503, "AGENT_UNAVAILABLE"] => Agentry::InternalServerError
  }.each do |(status, code), error_class|
    define_method("test_#{status}_#{code.downcase}_is_a_#{error_class.name.split('::').last}") do
      server = serve(FakeServer.api_error(status, code))
      error = assert_raises(error_class) { client_for(server, max_retries: 0).agents.get("agt_1") }
      assert_equal error_class, error.class
      assert_kind_of Agentry::APIError, error
      assert_kind_of Agentry::Error, error
      assert_equal status, error.status
      assert_equal code, error.code
      assert_equal "req_body", error.request_id
      assert_equal "req_header", error.headers["x-request-id"]
      assert_equal "#{status} #{code}: #{code} happened.", error.message
    end
  end

  def test_carries_the_field_details_of_a_400
    details = [{ "field" => "name", "issue" => "must not be empty" }, { "field" => "bio[2]", "issue" => "must be a string" }]
    server = serve(FakeServer.api_error(400, "INVALID_REQUEST", details: details))
    error = assert_raises(Agentry::BadRequestError) { client_for(server).agents.create(name: "") }
    assert_equal %w[name bio[2]], error.details.map(&:field)
    assert_equal "must not be empty", error.details[0].issue
    assert_equal details, error.details.map(&:to_wire)
  end

  def test_carries_retry_after_of_a_429
    server = serve(FakeServer.api_error(429, "RATE_LIMIT_EXCEEDED", headers: { "retry-after" => "17" }))
    error = assert_raises(Agentry::RateLimitError) { client_for(server, max_retries: 0).agents.get("agt_1") }
    assert_equal 17, error.retry_after
    assert_equal "RATE_LIMIT_EXCEEDED", error.body[:error][:code], "the body's Hashes have Symbol keys"
  end

  def test_copes_with_an_error_body_that_is_not_the_apis
    server = serve(FakeServer.json(502, "<html>Bad gateway</html>", "content-type" => "text/html"))
    error = assert_raises(Agentry::InternalServerError) { client_for(server, max_retries: 0).agents.get("agt_1") }
    assert_nil error.code
    assert_equal "req_header", error.request_id
    assert_equal "502: <html>Bad gateway</html>", error.message
    assert_equal "<html>Bad gateway</html>", error.body
  end

  def test_reports_a_success_body_that_is_not_json
    server = serve(FakeServer.json(200, "not json"))
    error = assert_raises(Agentry::APIError) { client_for(server).agents.get("agt_1") }
    assert_equal 200, error.status
    assert_equal 1, server.requests.size
  end
end
