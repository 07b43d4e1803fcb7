"""A scripted HTTP server for unit tests: httpx.MockTransport answering from a list of responses."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Union

import httpx

from agentry import Agentry, AsyncAgentry

BASE_URL = "http://agentry.test/v1"

AGENT: Dict[str, Any] = {
    "id": "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
    "name": "Ada",
    "bio": ["Counts things."],
    "personality": {"tone": "dry"},
    "knowledge": [],
    "goals": ["help"],
    "clients": ["discord", {"type": "telegram", "channel": "@ada"}],
    "settings": {"temperature": 0.5, "theme": "dark"},
    "modelProvider": None,
    "model": None,
    "plugins": ["web-search", {"name": "calendar", "enabled": False, "config": {"region": "eu"}}],
    "status": "active",
    "statusReason": None,
    "createdAt": "2026-11-20T09:30:00.000Z",
    "updatedAt": "2026-11-20T09:30:00.000Z",
    "apiEndpoint": "http://agentry.test/v1/agents/agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1/messages",
    "aFieldFromTheFuture": True,
}

REPLY: Dict[str, Any] = {
    "id": "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
    "agentId": AGENT["id"],
    "userId": "u1",
    "roomId": None,
    "text": "Hello there.",
    "model": "gpt-4o-mini",
    "modelProvider": "openai",
    "finishReason": "stop",
    "usage": {"inputTokens": 4, "outputTokens": 3, "totalTokens": 7},
    "latencyMs": 12,
    "createdAt": "2026-11-20T09:30:00.812Z",
}

RATE_HEADERS = {"x-ratelimit-limit": "60", "x-ratelimit-remaining": "59", "x-ratelimit-reset": "1795000000"}


def ok(data: Any, status: int = 200, **extra: Any) -> httpx.Response:
    return httpx.Response(status, json={"success": True, "data": data, **extra}, headers=RATE_HEADERS)


def error(status: int, code: str, message: str = "nope", headers: Optional[Mapping[str, str]] = None,
          details: Optional[List[Dict[str, str]]] = None) -> httpx.Response:
    body: Dict[str, Any] = {"code": code, "message": message, "requestId": "req_test"}
    if details is not None:
        body["details"] = details
    return httpx.Response(status, json={"success": False, "error": body}, headers=dict(headers or {}))


def sse(*pieces: Union[str, Exception], body: Optional["Chunks"] = None) -> httpx.Response:
    """An event-stream response whose body arrives in the given pieces (an exception is raised in its place)."""
    stream = body if body is not None else Chunks([p.encode("utf-8") if isinstance(p, str) else p for p in pieces])
    return httpx.Response(
        200,
        headers={"content-type": "text/event-stream", "x-request-id": "req_stream", **RATE_HEADERS},
        stream=stream,
    )


def event(number: int, name: str, data: Any) -> str:
    return f"id: {number}\nevent: {name}\ndata: {json.dumps(data)}\n\n"


class Chunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body sent in pieces; remembers whether the client closed it."""

    def __init__(self, chunks: List[Union[bytes, Exception]]) -> None:
        self.chunks = chunks
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            if isinstance(chunk, Exception):
                raise chunk
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            if isinstance(chunk, Exception):
                raise chunk
            yield chunk

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


Answer = Union[httpx.Response, Exception, Callable[[httpx.Request], httpx.Response]]


class Server:
    """Answers requests in order from ``answers`` (the last one repeats) and records them."""

    def __init__(self, answers: Iterable[Answer]) -> None:
        self.answers = list(answers)
        self.requests: List[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer) and not isinstance(answer, httpx.Response):
            return answer(request)
        return answer

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)

    def client(self, **options: Any) -> Agentry:
        options.setdefault("max_retry_delay", 0)
        return Agentry(
            api_key="agentry_sk_test", base_url=BASE_URL, http_client=httpx.Client(transport=httpx.MockTransport(self)),
            **options,
        )

    def async_client(self, **options: Any) -> AsyncAgentry:
        options.setdefault("max_retry_delay", 0)

        async def handler(request: httpx.Request) -> httpx.Response:
            await request.aread()
            return self(request)

        return AsyncAgentry(
            api_key="agentry_sk_test",
            base_url=BASE_URL,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
            **options,
        )
