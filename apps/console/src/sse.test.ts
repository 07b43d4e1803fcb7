import { describe, expect, it } from "vitest";
import { readEvents, type ServerSentEvent } from "./sse";

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(chunks: string[]): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readEvents(streamOf(chunks))) events.push(event);
  return events;
}

describe("readEvents", () => {
  it("reads events with their ids and names, whatever the chunk boundaries", async () => {
    const text =
      'id: 1\nevent: message.started\ndata: {"id":"msg_1"}\n\nid: 2\nevent: message.delta\ndata: {"text":"Hi"}\n\n';
    const expected = [
      { id: "1", event: "message.started", data: '{"id":"msg_1"}' },
      { id: "2", event: "message.delta", data: '{"text":"Hi"}' },
    ];
    expect(await all([text])).toEqual(expected);
    // One byte at a time.
    expect(await all([...text])).toEqual(expected);
  });

  it("splits lines on CRLF and CR too, even with a CRLF cut between chunks", async () => {
    expect(await all(["event: a\r", "\ndata: x\r\n\r\n", "data: y\r\rdata: z\n\n"])).toEqual([
      { event: "a", data: "x" },
      { event: "message", data: "y" },
      { event: "message", data: "z" },
    ]);
  });

  it("skips comments and events without data, and joins data lines", async () => {
    expect(await all([": ping\n\n", "event: empty\n\n", "data: one\ndata:two\n\n"])).toEqual([
      { event: "message", data: "one\ntwo" },
    ]);
  });

  it("drops an event the stream cut off before its blank line", async () => {
    expect(await all(["data: whole\n\n", "data: half"])).toEqual([{ event: "message", data: "whole" }]);
  });

  it("decodes multi-byte characters split across chunks", async () => {
    const bytes = new TextEncoder().encode("data: é€😀\n\n");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const events: ServerSentEvent[] = [];
    for await (const event of readEvents(stream)) events.push(event);
    expect(events).toEqual([{ event: "message", data: "é€😀" }]);
  });
});
