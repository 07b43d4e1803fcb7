# frozen_string_literal: true

require_relative "test_helper"

class PluginsTest < Minitest::Test
  include TestHelpers

  CALCULATOR = {
    "name" => "calculator", "version" => "1.0.0", "description" => "Exact decimal arithmetic.",
    "configSchema" => { "type" => "object" }, "secrets" => [],
    "tools" => [{ "name" => "calculate", "description" => "Compute.",
                  "inputSchema" => { "type" => "object", "required" => ["expression"] } }]
  }.freeze
  SECRET = { "name" => "MCP_TOKEN", "updatedAt" => "2026-01-01T00:00:00.000Z" }.freeze
  CALL = { "id" => "call_1", "name" => "calculator__calculate", "arguments" => { "expression" => "6 * 7" } }.freeze
  RESULT = CALL.merge("ok" => true, "output" => { "result" => "42" }).freeze
  FAILED = CALL.merge("id" => "call_2", "ok" => false, "error" => "Division by zero").freeze

  def frame(id, event, data)
    "id: #{id}\nevent: #{event}\ndata: #{JSON.generate(data)}\n\n"
  end

  def test_the_catalogue_is_typed
    server = serve(FakeServer.data([CALCULATOR]))
    plugins = client_for(server).plugins.list
    assert_equal "GET", server.requests[0].method
    assert_equal "/v1/plugins", server.requests[0].path
    assert_instance_of Agentry::Models::Plugin, plugins[0]
    assert_equal "calculate", plugins[0].tools[0].name
    assert_equal({ type: "object", required: ["expression"] }, plugins[0].tools[0].input_schema)
  end

  def test_secrets_map_to_their_routes_and_the_value_goes_only_in_the_put
    server = serve(FakeServer.data(SECRET), FakeServer.data([SECRET]),
                   FakeServer.data({ "name" => "MCP_TOKEN", "deleted" => true }),
                   FakeServer.api_error(404, "SECRET_NOT_FOUND"))
    secrets = client_for(server).agents.secrets
    stored = secrets.set("agt_1", "MCP_TOKEN", value: "s3cret")
    assert_instance_of Agentry::Models::Secret, stored
    assert_equal Time.utc(2026, 1, 1), stored.updated_at
    assert_equal ["MCP_TOKEN"], secrets.list("agt_1").map(&:name)
    assert secrets.delete("agt_1", "MCP_TOKEN").deleted
    error = assert_raises(Agentry::NotFoundError) { secrets.delete("agt_1", "MCP_TOKEN") }
    assert_equal "SECRET_NOT_FOUND", error.code
    assert_equal ["PUT /v1/agents/agt_1/secrets/MCP_TOKEN", "GET /v1/agents/agt_1/secrets",
                  "DELETE /v1/agents/agt_1/secrets/MCP_TOKEN"],
                 server.requests.first(3).map { |r| "#{r.method} #{r.path}" }
    assert_equal({ "value" => "s3cret" }, server.requests[0].body)
    assert_match(/\A\h{8}-\h{4}-4\h{3}-\h{4}-\h{12}\z/, server.requests[0].headers["idempotency-key"])
    assert_nil server.requests[1].headers["idempotency-key"]
  end

  def test_a_reply_carries_typed_tool_calls
    server = serve(FakeServer.data(TestHelpers::REPLY.merge("toolCalls" => [RESULT, FAILED])))
    reply = client_for(server).agents.messages.create("agt_1", text: "6 * 7?")
    assert_equal [Agentry::Models::ToolCall] * 2, reply.tool_calls.map(&:class)
    assert_equal({ result: "42" }, reply.tool_calls[0].output)
    refute reply.tool_calls[1].ok
    assert_equal "Division by zero", reply.tool_calls[1].error
    assert_equal [RESULT, FAILED], reply.to_wire["toolCalls"]
  end

  def test_a_stream_yields_tool_events_between_the_deltas
    started = { "id" => "msg_1", "agentId" => "agt_1", "userId" => nil, "roomId" => nil }
    completed = TestHelpers::REPLY.merge("text" => "42", "toolCalls" => [RESULT])
    server = serve(FakeServer.sse([frame(1, "message.started", started), frame(2, "tool.call", CALL),
                                   frame(3, "tool.result", RESULT), frame(4, "message.delta", { "text" => "42" }),
                                   frame(5, "message.completed", completed)]))
    stream = client_for(server).agents.messages.stream("agt_1", text: "6 * 7?")
    events = stream.to_a
    assert_equal %w[message.started tool.call tool.result message.delta message.completed], events.map(&:type)
    assert_instance_of Agentry::Models::ToolCallStarted, events[1].data
    assert_equal({ expression: "6 * 7" }, events[1].data.arguments)
    assert_instance_of Agentry::Models::ToolCall, events[2].data
    assert events[2].data.ok
    assert_equal({ "type" => "tool.result", "id" => "3", "data" => RESULT }, events[2].to_wire)
    assert_equal "42", stream.text
    assert_equal "call_1", stream.final_message.tool_calls[0].id
  end
end
