# frozen_string_literal: true

require_relative "test_helper"

class ModelsTest < Minitest::Test
  include TestHelpers

  def agent
    Agentry::Models::Agent.from_wire(TestHelpers::AGENT)
  end

  def test_reads_every_field_with_snake_case_readers_and_ruby_types
    a = agent
    assert_equal "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1", a.id
    assert_equal ["Counts things"], a.bio
    assert_equal({ tone: "dry" }, a.personality)
    assert_nil a.model_provider
    assert_equal Time.utc(2026, 11, 20, 9, 30), a.created_at
    assert_equal Agentry::Models::AgentStatus::ACTIVE, a.status
    assert a.api_endpoint.end_with?("/messages")
  end

  def test_turns_union_items_into_models_and_keeps_the_other_shapes
    a = agent
    assert_equal "discord", a.clients[0]
    assert_instance_of Agentry::Models::ClientIntegration, a.clients[1]
    assert_equal "telegram", a.clients[1].type
    assert_equal "@ada", a.clients[1][:channel], "an integration keeps its platform's settings"
    assert_equal "web-search", a.plugins[0]
    assert_equal "calendar", a.plugins[1].name
    assert_equal false, a.plugins[1].enabled
    assert_equal({ region: "eu" }, a.plugins[1].config)
  end

  def test_a_keyed_union_reads_each_object_as_the_model_whose_own_key_it_has
    type = [:keyed, ["conversationId", "HistoryMessage"], ["source", "Memory"]]
    types = Agentry::Model::Types
    assert_instance_of Agentry::Models::Memory, types.decode(type, { "id" => "mem_1", "source" => nil })
    assert_instance_of Agentry::Models::HistoryMessage, types.decode(type, { "id" => "msg_1", "conversationId" => "c" })
    # An object with neither key is kept as it came, as any value of an unexpected shape.
    assert_equal({ id: "x_1" }, types.decode(type, { "id" => "x_1" }))
    assert types.fits?([:union, :string, type], { "source" => nil })
    refute types.fits?([:union, :string, type], { "id" => "x_1" })
  end

  def test_settings_have_readers_for_the_known_keys_and_keep_the_others
    settings = agent.settings
    assert_in_delta 0.5, settings.temperature
    assert_nil settings.max_tokens
    assert_equal "dark", settings[:theme]
    assert_equal "dark", settings["theme"]
    assert_in_delta 0.5, settings[:temperature]
    assert_in_delta 0.5, settings["temperature"]
    matched = settings in { theme: "dark", temperature: Float }
    assert matched, "pattern matching sees the undeclared keys too"
  end

  def test_every_hash_read_has_symbol_keys_all_the_way_down
    nested = { "tone" => "warm", "traits" => [{ "name" => "curious", "scores" => { "en" => 1 } }] }
    a = Agentry::Models::Agent.from_wire(
      TestHelpers::AGENT.merge("personality" => nested, "settings" => { "theme" => { "mode" => "dark" } })
    )
    assert_equal({ tone: "warm", traits: [{ name: "curious", scores: { en: 1 } }] }, a.personality)
    assert_equal({ mode: "dark" }, a.settings[:theme])
    assert_equal nested, a.to_wire["personality"], "the API's JSON is given back as it came"
    assert_equal({ "mode" => "dark" }, a.to_wire["settings"]["theme"])
  end

  def test_to_wire_gives_back_the_apis_json
    assert_equal TestHelpers::AGENT, agent.to_wire
    assert_equal TestHelpers::AGENT, JSON.parse(agent.to_json)
    assert_equal TestHelpers::REPLY, Agentry::Models::Reply.from_wire(TestHelpers::REPLY).to_wire
  end

  def test_to_h_has_snake_case_symbol_keys_all_the_way_down
    hash = agent.to_h
    assert_nil hash[:status_reason]
    assert_equal Time.utc(2026, 11, 20, 9, 31, 0.25r), hash[:updated_at]
    assert_equal({ type: "telegram", channel: "@ada" }, hash[:clients][1])
    assert_equal({ temperature: 0.5, max_tokens: nil, max_tool_steps: nil, tool_choice: nil, fallbacks: nil,
                   theme: "dark" }, hash[:settings])
    assert_equal({ tone: "dry" }, hash[:personality])
    usage = Agentry::Models::Reply.from_wire(TestHelpers::REPLY).to_h[:usage]
    assert_equal({ input_tokens: 42, output_tokens: 3, total_tokens: 45 }, usage)
  end

  def test_nested_models_and_status_reasons
    failed = Agentry::Models::Agent.from_wire(
      TestHelpers::AGENT.merge("status" => "error",
                               "statusReason" => { "code" => "MODEL_ERROR", "message" => "bad key", "at" => "2026-11-20T10:00:00.000Z" })
    )
    assert_equal "MODEL_ERROR", failed.status_reason.code
    assert_equal Time.utc(2026, 11, 20, 10), failed.status_reason.at
  end

  def test_supports_pattern_matching
    outcome =
      case agent
      in { status: "error", status_reason: { code: } } then "failed: #{code}"
      in { status: "active", name: String => name } then "active: #{name}"
      end
    assert_equal "active: Ada", outcome
  end

  def test_keeps_fields_of_a_newer_api_version
    newer = Agentry::Models::Reply.from_wire(TestHelpers::REPLY.merge("sentiment" => "warm"))
    assert_equal "warm", newer[:sentiment]
    assert_equal "warm", newer["sentiment"]
    assert_equal "warm", newer.to_wire["sentiment"]
  end

  def test_is_lenient_with_values_of_an_unexpected_shape
    odd = Agentry::Models::Agent.from_wire(TestHelpers::AGENT.merge("createdAt" => "yesterday", "bio" => "one"))
    assert_equal "yesterday", odd.created_at
    assert_equal "one", odd.bio
  end

  def test_equality_and_hash_follow_the_values
    assert_equal agent, agent
    assert_equal agent.hash, agent.hash
    refute_equal agent, Agentry::Models::Agent.from_wire(TestHelpers::AGENT.merge("name" => "Bob"))
  end

  def test_can_be_built_with_keywords_to_pass_in_requests
    plugin = Agentry::Models::PluginConfig.new(name: "calendar", enabled: true)
    assert_equal({ "name" => "calendar", "enabled" => true }, plugin.to_wire)
    assert_raises(ArgumentError) { Agentry::Models::PluginConfig.new(nmae: "typo") }
  end

  def test_inspect_hides_a_new_keys_secret
    created = Agentry::Models::ApiKeyCreated.from_wire(
      "id" => "key_1", "name" => "ci", "prefix" => "agentry_sk_ab", "scopes" => [], "createdAt" => nil,
      "lastUsedAt" => nil, "expiresAt" => nil, "key" => "agentry_sk_supersecret"
    )
    assert_equal "agentry_sk_supersecret", created.key
    refute_includes created.inspect, "supersecret"
    assert_includes created.inspect, "key=[REDACTED]"
  end

  def test_enums_name_their_values
    assert_equal %w[agents:read agents:write agents:delete messages:send keys:manage history:read history:delete
                    usage:read webhooks:manage plugins:manage members:read members:write budgets:read
                    budgets:write audit:read], Agentry::Models::Scope::ALL
    assert_equal "content_filter", Agentry::Models::FinishReason::CONTENT_FILTER
    assert_equal 503, Agentry::ERROR_CODE_STATUS["AGENT_UNAVAILABLE"]
  end
end
