# frozen_string_literal: true

$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "minitest/autorun"
require "agentry"
require_relative "support/fake_server"

module TestHelpers
  AGENT = {
    "id" => "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1", "name" => "Ada", "bio" => ["Counts things"],
    "personality" => { "tone" => "dry" }, "knowledge" => [], "goals" => ["help"],
    "clients" => ["discord", { "type" => "telegram", "channel" => "@ada" }],
    "settings" => { "temperature" => 0.5, "theme" => "dark" }, "modelProvider" => nil, "model" => nil,
    "plugins" => ["web-search", { "name" => "calendar", "enabled" => false, "config" => { "region" => "eu" } }],
    "status" => "active", "statusReason" => nil, "createdAt" => "2026-11-20T09:30:00.000Z",
    "updatedAt" => "2026-11-20T09:31:00.250Z",
    "apiEndpoint" => "http://localhost:8080/v1/agents/agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1/messages"
  }.freeze

  REPLY = {
    "id" => "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1", "agentId" => AGENT["id"], "userId" => "u1", "roomId" => nil,
    "text" => "Hello there.", "model" => "gpt-4o-mini", "modelProvider" => "openai", "finishReason" => "stop",
    "usage" => { "inputTokens" => 42, "outputTokens" => 3, "totalTokens" => 45 }, "latencyMs" => 812,
    "createdAt" => "2026-11-20T09:30:00.812Z"
  }.freeze

  def serve(*handlers)
    @servers ||= []
    server = FakeServer.new(*handlers)
    @servers << server
    server
  end

  def teardown
    (@servers || []).each(&:stop)
    super
  end

  # A client of +server+ whose retries wait at most 10 ms.
  def client_for(server, **options)
    Agentry::Client.new(api_key: "agentry_sk_test", base_url: server.base_url, max_retry_delay: 0.01, **options)
  end

  # A transport whose waits before retries are recorded instead of slept.
  def recording_transport(base_url, sleeps, **options)
    Agentry::Transport.new(api_key: "agentry_sk_test", base_url: base_url, timeout: 5, max_retries: 2,
                           max_retry_delay: 60, default_headers: {}, sleeper: ->(seconds) { sleeps << seconds },
                           **options)
  end

  def with_env(values)
    saved = values.keys.to_h { |name| [name, ENV.fetch(name, nil)] }
    values.each { |name, value| ENV[name] = value }
    yield
  ensure
    saved.each { |name, value| ENV[name] = value }
  end
end
