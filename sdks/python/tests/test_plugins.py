"""The plugin catalogue, agents' secrets, and tool calls in replies, history and streams."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from agentry import NotFoundError
from agentry.types import (
    MessageCompletedEvent,
    MessageDeltaEvent,
    MessageStartedEvent,
    Plugin,
    Secret,
    ToolCall,
    ToolCallEvent,
    ToolCallStarted,
    ToolResultEvent,
)

from .helpers import AGENT, REPLY, Server, error, event, ok, sse

CALCULATOR: Dict[str, Any] = {
    "name": "calculator",
    "version": "1.0.0",
    "description": "Exact decimal arithmetic.",
    "configSchema": {"type": "object", "properties": {"precision": {"type": "integer"}}},
    "secrets": [],
    "tools": [{"name": "calculate", "description": "Compute an expression.",
               "inputSchema": {"type": "object", "properties": {"expression": {"type": "string"}}}}],
}
SECRET = {"name": "MCP_TOKEN", "updatedAt": "2026-01-01T00:00:00.000Z"}
CALL = {"id": "call_1", "name": "calculator__calculate", "arguments": {"expression": "6 * 7"}}
RESULT = {**CALL, "ok": True, "output": {"result": "42"}}
FAILED = {**CALL, "id": "call_2", "ok": False, "error": "Division by zero"}


def test_the_catalogue_is_typed() -> None:
    server = Server([ok([CALCULATOR])])
    plugins = server.client().plugins.list()
    assert server.requests[0].method == "GET" and server.requests[0].url.path == "/v1/plugins"
    assert isinstance(plugins[0], Plugin)
    assert plugins[0].config_schema == CALCULATOR["configSchema"]
    assert plugins[0].tools[0].name == "calculate"
    assert plugins[0].tools[0].input_schema["properties"] == {"expression": {"type": "string"}}


def test_secrets_map_to_their_routes_and_the_value_goes_only_in_the_put() -> None:
    server = Server([ok(SECRET), ok([SECRET]), ok({"name": "MCP_TOKEN", "deleted": True})])
    secrets = server.client().agents.secrets
    stored = secrets.set(AGENT["id"], "MCP_TOKEN", value="s3cret")
    assert isinstance(stored, Secret) and stored.name == "MCP_TOKEN"
    assert [s.name for s in secrets.list(AGENT["id"])] == ["MCP_TOKEN"]
    assert secrets.delete(AGENT["id"], "MCP_TOKEN").deleted is True
    assert [(r.method, r.url.path) for r in server.requests] == [
        ("PUT", f"/v1/agents/{AGENT['id']}/secrets/MCP_TOKEN"),
        ("GET", f"/v1/agents/{AGENT['id']}/secrets"),
        ("DELETE", f"/v1/agents/{AGENT['id']}/secrets/MCP_TOKEN"),
    ]
    assert server.body(0) == {"value": "s3cret"}
    assert "idempotency-key" in server.requests[0].headers
    assert "idempotency-key" not in server.requests[1].headers


def test_a_missing_secret_is_not_found() -> None:
    server = Server([error(404, "SECRET_NOT_FOUND")])
    with pytest.raises(NotFoundError) as raised:
        server.client().agents.secrets.delete(AGENT["id"], "NOPE")
    assert raised.value.code == "SECRET_NOT_FOUND"


def test_a_reply_carries_typed_tool_calls() -> None:
    server = Server([ok({**REPLY, "toolCalls": [RESULT, FAILED]})])
    reply = server.client().agents.messages.send(AGENT["id"], text="6 * 7?")
    assert reply.tool_calls is not None
    assert [type(c) for c in reply.tool_calls] == [ToolCall, ToolCall]
    assert (reply.tool_calls[0].ok, reply.tool_calls[0].output) == (True, {"result": "42"})
    assert (reply.tool_calls[1].ok, reply.tool_calls[1].error) == (False, "Division by zero")
    assert reply.to_dict()["toolCalls"][1] == FAILED


def test_a_stream_yields_tool_events_between_the_deltas() -> None:
    started = {"id": REPLY["id"], "agentId": AGENT["id"], "userId": None, "roomId": None}
    server = Server([sse(event(1, "message.started", started),
                         event(2, "tool.call", CALL),
                         event(3, "tool.result", RESULT),
                         event(4, "message.delta", {"text": "42"}),
                         event(5, "message.completed", {**REPLY, "text": "42", "toolCalls": [RESULT]}))])
    with server.client().agents.messages.stream(AGENT["id"], text="6 * 7?") as stream:
        events = list(stream)
    assert [type(e) for e in events] == [MessageStartedEvent, ToolCallEvent, ToolResultEvent, MessageDeltaEvent,
                                         MessageCompletedEvent]
    call, result = events[1], events[2]
    assert isinstance(call, ToolCallEvent) and isinstance(call.data, ToolCallStarted)
    assert (call.id, call.data.name, call.data.arguments) == ("2", "calculator__calculate", {"expression": "6 * 7"})
    assert isinstance(result, ToolResultEvent) and result.data.ok and result.data.output == {"result": "42"}
    assert result.to_dict() == {"type": "tool.result", "id": "3", "data": RESULT}
    assert stream.text() == "42"
    final = stream.final_message()
    assert final.tool_calls is not None and final.tool_calls[0].id == "call_1"
