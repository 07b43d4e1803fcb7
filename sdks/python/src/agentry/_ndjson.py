"""An answer streamed as NDJSON (a user's export): an iterator of typed items, read line by line as they arrive."""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, AsyncIterator, Callable, Generic, Iterator, List, Optional, Type, TypeVar

import httpx

from ._base_client import NDJSON, AsyncTransport, RequestSpec, SyncTransport, describe
from ._exceptions import AgentryError, APIConnectionError, APIError, APITimeoutError, APIUserAbortError
from ._types import RequestOptions

T = TypeVar("T")


class _Lines:
    """Cuts chunks of bytes into lines ending in ``\\n``; what is left at the end is a line cut short.

    A newline byte is never part of a multi-byte UTF-8 character, so lines are cut before they are decoded.
    """

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, chunk: bytes) -> List[bytes]:
        """The lines this chunk completes, without their line ends (blank lines are skipped)."""
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        return [line.rstrip(b"\r") for line in lines if line.strip()]

    @property
    def unfinished(self) -> bool:
        """Whether the bytes received so far end in the middle of a line."""
        return self._rest.strip() != b""


class _Reading(Generic[T]):
    """What the sync and async streams share: turning a line into an item, and a failure into the error to raise."""

    def __init__(self, item: Callable[[Any], T]) -> None:
        self._item = item

    def decode(self, line: bytes, response: httpx.Response) -> T:
        try:
            data = json.loads(line)
        except ValueError:
            raise APIError(
                "A line of the answer is not JSON.", headers=response.headers, body=line.decode("utf-8", "replace")
            ) from None
        try:
            return self._item(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise APIError(
                f"A line of the answer is not as documented: {exc!r}.", headers=response.headers, body=data
            ) from exc

    @staticmethod
    def cut_short() -> APIConnectionError:
        return APIConnectionError("The answer ended in the middle of a line: it was cut short. Ask again.")

    @staticmethod
    def failure(exc: BaseException, timeout: float) -> APIError:
        if isinstance(exc, httpx.TimeoutException):
            return APITimeoutError(f"The answer sent nothing for {timeout:g} s.")
        return APIConnectionError(f"The answer broke off: {describe(exc)}. Ask again.")


class NDJSONStream(Generic[T]):
    """An answer of one JSON object per line (``application/x-ndjson``), as an iterator of typed items.

    The request is sent when you first iterate (or enter the ``with`` block); failures before the answer starts
    (400, 404, 429, ...) are raised then, after the same retries as any read. Lines are read as they arrive, so
    memory stays flat whatever the size of the answer. Once started, it is never retried: an answer cut short (the
    connection broke, or the body ended in the middle of a line) raises ``APIConnectionError`` after the items
    that arrived whole. Use it in a ``with`` block (or call ``close()``) so the connection is closed even if you
    stop early::

        with client.users.export("user-42") as messages:
            for message in messages:
                print(message.agent_id, message.role, message.text)
    """

    def __init__(
        self, transport: SyncTransport, spec: RequestSpec, options: RequestOptions, item: Callable[[Any], T]
    ) -> None:
        self._transport = transport
        self._spec = spec
        self._options = options
        self._reading = _Reading(item)
        self._response: Optional[httpx.Response] = None
        self._consumed = False
        self._closed = False

    @property
    def response(self) -> Optional[httpx.Response]:
        """The HTTP response once the answer has started."""
        return self._response

    @property
    def request_id(self) -> Optional[str]:
        """The request id (``X-Request-Id``) once the answer has started."""
        return self._response.headers.get("x-request-id") if self._response is not None else None

    def __enter__(self) -> "NDJSONStream[T]":
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

    def __iter__(self) -> Iterator[T]:
        """The items, in order. A stream can be iterated once."""
        if self._consumed:
            raise AgentryError("An NDJSONStream can be iterated once.")
        self._consumed = True
        return self._iterate()

    def _open(self) -> httpx.Response:
        if self._response is None:
            if self._closed:
                raise APIUserAbortError("The stream was closed before it started.")
            self._response = self._transport.open_stream(self._spec, self._options, NDJSON)
        return self._response

    def _iterate(self) -> Iterator[T]:
        timeout = self._transport._timeout(self._options)
        try:
            response = self._open()
            lines = _Lines()
            for chunk in response.iter_bytes():
                for line in lines.feed(chunk):
                    yield self._reading.decode(line, response)
            if lines.unfinished:
                raise self._reading.cut_short()
        except (httpx.TransportError, httpx.StreamError) as exc:
            if self._closed:
                # Closed by the caller while reading: a quiet end, as breaking out of the loop is.
                return
            raise self._reading.failure(exc, timeout) from exc
        finally:
            self.close()


class AsyncNDJSONStream(Generic[T]):
    """An NDJSON answer as an async iterator of typed items (see ``NDJSONStream``)::

        async with client.users.export("user-42") as messages:
            async for message in messages:
                print(message.agent_id, message.role, message.text)
    """

    def __init__(
        self, transport: AsyncTransport, spec: RequestSpec, options: RequestOptions, item: Callable[[Any], T]
    ) -> None:
        self._transport = transport
        self._spec = spec
        self._options = options
        self._reading = _Reading(item)
        self._response: Optional[httpx.Response] = None
        self._consumed = False
        self._closed = False

    @property
    def response(self) -> Optional[httpx.Response]:
        """The HTTP response once the answer has started."""
        return self._response

    @property
    def request_id(self) -> Optional[str]:
        """The request id (``X-Request-Id``) once the answer has started."""
        return self._response.headers.get("x-request-id") if self._response is not None else None

    async def __aenter__(self) -> "AsyncNDJSONStream[T]":
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

    def __aiter__(self) -> AsyncIterator[T]:
        """The items, in order. A stream can be iterated once."""
        if self._consumed:
            raise AgentryError("An NDJSONStream can be iterated once.")
        self._consumed = True
        return self._iterate()

    async def _open(self) -> httpx.Response:
        if self._response is None:
            if self._closed:
                raise APIUserAbortError("The stream was closed before it started.")
            self._response = await self._transport.open_stream(self._spec, self._options, NDJSON)
        return self._response

    async def _iterate(self) -> AsyncIterator[T]:
        timeout = self._transport._timeout(self._options)
        try:
            response = await self._open()
            lines = _Lines()
            async for chunk in response.aiter_bytes():
                for line in lines.feed(chunk):
                    yield self._reading.decode(line, response)
            if lines.unfinished:
                raise self._reading.cut_short()
        except (httpx.TransportError, httpx.StreamError) as exc:
            if self._closed:
                return
            raise self._reading.failure(exc, timeout) from exc
        finally:
            await self.close()
