"""The history operations against scripted responses: cursor pages, a user's export streamed as NDJSON, erasure."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any, Dict, Iterator, List, Optional, Union

import httpx
import pytest

from agentry import (
    Agentry,
    AgentryError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    APIUserAbortError,
    AsyncCursorPage,
    BadRequestError,
    SyncCursorPage,
)
from agentry.types import Conversation, Delivery, HistoryMessage, Memory

from .helpers import AGENT, Chunks, Server, error, ok

AGENT_ID = AGENT["id"]


def message(n: int, role: str = "user", **extra: Any) -> Dict[str, Any]:
    base: Dict[str, Any] = {
        "id": f"msg_{n:02d}",
        "agentId": AGENT_ID,
        "conversationId": "conv_1",
        "userId": "user-42",
        "roomId": None,
        "role": role,
        "text": f"text {n}",
        "createdAt": f"2026-11-20T09:30:{n:02d}.000Z",
    }
    if role == "assistant":
        base.update(model="gpt-4o-mini", modelProvider="openai", finishReason="stop",
                    usage={"inputTokens": 4, "outputTokens": 3, "totalTokens": 7}, latencyMs=12)
    return {**base, **extra}


def memory(n: int, source: Optional[str] = "msg_01") -> Dict[str, Any]:
    return {
        "id": f"mem_{n:02d}",
        "agentId": AGENT_ID,
        "userId": "user-42",
        "text": f"fact {n}",
        "source": None if source is None else {"messageId": source},
        "createdAt": f"2026-11-21T09:30:{n:02d}.000Z",
    }


def cursor_page(items: List[Dict[str, Any]], has_more: bool, limit: int = 2) -> httpx.Response:
    return ok(items, pagination={"limit": limit, "hasMore": has_more})


def ndjson(*pieces: Any, status: int = 200) -> httpx.Response:
    """An NDJSON response whose body arrives in these pieces (an exception is raised in its place)."""
    body = Chunks([p.encode("utf-8") if isinstance(p, str) else p for p in pieces])
    return httpx.Response(
        status, headers={"content-type": "application/x-ndjson", "x-request-id": "req_export"}, stream=body
    )


def line(item: Dict[str, Any]) -> str:
    return json.dumps(item) + "\n"


class TestCursorPages:
    def test_newest_first_the_next_page_is_before_the_last_item(self) -> None:
        server = Server([
            cursor_page([message(4), message(3)], True),
            cursor_page([message(2), message(1)], True),
            cursor_page([], False),
        ])
        first = server.client().agents.messages.list(AGENT_ID, user_id="user-42", limit=2)
        assert isinstance(first, SyncCursorPage)
        assert [m.id for m in first.data] == ["msg_04", "msg_03"]
        assert first.pagination.limit == 2 and first.pagination.has_more
        assert first.has_next_page() and first.next_cursor == "msg_03"
        assert all(isinstance(m, HistoryMessage) for m in first.data)
        assert [m.id for m in first] == ["msg_04", "msg_03", "msg_02", "msg_01"]
        assert [dict(r.url.params) for r in server.requests] == [
            {"userId": "user-42", "limit": "2"},
            {"userId": "user-42", "limit": "2", "before": "msg_03"},
            {"userId": "user-42", "limit": "2", "before": "msg_01"},
        ]
        assert server.requests[0].url.path == f"/v1/agents/{AGENT_ID}/messages"

    def test_oldest_first_the_next_page_is_after_the_last_item(self) -> None:
        server = Server([cursor_page([message(1), message(2)], True), cursor_page([message(3)], False)])
        listed = server.client().agents.messages.list(AGENT_ID, order="asc", limit=2)
        assert [m.id for m in listed] == ["msg_01", "msg_02", "msg_03"]
        assert dict(server.requests[1].url.params) == {"order": "asc", "limit": "2", "after": "msg_02"}

    def test_a_page_asked_for_with_a_cursor_goes_on_that_way(self) -> None:
        # `after` newest first: toward newer items, so the next page is after the page's newest (first) item.
        server = Server([cursor_page([message(6), message(5)], True), cursor_page([message(8), message(7)], False)])
        page = server.client().agents.messages.list(AGENT_ID, after="msg_04", limit=2)
        assert page.next_cursor == "msg_06"
        assert [p.next_cursor for p in page.iter_pages()] == ["msg_06", "msg_08"]
        assert dict(server.requests[1].url.params) == {"limit": "2", "after": "msg_06"}
        # `before` oldest first: toward older items, so the next page is before the page's oldest (first) item.
        server = Server([cursor_page([message(3), message(4)], True), cursor_page([message(1)], False)])
        page = server.client().agents.messages.list(AGENT_ID, before="msg_05", order="asc", limit=2)
        assert [m.id for m in page] == ["msg_03", "msg_04", "msg_01"]
        assert dict(server.requests[1].url.params) == {"order": "asc", "limit": "2", "before": "msg_03"}

    def test_the_last_page_and_an_empty_one_end_the_listing(self) -> None:
        server = Server([cursor_page([message(1)], False)])
        page = server.client().agents.messages.list(AGENT_ID)
        assert not page.has_next_page()
        with pytest.raises(AgentryError, match="no next page"):
            page.next_page()
        server = Server([cursor_page([], True)])
        assert list(server.client().agents.messages.list(AGENT_ID)) == []
        assert len(server.requests) == 1

    def test_conversations_and_the_delivery_log_page_the_same_way(self) -> None:
        conversation = {"id": "conv_2", "agentId": AGENT_ID, "userId": "u", "roomId": None, "messageCount": 2,
                        "createdAt": "2026-11-20T09:30:00.000Z", "lastMessageAt": "2026-11-20T09:31:00.000Z"}
        server = Server([cursor_page([conversation], True, limit=1), cursor_page([{**conversation, "id": "conv_1"}],
                                                                                   False, limit=1)])
        conversations = list(server.client().agents.conversations.list(AGENT_ID, limit=1))
        assert [c.id for c in conversations] == ["conv_2", "conv_1"]
        assert isinstance(conversations[0], Conversation)
        assert dict(server.requests[1].url.params) == {"limit": "1", "before": "conv_2"}
        delivery = {"id": "dlv_2", "eventId": "evt_1", "eventType": "webhook.test", "attempt": 2,
                    "status": "succeeded", "responseStatus": 204, "durationMs": 5, "error": None,
                    "createdAt": "2026-11-20T09:30:00.000Z", "nextAttemptAt": None}
        server = Server([cursor_page([delivery], True, limit=1), cursor_page([{**delivery, "id": "dlv_1"}], False)])
        deliveries = list(server.client().webhook_endpoints.deliveries.list("whk_1", limit=1))
        assert [d.id for d in deliveries] == ["dlv_2", "dlv_1"] and isinstance(deliveries[0], Delivery)
        assert server.requests[1].url.path == "/v1/webhooks/whk_1/deliveries"
        assert dict(server.requests[1].url.params) == {"limit": "1", "before": "dlv_2"}

    def test_a_failing_page_raises_while_iterating(self) -> None:
        server = Server([cursor_page([message(2)], True), error(400, "INVALID_REQUEST")])
        seen: List[str] = []
        with pytest.raises(BadRequestError):
            for item in server.client(max_retries=0).agents.messages.list(AGENT_ID):
                seen.append(item.id)
        assert seen == ["msg_02"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_async_cursor_pager_is_awaited_for_a_page_or_iterated_for_every_item() -> None:
    server = Server([cursor_page([message(4), message(3)], True), cursor_page([message(2)], False)] * 2)
    client = server.async_client()
    first = await client.agents.messages.list(AGENT_ID, limit=2)
    assert isinstance(first, AsyncCursorPage) and first.has_next_page()
    second = await first.next_page()
    assert [m.id for m in second.data] == ["msg_02"] and not second.has_next_page()
    assert [m.id async for m in client.agents.messages.list(AGENT_ID, limit=2)] == ["msg_04", "msg_03", "msg_02"]
    assert dict(server.requests[3].url.params) == {"limit": "2", "before": "msg_03"}


class TestExport:
    def test_lines_become_typed_messages_read_as_they_arrive(self) -> None:
        read: List[int] = []

        def pieces() -> Iterator[bytes]:
            for n in (1, 2, 3):
                read.append(n)
                yield line(message(n, "assistant" if n % 2 == 0 else "user")).encode()

        server = Server([httpx.Response(200, headers={"content-type": "application/x-ndjson"},
                                        stream=_Generated(pieces()))])
        stream = server.client().users.export("user/42")
        assert server.requests == []
        received: List[Union[HistoryMessage, Memory]] = []
        with stream:
            for item in stream:
                received.append(item)
                # Each message is handed over before the next line is read.
                assert read[-1] == len(received)
        assert [m.id for m in received] == ["msg_01", "msg_02", "msg_03"]
        second = received[1]
        assert isinstance(second, HistoryMessage)
        assert second.role == "assistant" and second.usage is not None
        assert second.usage.total_tokens == 7
        request = server.requests[0]
        assert request.url.raw_path == b"/v1/users/user%2F42/export"
        assert request.headers["accept"] == "application/x-ndjson"
        with pytest.raises(AgentryError, match="iterated once"):
            iter(stream)

    def test_the_memories_after_the_messages_are_read_as_memories(self) -> None:
        body = line(message(1)) + line(message(2, "assistant")) + line(memory(1)) + line(memory(2, source=None))
        server = Server([ndjson(body[:150], body[150:])])
        received = list(server.client().users.export("user-42"))
        assert [(type(item).__name__, item.id) for item in received] == [
            ("HistoryMessage", "msg_01"),
            ("HistoryMessage", "msg_02"),
            ("Memory", "mem_01"),
            ("Memory", "mem_02"),
        ]
        learnt, by_hand = received[2], received[3]
        assert isinstance(learnt, Memory) and isinstance(by_hand, Memory)
        assert learnt.source is not None and learnt.source.message_id == "msg_01"
        assert learnt.text == "fact 1" and learnt.user_id == "user-42"
        assert by_hand.source is None
        assert learnt.to_dict() == memory(1)

    def test_a_split_line_and_a_crlf_are_read_whole_and_an_empty_body_is_no_messages(self) -> None:
        text = line(message(1)) + line(message(2)).replace("\n", "\r\n")
        server = Server([ndjson(text[:10], text[10:70], text[70:]), ndjson()])
        client = server.client()
        assert [m.id for m in client.users.export("user-42")] == ["msg_01", "msg_02"]
        assert list(client.users.export("nobody")) == []

    def test_an_export_cut_short_in_the_middle_of_a_line_raises_after_the_whole_lines(self) -> None:
        truncated = line(message(1)) + line(message(2))[:25]
        server = Server([ndjson(truncated)])
        received: List[str] = []
        with pytest.raises(APIConnectionError, match="cut short"):
            for item in server.client().users.export("user-42"):
                received.append(item.id)
        assert received == ["msg_01"]
        # A stream that has begun is never retried.
        assert len(server.requests) == 1

    def test_a_connection_that_breaks_or_goes_silent_raises(self) -> None:
        server = Server([ndjson(line(message(1)), httpx.RemoteProtocolError("incomplete chunked read"))])
        with pytest.raises(APIConnectionError, match="broke off"):
            list(server.client().users.export("user-42"))
        server = Server([ndjson(line(message(1)), httpx.ReadTimeout("silent"))])
        with pytest.raises(APITimeoutError, match="sent nothing for 3 s"):
            list(server.client(timeout=3).users.export("user-42"))

    def test_a_line_that_is_not_json_raises(self) -> None:
        server = Server([ndjson(line(message(1)) + "not json\n")])
        with pytest.raises(APIError, match="not JSON"):
            list(server.client().users.export("user-42"))

    def test_failures_before_the_export_starts_are_raised_and_retried_as_a_read(self) -> None:
        server = Server([error(400, "INVALID_REQUEST")])
        with pytest.raises(BadRequestError):
            list(server.client().users.export("x" * 300))
        assert len(server.requests) == 1
        server = Server([error(503, "AGENT_UNAVAILABLE"), ndjson(line(message(1)))])
        assert [m.id for m in server.client().users.export("user-42")] == ["msg_01"]
        assert len(server.requests) == 2
        server = Server([ok({"not": "ndjson"})])
        with pytest.raises(APIError, match="expected NDJSON"):
            list(server.client().users.export("user-42"))

    def test_leaving_early_closes_the_connection(self) -> None:
        body = Chunks([line(message(1)).encode(), line(message(2)).encode()])
        server = Server([httpx.Response(200, headers={"content-type": "application/x-ndjson"}, stream=body)])
        with server.client().users.export("user-42") as messages:
            for _ in messages:
                break
        assert body.closed
        closed = server.client().users.export("user-42")
        closed.close()
        with pytest.raises(APIUserAbortError):
            list(closed)

    def test_erase(self) -> None:
        server = Server([ok({"userId": "user-42", "deleted": True, "messagesDeleted": 6})])
        erased = server.client().users.erase("user-42")
        assert (erased.user_id, erased.deleted, erased.messages_deleted) == ("user-42", True, 6)
        assert server.requests[0].method == "DELETE" and server.requests[0].url.path == "/v1/users/user-42"


@pytest.mark.anyio
async def test_the_async_export_streams_and_fails_when_cut_short() -> None:
    server = Server([
        ndjson(line(message(1)), line(message(2))),
        ndjson(line(message(1)) + '{"id": "msg_0'),
        ndjson(line(message(1)), line(memory(1))),
    ])
    client = server.async_client()
    async with client.users.export("user-42") as messages:
        assert [m.id async for m in messages] == ["msg_01", "msg_02"]
    received: List[str] = []
    with pytest.raises(APIConnectionError, match="cut short"):
        async for item in client.users.export("user-42"):
            received.append(item.id)
    assert received == ["msg_01"]
    lines = [item async for item in client.users.export("user-42")]
    assert [type(item) for item in lines] == [HistoryMessage, Memory]
    assert lines[1].id == "mem_01" and lines[1].text == "fact 1"


class _Generated(httpx.SyncByteStream):
    """A body produced by a generator, one chunk at a time as the client reads."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


class _CutServer:
    """A real HTTP server on a local port that sends a chunked NDJSON body and drops the connection mid-line."""

    def __init__(self, body: bytes) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(1)
        self.port = self._listener.getsockname()[1]
        self._body = body
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self.request: Optional[bytes] = None

    def _serve(self) -> None:
        connection, _ = self._listener.accept()
        with connection:
            self.request = connection.recv(65536)
            head = (
                "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n"
                "connection: close\r\n\r\n"
            )
            chunk = f"{len(self._body):x}\r\n".encode() + self._body + b"\r\n"
            # The last chunk (`0\r\n\r\n`) never comes: the response ends without it.
            connection.sendall(head.encode() + chunk)
        self._listener.close()


def test_a_real_connection_dropped_mid_export_raises_after_the_whole_lines() -> None:
    server = _CutServer((line(message(1)) + line(message(2))[:30]).encode())
    client = Agentry(api_key="agentry_sk_test", base_url=f"http://127.0.0.1:{server.port}/v1", max_retries=0)
    received: List[str] = []
    with pytest.raises(APIConnectionError):
        for item in client.users.export("user-42"):
            received.append(item.id)
    assert received == ["msg_01"]
    assert server.request is not None and server.request.startswith(b"GET /v1/users/user-42/export HTTP/1.1")

