"""A reply streamed as it is written: an iterator (or async iterator) of typed events that closes its response."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any, AsyncGenerator, Iterator, Optional

import httpx

from ._base_client import AsyncTransport, RequestSpec, SyncTransport
from ._exceptions import APIConnectionError, APIError, APIUserAbortError, error_from_stream_event
from ._generated.models import (
    MESSAGE_STREAM_EVENTS,
    MessageCompletedEvent,
    MessageDeltaEvent,
    MessageStartedEvent,
    MessageStreamEvent,
    Reply,
)
from ._sse import ServerSentEvent, aiter_events, iter_events
from ._stream_base import AsyncStream, SyncStream
from ._types import RequestOptions

# The event that ends a stream in failure; its data is an error code and message, raised as the error class the
# code has as an HTTP response.
_ERROR_EVENT = "error"

MAX_RECONNECTS = 3
"""How many times in a row a dropped stream is resumed before it fails."""
_RECONNECT_DELAY = 0.2
"""Seconds before the first resumption; each next one waits twice as long."""


def _continuing(spec: RequestSpec) -> RequestSpec:
    """The send, asking the service to go on generating when the connection drops (unless the caller chose)."""
    if spec.body is None or "onDisconnect" in spec.body:
        return spec
    return dataclasses.replace(spec, body={**spec.body, "onDisconnect": "continue"})


def _resumable(exc: BaseException) -> bool:
    """A dropped or silent connection, not the service's answer (an ``error`` event, a refused resumption)."""
    return isinstance(exc, (httpx.TransportError, httpx.StreamError)) or type(exc) is APIConnectionError


def _reconnect_delay(reconnects: int) -> float:
    """Seconds to wait before the ``reconnects``-th resumption in a row."""
    return _RECONNECT_DELAY * 2.0 ** (reconnects - 1)


class _Reading:
    """What the events received so far add up to; shared by the sync and async streams."""

    def __init__(self) -> None:
        self.text = ""
        self.final: Optional[Reply] = None
        self.message_id: Optional[str] = None
        self.last_id = 0
        self.resumed = False

    def accept(self, message: ServerSentEvent, headers: httpx.Headers) -> Optional[MessageStreamEvent]:
        """The event to yield for a server-sent event; raises the error of an ``error`` event."""
        name = message.event
        factory = MESSAGE_STREAM_EVENTS.get(name or "")
        if name != _ERROR_EVENT and factory is None:
            # Event types added in later API versions are skipped, so an older SDK keeps working.
            return None
        # A resumed connection starts after the last event seen; an event seen already is never yielded twice.
        if message.id is not None and message.id.isdigit():
            seq = int(message.id)
            if self.resumed and seq <= self.last_id:
                return None
            self.last_id = max(self.last_id, seq)
        try:
            data: Any = json.loads(message.data)
        except ValueError:
            raise APIError(f"The '{name}' event's data is not JSON.", headers=headers, body=message.data) from None
        if name == _ERROR_EVENT or factory is None:
            raise error_from_stream_event(data, headers)
        try:
            event = factory(message.id or "", data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise APIError(f"The '{name}' event's data is not as documented: {exc!r}.", headers=headers,
                           body=data) from exc
        if isinstance(event, MessageStartedEvent) and self.message_id is None:
            self.message_id = event.data.id
        if isinstance(event, MessageDeltaEvent):
            self.text += event.data.text
        elif isinstance(event, MessageCompletedEvent):
            self.final = event.data
        return event

    def resumes(self, exc: BaseException, closed: bool, reconnects: int) -> bool:
        """Whether the stream is resumed after ``exc``, with ``reconnects`` resumptions since the last event."""
        return not closed and self.message_id is not None and _resumable(exc) and reconnects < MAX_RECONNECTS

    def resumption(self, spec: RequestSpec, options: RequestOptions) -> "tuple[RequestSpec, RequestOptions]":
        """The request that resumes the message's stream after the last event seen (``Last-Event-ID``)."""
        assert self.message_id is not None, "resumes() allows no resumption before message.started"
        self.resumed = True
        headers = {**dict(options.extra_headers or {}), "Last-Event-ID": str(self.last_id)}
        resumed = RequestSpec("GET", f"{spec.path}/{self.message_id}/events")
        return resumed, dataclasses.replace(options, extra_headers=headers, extra_body=None, idempotency_key=None)

    def outcome(self, error: Optional[APIError]) -> Reply:
        """The completed reply, or the error that prevented it."""
        if error is not None:
            raise error
        if self.final is None:
            raise APIUserAbortError()
        return self.final

    def complete(self) -> None:
        """Raises when the connection ended before the reply was complete."""
        if self.final is None:
            raise APIConnectionError("The stream ended before the reply was complete.")


_ITERATED_TWICE = "A MessageStream can be iterated once; use text() or final_message() after that."


class MessageStream(SyncStream[MessageStreamEvent]):
    """A reply streamed as it is written, as an iterator of events.

    The request is sent when you first iterate (or enter the ``with`` block), and failures before the stream
    starts (404, 409, 429, ...) are raised then, after the same retries as ``send``. Once started, a stream is
    never sent again: a connection that drops, or sends nothing for the client's ``timeout``, is resumed where it
    stopped (``Last-Event-ID``), up to ``MAX_RECONNECTS`` times in a row, unseen by the loop, which gets every
    event once, in order. The send asks for ``on_disconnect="continue"`` unless given another value, so that the
    service goes on generating meanwhile. An ``error`` event raises the error class its code has as an HTTP
    response (e.g. ``InternalServerError`` for ``AGENT_UNAVAILABLE``); a stream that cannot be resumed raises
    ``APIConnectionError`` (``APITimeoutError`` after silence).

    Use it in a ``with`` block (or call ``close()``) so the connection is closed even if you stop early::

        with client.agents.messages.stream(agent_id, text="Tell me a story") as stream:
            for event in stream:
                if event.type == "message.delta":
                    print(event.data.text, end="")
        reply = stream.final_message()
    """

    _iterated_twice = _ITERATED_TWICE

    def __init__(self, transport: SyncTransport, spec: RequestSpec, options: RequestOptions) -> None:
        super().__init__(transport, _continuing(spec), options)
        self._reading = _Reading()

    def text(self) -> str:
        """The whole reply text (the deltas joined), once the stream has completed."""
        self._drain()
        return self._reading.text

    def final_message(self) -> Reply:
        """The completed reply (the ``message.completed`` event's data), once the stream has completed."""
        self._drain()
        return self._reading.outcome(self._error)

    def _drain(self) -> None:
        if not self._consumed:
            for _ in self:
                pass
        self._reading.outcome(self._error)

    def _read(self, response: httpx.Response) -> Iterator[MessageStreamEvent]:
        reading = self._reading
        reconnects = 0
        while True:
            try:
                for message in iter_events(response.iter_bytes()):
                    event = reading.accept(message, response.headers)
                    if event is not None:
                        reconnects = 0
                        yield event
                    if reading.final is not None:
                        break
                reading.complete()
                return
            except (APIError, httpx.TransportError, httpx.StreamError) as exc:
                if not reading.resumes(exc, self._closed, reconnects):
                    raise
                reconnects += 1
                response.close()
                time.sleep(_reconnect_delay(reconnects))
                spec, options = reading.resumption(self._spec, self._options)
                response = self._response = self._transport.open_stream(spec, options)


class AsyncMessageStream(AsyncStream[MessageStreamEvent]):
    """A reply streamed as it is written, as an async iterator of events (see ``MessageStream``)::

        async with client.agents.messages.stream(agent_id, text="Tell me a story") as stream:
            async for event in stream:
                if event.type == "message.delta":
                    print(event.data.text, end="")
        reply = await stream.final_message()
    """

    _iterated_twice = _ITERATED_TWICE

    def __init__(self, transport: AsyncTransport, spec: RequestSpec, options: RequestOptions) -> None:
        super().__init__(transport, _continuing(spec), options)
        self._reading = _Reading()

    async def text(self) -> str:
        """The whole reply text (the deltas joined), once the stream has completed."""
        await self._drain()
        return self._reading.text

    async def final_message(self) -> Reply:
        """The completed reply (the ``message.completed`` event's data), once the stream has completed."""
        await self._drain()
        return self._reading.outcome(self._error)

    async def _drain(self) -> None:
        if not self._consumed:
            async for _ in self:
                pass
        self._reading.outcome(self._error)

    async def _read(self, response: httpx.Response) -> AsyncGenerator[MessageStreamEvent, None]:
        reading = self._reading
        reconnects = 0
        while True:
            try:
                async for message in aiter_events(response.aiter_bytes()):
                    event = reading.accept(message, response.headers)
                    if event is not None:
                        reconnects = 0
                        yield event
                    if reading.final is not None:
                        break
                reading.complete()
                return
            except (APIError, httpx.TransportError, httpx.StreamError) as exc:
                if not reading.resumes(exc, self._closed, reconnects):
                    raise
                reconnects += 1
                await response.aclose()
                await asyncio.sleep(_reconnect_delay(reconnects))
                spec, options = reading.resumption(self._spec, self._options)
                response = self._response = await self._transport.open_stream(spec, options)
