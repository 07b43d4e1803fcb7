"""An answer streamed as NDJSON (a user's export): an iterator of typed items, read line by line as they arrive."""

from __future__ import annotations

import json
from typing import Any, AsyncGenerator, Callable, Generic, Iterator, List, TypeVar

import httpx

from ._base_client import NDJSON, AsyncTransport, RequestSpec, SyncTransport
from ._exceptions import APIConnectionError, APIError
from ._stream_base import AsyncStream, SyncStream
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
    """Turns one answer's chunks into items, line by line; shared by the sync and async streams."""

    def __init__(self, item: Callable[[Any], T], response: httpx.Response) -> None:
        self._item = item
        self._response = response
        self._lines = _Lines()

    def feed(self, chunk: bytes) -> Iterator[T]:
        """The items of the lines this chunk completes, each decoded only when it is asked for."""
        for line in self._lines.feed(chunk):
            yield self._decode(line)

    def end(self) -> None:
        """Raises when the answer ended in the middle of a line."""
        if self._lines.unfinished:
            raise APIConnectionError("The answer ended in the middle of a line: it was cut short. Ask again.")

    def _decode(self, line: bytes) -> T:
        headers = self._response.headers
        try:
            data = json.loads(line)
        except ValueError:
            raise APIError(
                "A line of the answer is not JSON.", headers=headers, body=line.decode("utf-8", "replace")
            ) from None
        try:
            return self._item(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise APIError(f"A line of the answer is not as documented: {exc!r}.", headers=headers, body=data) from exc


class _NDJSONWording:
    _media_type = NDJSON
    _iterated_twice = "An NDJSONStream can be iterated once."
    _silence = "The answer sent nothing for {timeout:g} s."
    _broken = "The answer broke off: {reason}. Ask again."


class NDJSONStream(_NDJSONWording, SyncStream[T]):
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
        super().__init__(transport, spec, options)
        self._item = item

    def _read(self, response: httpx.Response) -> Iterator[T]:
        reading = _Reading(self._item, response)
        for chunk in response.iter_bytes():
            yield from reading.feed(chunk)
        reading.end()


class AsyncNDJSONStream(_NDJSONWording, AsyncStream[T]):
    """An NDJSON answer as an async iterator of typed items (see ``NDJSONStream``)::

        async with client.users.export("user-42") as messages:
            async for message in messages:
                print(message.agent_id, message.role, message.text)
    """

    def __init__(
        self, transport: AsyncTransport, spec: RequestSpec, options: RequestOptions, item: Callable[[Any], T]
    ) -> None:
        super().__init__(transport, spec, options)
        self._item = item

    async def _read(self, response: httpx.Response) -> AsyncGenerator[T, None]:
        reading = _Reading(self._item, response)
        async for chunk in response.aiter_bytes():
            for item in reading.feed(chunk):
                yield item
        reading.end()
