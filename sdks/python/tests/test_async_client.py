"""The async client against scripted responses: the same behaviour as the sync one, awaited."""

from __future__ import annotations

from typing import Any, Dict, List

import httpx
import pytest

from agentry import (
    AgentryError,
    APIConnectionError,
    AsyncAgentry,
    ConflictError,
    InternalServerError,
    RateLimitError,
)
from agentry.types import MessageCompletedEvent, MessageDeltaEvent

from .helpers import AGENT, REPLY, Chunks, Server, error, event, ok, sse

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def page(items: List[Dict[str, Any]], number: int, has_more: bool) -> httpx.Response:
    return ok(items, pagination={"page": number, "limit": 2, "total": 3, "totalPages": 2, "hasMore": has_more})


async def test_calls_are_awaited_and_the_client_is_an_async_context_manager() -> None:
    server = Server([ok(AGENT, 201), ok(AGENT), ok(REPLY)])
    async with server.async_client() as client:
        created = await client.agents.create(name="Ada", goals=["help"])
        assert created.id == AGENT["id"]
        assert (await client.agents.get(created.id)).name == "Ada"
        reply = await client.agents.messages.send(created.id, text="hi", user_id="u1", context={"locale": "en"})
        assert reply.usage.total_tokens == 7
    assert server.body(0) == {"name": "Ada", "goals": ["help"]}
    assert server.body(2) == {"text": "hi", "userId": "u1", "context": {"locale": "en"}}
    assert client.last_rate_limit is not None and client.last_rate_limit.limit == 60


async def test_list_is_awaited_for_a_page_or_iterated_for_every_item() -> None:
    a = [{**AGENT, "id": f"agt_{n}"} for n in range(3)]
    server = Server([page(a[:2], 1, True), page(a[2:], 2, False), page(a[:2], 1, True), page(a[2:], 2, False)])
    client = server.async_client()
    first = await client.agents.list(limit=2)
    assert [x.id for x in first.data] == ["agt_0", "agt_1"] and first.has_next_page()
    assert [p.pagination.page async for p in first.iter_pages()] == [1, 2]
    assert [x.id async for x in client.agents.list(limit=2)] == ["agt_0", "agt_1", "agt_2"]
    last = await first.next_page()
    with pytest.raises(AgentryError):
        await last.next_page()


async def test_errors_and_retries_as_the_sync_client() -> None:
    server = Server([error(429, "RATE_LIMIT_EXCEEDED", headers={"retry-after": "3"})])
    with pytest.raises(RateLimitError) as raised:
        await server.async_client(max_retries=1).agents.get(AGENT["id"])
    assert raised.value.retry_after == 3 and len(server.requests) == 2

    server = Server([httpx.ReadError("reset")])
    with pytest.raises(APIConnectionError):
        await server.async_client().agents.create(name="Ada", idempotency_key="ada-1")
    assert [request.headers["idempotency-key"] for request in server.requests] == ["ada-1"] * 3

    server = Server([error(503, "AGENT_UNAVAILABLE"), ok(REPLY)])
    assert (await server.async_client().agents.messages.send(AGENT["id"], text="hi")).text == REPLY["text"]


async def test_a_stream_yields_typed_events_and_closes_its_response() -> None:
    body = Chunks([event(1, "message.delta", {"text": "a"}).encode(), event(2, "message.delta", {"text": "b"}).encode(),
                   event(3, "message.completed", REPLY).encode()])
    server = Server([sse(body=body)])
    async with server.async_client().agents.messages.stream(AGENT["id"], text="hi") as stream:
        events = [e async for e in stream]
    assert [type(e) for e in events] == [MessageDeltaEvent, MessageDeltaEvent, MessageCompletedEvent]
    assert await stream.text() == "ab"
    assert (await stream.final_message()).id == REPLY["id"]
    assert body.closed


async def test_a_dropped_async_stream_is_resumed_after_its_last_event() -> None:
    started = {"id": REPLY["id"], "agentId": AGENT["id"], "userId": None, "roomId": None}
    server = Server([
        sse(event(1, "message.started", started), httpx.ReadError("reset")),
        sse(event(2, "message.delta", {"text": "ab"}), event(3, "message.completed", REPLY)),
    ])
    stream = server.async_client().agents.messages.stream(AGENT["id"], text="hi")
    assert [e.id async for e in stream] == ["1", "2", "3"]
    assert await stream.text() == "ab"
    assert server.requests[1].headers["last-event-id"] == "1"


async def test_stream_failures_before_and_after_it_starts() -> None:
    server = Server([error(409, "AGENT_INACTIVE")])
    with pytest.raises(ConflictError):
        await server.async_client().agents.messages.stream(AGENT["id"], text="hi").text()
    server = Server([sse(event(1, "error", {"code": "MODEL_ERROR", "message": "bad key"}))])
    with pytest.raises(InternalServerError) as raised:
        async for _ in server.async_client().agents.messages.stream(AGENT["id"], text="hi"):
            pass
    assert (raised.value.status, raised.value.code) == (502, "MODEL_ERROR")


async def test_closing_the_client_closes_its_connections_but_not_one_passed_in() -> None:
    own = AsyncAgentry(api_key="k")
    await own.close()
    assert own._transport.http.is_closed
    shared = httpx.AsyncClient()
    async with AsyncAgentry(api_key="k", http_client=shared):
        pass
    assert not shared.is_closed
    await shared.aclose()
