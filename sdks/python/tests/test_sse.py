from __future__ import annotations

from typing import List

from agentry._sse import ServerSentEvent, SSEDecoder


def decode(*chunks: bytes) -> List[ServerSentEvent]:
    decoder = SSEDecoder()
    events: List[ServerSentEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.end())
    return events


def test_fields_comments_and_multi_line_data() -> None:
    assert decode(b": ping\n\nid: 1\nevent: message.delta\ndata: {\"text\":\ndata: \"hi\"}\n\n") == [
        ServerSentEvent(id="1", event="message.delta", data='{"text":\n"hi"}'),
    ]


def test_every_line_ending_and_chunk_boundary() -> None:
    expected = [ServerSentEvent(id="7", event="a", data="x"), ServerSentEvent(id="7", event=None, data="y")]
    for body in (b"id: 7\nevent: a\ndata: x\n\ndata: y\n\n", b"id: 7\r\nevent: a\r\ndata: x\r\n\r\ndata: y\r\n\r\n",
                 b"id: 7\revent: a\rdata: x\r\rdata: y\r\r"):
        assert decode(body) == expected
        assert decode(*[body[i : i + 1] for i in range(len(body))]) == expected


def test_utf8_split_across_chunks_and_a_leading_byte_order_mark() -> None:
    body = "\ufeffdata: café ☕\n\n".encode("utf-8")
    assert decode(body[:10], body[10:13], body[13:]) == [ServerSentEvent(id=None, event=None, data="café ☕")]


def test_an_unfinished_last_event_and_events_without_data_are_dropped() -> None:
    assert decode(b"event: empty\n\ndata: done\n\ndata: cut") == [ServerSentEvent(id=None, event=None, data="done")]


def test_a_final_cr_ends_its_line() -> None:
    assert decode(b"data: a\r\r") == [ServerSentEvent(id=None, event=None, data="a")]
