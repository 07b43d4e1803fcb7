"""Reads a ``text/event-stream`` body as events, following the SSE standard's framing.

Any of CRLF, LF or CR ends a line; ``data:`` lines are joined with ``\\n``; comments such as ``: ping`` are
skipped; an unfinished last event is dropped. Bytes are decoded as UTF-8 across chunk boundaries.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import AsyncIterator, Iterator, List, Optional


@dataclass(frozen=True)
class ServerSentEvent:
    """One event, its fields as received."""

    id: Optional[str]
    event: Optional[str]
    """``None`` when the event had no ``event:`` field (which the standard calls ``message``)."""
    data: str


class SSEDecoder:
    """Turns chunks of bytes into events; feed it chunks, then call ``end()``."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._first = True
        self._data: List[str] = []
        self._event: Optional[str] = None
        self._id: Optional[str] = None
        self._last_id: Optional[str] = None

    def feed(self, chunk: bytes) -> List[ServerSentEvent]:
        """The events completed by this chunk."""
        return self._lines(self._decoder.decode(chunk), final=False)

    def end(self) -> List[ServerSentEvent]:
        """The events completed by the end of the stream (an unfinished one is dropped)."""
        return self._lines(self._decoder.decode(b"", final=True), final=True)

    def _lines(self, text: str, final: bool) -> List[ServerSentEvent]:
        if self._first and text:
            # A byte order mark may start the stream, and only there.
            if text.startswith("\ufeff"):
                text = text[1:]
            self._first = False
        self._buffer += text
        events: List[ServerSentEvent] = []
        start = 0
        buffer = self._buffer
        length = len(buffer)
        while True:
            cr = buffer.find("\r", start)
            lf = buffer.find("\n", start)
            if cr < 0 and lf < 0:
                break
            end = lf if cr < 0 else cr if lf < 0 else min(cr, lf)
            if buffer[end] == "\r":
                if end + 1 == length and not final:
                    # A CR at the end of the chunk may be the first half of a CRLF.
                    break
                next_start = end + 2 if end + 1 < length and buffer[end + 1] == "\n" else end + 1
            else:
                next_start = end + 1
            event = self._line(buffer[start:end])
            if event is not None:
                events.append(event)
            start = next_start
        self._buffer = buffer[start:]
        if final:
            self._buffer = ""
        return events

    def _line(self, line: str) -> Optional[ServerSentEvent]:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        # `retry:` and unknown fields are ignored.
        return None

    def _dispatch(self) -> Optional[ServerSentEvent]:
        data, event = self._data, self._event
        self._data, self._event = [], None
        if not data:
            return None
        return ServerSentEvent(id=self._last_id, event=event if event else None, data="\n".join(data))


def iter_events(chunks: Iterator[bytes]) -> Iterator[ServerSentEvent]:
    """The events of a body read as chunks of bytes."""
    decoder = SSEDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.end()


async def aiter_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
    """The events of a body read as chunks of bytes, asynchronously."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.end():
        yield event
