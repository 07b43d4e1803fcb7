"""What every streamed answer shares: sending the request on first use, iterating once, closing, and turning a
connection that broke or fell silent into the SDK's errors.

Each kind of stream (``_streaming.py`` for a reply's events, ``_ndjson.py`` for an export's lines) subclasses
``SyncStream`` / ``AsyncStream`` and writes only ``_read``: the items of an open response. The I/O is written twice,
as in ``_base_client.py``, because httpx's sync and async clients are separate.
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Any, AsyncGenerator, AsyncIterator, Generic, Iterator, Optional, Type, TypeVar

import httpx

from ._base_client import EVENT_STREAM, AsyncTransport, RequestSpec, SyncTransport, describe
from ._exceptions import AgentryError, APIConnectionError, APIError, APITimeoutError, APIUserAbortError
from ._types import RequestOptions

T = TypeVar("T")
_Sync = TypeVar("_Sync", bound="SyncStream[Any]")
_Async = TypeVar("_Async", bound="AsyncStream[Any]")


class _StreamBase(Generic[T]):
    """The state and error mapping the sync and async streams share; the wording is each kind's own."""

    _media_type = EVENT_STREAM
    _iterated_twice = "A stream can be iterated once."
    _silence = "The stream sent nothing for {timeout:g} s."
    _broken = "The stream broke: {reason}"

    def __init__(self, spec: RequestSpec, options: RequestOptions, timeout: float) -> None:
        self._spec = spec
        self._options = options
        self._timeout = timeout
        self._response: Optional[httpx.Response] = None
        self._error: Optional[APIError] = None
        """The error that ended the stream, once one has."""
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

    def _consume(self) -> None:
        if self._consumed:
            raise AgentryError(self._iterated_twice)
        self._consumed = True

    def _check_open(self) -> None:
        if self._closed:
            raise APIUserAbortError("The stream was closed before it started.")

    @contextlib.contextmanager
    def _ending(self) -> Iterator[None]:
        """Turns what ended the stream into the error to raise, and remembers it for later calls.

        A connection that broke or fell silent becomes ``APIConnectionError`` / ``APITimeoutError``; an
        ``APIError`` is raised as it is; a connection the caller closed while reading ends the loop quietly, as
        breaking out of it does.
        """
        try:
            yield
        except (APIError, httpx.TransportError, httpx.StreamError) as exc:
            if self._closed and not isinstance(exc, APIError):
                return
            if isinstance(exc, APIError):
                self._error = exc
                raise
            error: APIError
            if isinstance(exc, httpx.TimeoutException):
                error = APITimeoutError(self._silence.format(timeout=self._timeout))
            else:
                error = APIConnectionError(self._broken.format(reason=describe(exc)))
            self._error = error
            raise error from exc


class SyncStream(_StreamBase[T]):
    """A streamed answer as an iterator of ``T``; the request is sent when first iterated or entered."""

    def __init__(self, transport: SyncTransport, spec: RequestSpec, options: RequestOptions) -> None:
        super().__init__(spec, options, transport._timeout(options))
        self._transport = transport

    def __enter__(self: _Sync) -> _Sync:
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
        self._consume()
        return self._iterate()

    def _read(self, response: httpx.Response) -> Iterator[T]:
        """The items of the open response; each kind of stream writes its own."""
        raise NotImplementedError

    def _open(self) -> httpx.Response:
        if self._response is None:
            self._check_open()
            try:
                self._response = self._transport.open_stream(self._spec, self._options, self._media_type)
            except APIError as error:
                self._error = error
                raise
        return self._response

    def _iterate(self) -> Iterator[T]:
        try:
            with self._ending():
                yield from self._read(self._open())
        finally:
            self.close()


class AsyncStream(_StreamBase[T]):
    """A streamed answer as an async iterator of ``T`` (see ``SyncStream``)."""

    def __init__(self, transport: AsyncTransport, spec: RequestSpec, options: RequestOptions) -> None:
        super().__init__(spec, options, transport._timeout(options))
        self._transport = transport

    async def __aenter__(self: _Async) -> _Async:
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
        self._consume()
        return self._iterate()

    def _read(self, response: httpx.Response) -> AsyncGenerator[T, None]:
        """The items of the open response; each kind of stream writes its own."""
        raise NotImplementedError

    async def _open(self) -> httpx.Response:
        if self._response is None:
            self._check_open()
            try:
                self._response = await self._transport.open_stream(self._spec, self._options, self._media_type)
            except APIError as error:
                self._error = error
                raise
        return self._response

    async def _iterate(self) -> AsyncIterator[T]:
        try:
            with self._ending():
                items = self._read(await self._open())
                try:
                    async for item in items:
                        yield item
                finally:
                    # Unlike ``yield from``, ``async for`` leaves an unfinished generator open.
                    await items.aclose()
        finally:
            await self.close()
