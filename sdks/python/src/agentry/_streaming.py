"""A reply streamed as it is written: an iterator (or async iterator) of typed events that closes its response."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from types import TracebackType
from typing import Any, AsyncIterator, Iterator, Optional, Type

import httpx

from ._base_client import AsyncTransport, RequestSpec, SyncTransport, describe
from ._exceptions import (
    AgentryError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    APIUserAbortError,
    error_from_stream_event,
)
from ._generated.models import (
    MESSAGE_STREAM_EVENTS,
    MessageCompletedEvent,
    MessageDeltaEvent,
    MessageStartedEvent,
    MessageStreamEvent,
    Reply,
)
from ._sse import ServerSentEvent, aiter_events, iter_events
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


def _resumption(spec: RequestSpec, options: RequestOptions, message_id: str, after: int
                ) -> "tuple[RequestSpec, RequestOptions]":
    """The request that resumes a message's stream after the event ``after`` (``Last-Event-ID``)."""
    headers = {**dict(options.extra_headers or {}), "Last-Event-ID": str(after)}
    resumed = RequestSpec("GET", f"{spec.path}/{message_id}/events")
    return resumed, dataclasses.replace(options, extra_headers=headers, extra_body=None, idempotency_key=None)


def _resumable(exc: BaseException) -> bool:
    """A dropped or silent connection, not the service's answer (an ``error`` event, a refused resumption)."""
    return isinstance(exc, (httpx.TransportError, httpx.StreamError)) or type(exc) is APIConnectionError


class _Reading:
    """What the events received so far add up to; shared by the sync and async streams."""

    def __init__(self) -> None:
        self.text = ""
        self.final: Optional[Reply] = None
        self.error: Optional[APIError] = None
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

    def failure(self, exc: BaseException, timeout: float) -> APIError:
        """The error to raise for an exception that ended the stream."""
        if isinstance(exc, APIError):
            return exc
        if isinstance(exc, httpx.TimeoutException):
            return APITimeoutError(f"The stream sent nothing for {timeout:g} s.")
        return APIConnectionError(f"The stream broke: {describe(exc)}")

    def outcome(self) -> Reply:
        """The completed reply, or the error that prevented it."""
        if self.error is not None:
            raise self.error
        if self.final is None:
            raise APIUserAbortError()
        return self.final


class MessageStream:
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

    def __init__(self, transport: SyncTransport, spec: RequestSpec, options: RequestOptions) -> None:
        self._transport = transport
        self._spec = _continuing(spec)
        self._options = options
        self._response: Optional[httpx.Response] = None
        self._reading = _Reading()
        self._consumed = False
        self._closed = False

    @property
    def response(self) -> Optional[httpx.Response]:
        """The HTTP response once the stream has started."""
        return self._response

    @property
    def request_id(self) -> Optional[str]:
        """The request id (``X-Request-Id``) once the stream has started."""
        return self._response.headers.get("x-request-id") if self._response is not None else None

    def __enter__(self) -> "MessageStream":
        self._open()
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection. Safe to call more than once."""
        self._closed = True
        if self._response is not None:
            self._response.close()

    def __iter__(self) -> Iterator[MessageStreamEvent]:
        """The events, in order. A stream can be iterated once."""
        if self._consumed:
            raise AgentryError("A MessageStream can be iterated once; use text() or final_message() after that.")
        self._consumed = True
        return self._iterate()

    def text(self) -> str:
        """The whole reply text (the deltas joined), once the stream has completed."""
        self._drain()
        return self._reading.text

    def final_message(self) -> Reply:
        """The completed reply (the ``message.completed`` event's data), once the stream has completed."""
        self._drain()
        return self._reading.outcome()

    def _drain(self) -> None:
        if not self._consumed:
            for _ in self:
                pass
        self._reading.outcome()

    def _open(self) -> httpx.Response:
        if self._response is None:
            if self._closed:
                raise APIUserAbortError("The stream was closed before it started.")
            try:
                self._response = self._transport.open_stream(self._spec, self._options)
            except APIError as error:
                self._reading.error = error
                raise
        return self._response

    def _iterate(self) -> Iterator[MessageStreamEvent]:
        timeout = self._transport._timeout(self._options)
        reading = self._reading
        try:
            response = self._open()
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
                    if reading.final is None:
                        raise APIConnectionError("The stream ended before the reply was complete.")
                    break
                except (APIError, httpx.TransportError, httpx.StreamError) as exc:
                    if (self._closed or reading.message_id is None or not _resumable(exc)
                            or reconnects >= MAX_RECONNECTS):
                        raise
                    reconnects += 1
                    reading.resumed = True
                    response.close()
                    time.sleep(_RECONNECT_DELAY * 2 ** (reconnects - 1))
                    spec, options = _resumption(self._spec, self._options, reading.message_id, reading.last_id)
                    response = self._response = self._transport.open_stream(spec, options)
        except (APIError, httpx.TransportError, httpx.StreamError) as exc:
            if self._closed and not isinstance(exc, APIError):
                # Closed by the caller while reading: a quiet end, as breaking out of the loop is.
                return
            error = self._reading.failure(exc, timeout)
            self._reading.error = error
            if error is exc:
                raise
            raise error from exc
        finally:
            self.close()


class AsyncMessageStream:
    """A reply streamed as it is written, as an async iterator of events (see ``MessageStream``)::

        async with client.agents.messages.stream(agent_id, text="Tell me a story") as stream:
            async for event in stream:
                if event.type == "message.delta":
                    print(event.data.text, end="")
        reply = await stream.final_message()
    """

    def __init__(self, transport: AsyncTransport, spec: RequestSpec, options: RequestOptions) -> None:
        self._transport = transport
        self._spec = _continuing(spec)
        self._options = options
        self._response: Optional[httpx.Response] = None
        self._reading = _Reading()
        self._consumed = False
        self._closed = False

    @property
    def response(self) -> Optional[httpx.Response]:
        """The HTTP response once the stream has started."""
        return self._response

    @property
    def request_id(self) -> Optional[str]:
        """The request id (``X-Request-Id``) once the stream has started."""
        return self._response.headers.get("x-request-id") if self._response is not None else None

    async def __aenter__(self) -> "AsyncMessageStream":
        await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the connection. Safe to call more than once."""
        self._closed = True
        if self._response is not None:
            await self._response.aclose()

    def __aiter__(self) -> AsyncIterator[MessageStreamEvent]:
        """The events, in order. A stream can be iterated once."""
        if self._consumed:
            raise AgentryError("A MessageStream can be iterated once; use text() or final_message() after that.")
        self._consumed = True
        return self._iterate()

    async def text(self) -> str:
        """The whole reply text (the deltas joined), once the stream has completed."""
        await self._drain()
        return self._reading.text

    async def final_message(self) -> Reply:
        """The completed reply (the ``message.completed`` event's data), once the stream has completed."""
        await self._drain()
        return self._reading.outcome()

    async def _drain(self) -> None:
        if not self._consumed:
            async for _ in self:
                pass
        self._reading.outcome()

    async def _open(self) -> httpx.Response:
        if self._response is None:
            if self._closed:
                raise APIUserAbortError("The stream was closed before it started.")
            try:
                self._response = await self._transport.open_stream(self._spec, self._options)
            except APIError as error:
                self._reading.error = error
                raise
        return self._response

    async def _iterate(self) -> AsyncIterator[MessageStreamEvent]:
        timeout = self._transport._timeout(self._options)
        reading = self._reading
        try:
            response = await self._open()
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
                    if reading.final is None:
                        raise APIConnectionError("The stream ended before the reply was complete.")
                    break
                except (APIError, httpx.TransportError, httpx.StreamError) as exc:
                    if (self._closed or reading.message_id is None or not _resumable(exc)
                            or reconnects >= MAX_RECONNECTS):
                        raise
                    reconnects += 1
                    reading.resumed = True
                    await response.aclose()
                    await asyncio.sleep(_RECONNECT_DELAY * 2 ** (reconnects - 1))
                    spec, options = _resumption(self._spec, self._options, reading.message_id, reading.last_id)
                    response = self._response = await self._transport.open_stream(spec, options)
        except (APIError, httpx.TransportError, httpx.StreamError) as exc:
            if self._closed and not isinstance(exc, APIError):
                return
            error = self._reading.failure(exc, timeout)
            self._reading.error = error
            if error is exc:
                raise
            raise error from exc
        finally:
            await self.close()
