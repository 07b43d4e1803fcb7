import { describe, expect, it } from "vitest";
import { readServerSentEvents, type ServerSentEvent } from "../src/sse.js";

function body(chunks: (string | Uint8Array)[], onCancel?: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
    cancel: onCancel,
  });
}

async function read(chunks: (string | Uint8Array)[]): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(body(chunks))) events.push(event);
  return events;
}

describe("readServerSentEvents", () => {
  it("reads the gateway's frames", async () => {
    expect(await read(['id: 1\nevent: message.delta\ndata: {"text":"Hi"}\n\n'])).toEqual([
      { id: "1", event: "message.delta", data: '{"text":"Hi"}' },
    ]);
  });

  it("joins events split anywhere across chunks, even one byte at a time", async () => {
    const text =
      'id: 1\nevent: message.delta\ndata: {"text":"Hello"}\n\nid: 2\nevent: message.delta\ndata: {"text":" world"}\n\n';
    const expected = [
      { id: "1", event: "message.delta", data: '{"text":"Hello"}' },
      { id: "2", event: "message.delta", data: '{"text":" world"}' },
    ];
    expect(await read(text.split(""))).toEqual(expected);
    expect(await read([text.slice(0, 17), text.slice(17, 50), text.slice(50)])).toEqual(expected);
  });

  it("decodes UTF-8 characters split between chunks", async () => {
    const bytes = new TextEncoder().encode('data: {"text":"héllo 🌍"}\n\n');
    const split = bytes.indexOf(0xf0) + 2; // inside the four bytes of the emoji
    const events = await read([bytes.slice(0, 16), bytes.slice(16, split), bytes.slice(split)]);
    expect(events).toEqual([{ id: undefined, event: undefined, data: '{"text":"héllo 🌍"}' }]);
  });

  it("joins multi-line data with newlines", async () => {
    expect(await read(["event: x\ndata: line one\ndata: line two\ndata:\ndata:  indented\n\n"])).toEqual([
      { id: undefined, event: "x", data: "line one\nline two\n\n indented" },
    ]);
  });

  it("skips comments such as the 15-second ping", async () => {
    expect(
      await read([": ping\n\n", "event: a\ndata: 1\n\n", ": ping\n\n", ":\n\n", "event: b\ndata: 2\n\n"]),
    ).toEqual([
      { id: undefined, event: "a", data: "1" },
      { id: undefined, event: "b", data: "2" },
    ]);
  });

  it("accepts CRLF and CR line ends, split between chunks too", async () => {
    expect(await read(["id: 1\r\nevent: a\r\ndata: 1\r", "\n\r", "\nid: 2\revent: b\rdata: 2\r\r"])).toEqual([
      { id: "1", event: "a", data: "1" },
      { id: "2", event: "b", data: "2" },
    ]);
  });

  it("drops an event the stream did not finish, as the standard says", async () => {
    expect(await read(["event: a\ndata: 1\n\nevent: b\ndata: 2\n"])).toEqual([
      { id: undefined, event: "a", data: "1" },
    ]);
    expect(await read(["data: 1\r\rdata: 2\r"])).toEqual([{ id: undefined, event: undefined, data: "1" }]);
  });

  it("ignores a byte-order mark and unknown fields", async () => {
    expect(await read(["\uFEFFevent: a\nfoo: bar\ndata: 1\n\n"])).toEqual([
      { id: undefined, event: "a", data: "1" },
    ]);
  });

  it("reports every chunk, comments included, and cancels the body when the reader stops early", async () => {
    let chunks = 0;
    let cancelled = false;
    const stream = body([": ping\n\n", "event: a\ndata: 1\n\n", "event: b\ndata: 2\n\n"], () => {
      cancelled = true;
    });
    for await (const event of readServerSentEvents(stream, () => chunks++)) {
      expect(event.event).toBe("a");
      break;
    }
    expect(chunks).toBe(2);
    expect(cancelled).toBe(true);
  });
});
