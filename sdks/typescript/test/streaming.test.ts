import { describe, expect, it } from "vitest";
import {
  AgentryError,
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  ConflictError,
  InternalServerError,
  type MessageStreamEvent,
  NotFoundError,
  RateLimitError,
} from "../src/index.js";
import { MAX_RECONNECTS } from "../src/streaming.js";
import {
  AGENT_ID,
  abortError,
  apiError,
  clientWith,
  frame,
  json,
  mockFetch,
  reply,
  type SeenRequest,
  sse,
} from "./helpers.js";

const started = { id: "msg_1", agentId: AGENT_ID, userId: "u1", roomId: null };
const completed = reply({ text: "Hello world", userId: "u1" });

/** The gateway's frames for a reply in the given pieces, with a ping in the middle. */
function replyFrames(pieces: string[], final = completed): string[] {
  const frames = [frame(1, "message.started", started)];
  pieces.forEach((text, i) => {
    frames.push(frame(i + 2, "message.delta", { text }));
    if (i === 0) frames.push(": ping\n\n");
  });
  frames.push(frame(pieces.length + 2, "message.completed", final));
  return frames;
}

async function collect(stream: AsyncIterable<MessageStreamEvent>) {
  const events: MessageStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A response whose body stays open, errors when the request is aborted, and records its cancellation. */
function openStream(request: SeenRequest, frames: string[], state: { cancelled: boolean }): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const text of frames) controller.enqueue(encoder.encode(text));
      request.signal.addEventListener("abort", () => controller.error(abortError()));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "x-request-id": "req_stream" },
  });
}

describe("messages.stream", () => {
  it("asks for a stream and yields typed events in order", async () => {
    const { fetch, requests } = mockFetch(() => sse(replyFrames(["Hello", " world"])));
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "Hi", userId: "u1" });
    const events = await collect(stream);
    expect(events).toEqual([
      { type: "message.started", id: "1", data: started },
      { type: "message.delta", id: "2", data: { text: "Hello" } },
      { type: "message.delta", id: "3", data: { text: " world" } },
      { type: "message.completed", id: "4", data: completed },
    ]);
    expect(requests[0]!.body).toEqual({ text: "Hi", userId: "u1", onDisconnect: "continue", stream: true });
    expect(requests[0]!.headers.get("accept")).toBe("text/event-stream");
    expect(stream.requestId).toBe("req_stream");
    expect(await stream.text()).toBe("Hello world");
    expect(await stream.finalMessage()).toEqual(completed);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(AgentryError);
  });

  it("text() and finalMessage() consume the stream themselves", async () => {
    const { fetch } = mockFetch(() => sse(replyFrames(["a", "b", "c"], reply({ text: "abc" }))));
    const client = clientWith(fetch);
    expect(await client.agents.messages.stream(AGENT_ID, { text: "x" }).text()).toBe("abc");
    expect((await client.agents.messages.stream(AGENT_ID, { text: "x" }).finalMessage()).text).toBe("abc");
  });

  it("skips event types it does not know", async () => {
    const frames = replyFrames(["Hi"]);
    frames.splice(1, 0, frame(9, "message.thinking", { text: "hmm" }), "data: no event name\n\n");
    const { fetch } = mockFetch(() => sse(frames));
    const events = await collect(clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" }));
    expect(events.map((e) => e.type)).toEqual(["message.started", "message.delta", "message.completed"]);
  });

  it("throws the error event as the class of its code, after the events before it, without retrying", async () => {
    const frames = [
      frame(1, "message.started", started),
      frame(2, "message.delta", { text: "Hel" }),
      frame(3, "error", { code: "AGENT_UNAVAILABLE", message: "The provider went away." }),
    ];
    const { fetch, requests } = mockFetch(() => sse(frames));
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["message.started", "message.delta"]);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, code: "AGENT_UNAVAILABLE", requestId: "req_stream" });
    expect((error as Error).message).toBe("503 AGENT_UNAVAILABLE: The provider went away.");
    await expect(stream.text()).rejects.toBe(error);
    await expect(stream.finalMessage()).rejects.toBe(error);
    expect(requests).toHaveLength(1);
  });

  it("maps a MODEL_ERROR and an unknown code in an error event", async () => {
    for (const [code, status] of [
      ["MODEL_ERROR", 502],
      ["SOMETHING_NEW", 500],
    ] as const) {
      const { fetch } = mockFetch(() => sse([frame(1, "error", { code, message: "no" })]));
      const error = await clientWith(fetch)
        .agents.messages.stream(AGENT_ID, { text: "x" })
        .text()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InternalServerError);
      expect(error).toMatchObject({ status, code });
    }
  });

  it("fails with a connection error when the stream ends before the reply is complete", async () => {
    const { fetch } = mockFetch(() =>
      sse([frame(1, "message.started", started), frame(2, "message.delta", { text: "Hel" })]),
    );
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    await expect(collect(stream)).rejects.toBeInstanceOf(APIConnectionError);
    await expect(stream.text()).rejects.toThrow(/ended before the reply was complete/);
  });

  it("fails before it starts like any request, retrying only what is safe", async () => {
    const inactive = mockFetch(() => apiError(409, "AGENT_INACTIVE"));
    const stream = clientWith(inactive.fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    await expect(collect(stream)).rejects.toBeInstanceOf(ConflictError);
    expect(inactive.requests).toHaveLength(1);

    const limited = mockFetch(() =>
      apiError(429, "RATE_LIMIT_EXCEEDED", { headers: { "retry-after": "1" } }),
    );
    const error = await clientWith(limited.fetch)
      .agents.messages.stream(AGENT_ID, { text: "x" })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(limited.requests).toHaveLength(3);

    const busy = mockFetch(
      () => apiError(503, "AGENT_UNAVAILABLE"),
      () => sse(replyFrames(["ok"])),
    );
    expect(await clientWith(busy.fetch).agents.messages.stream(AGENT_ID, { text: "x" }).text()).toBe("ok");
    expect(busy.requests).toHaveLength(2);
    const keys = busy.requests.map((request) => request.headers.get("idempotency-key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);

    const own = mockFetch(() => sse(replyFrames(["ok"])));
    await clientWith(own.fetch)
      .agents.messages.stream(AGENT_ID, { text: "x" }, { idempotencyKey: "story-1" })
      .text();
    expect(own.requests[0]!.headers.get("idempotency-key")).toBe("story-1");
  });

  it("refuses a 200 that is not an event stream", async () => {
    const { fetch } = mockFetch(() => json(200, { success: true, data: reply() }));
    await expect(clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" }).text()).rejects.toThrow(
      /expected text\/event-stream, got 'application\/json/,
    );
  });

  it("abort() ends the loop quietly and closes the connection; the helpers then reject", async () => {
    const state = { cancelled: false };
    const { fetch, requests } = mockFetch((request) =>
      openStream(request, replyFrames(["Hello"]).slice(0, 2), state),
    );
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === "message.delta") stream.abort();
    }
    expect(seen).toEqual(["message.started", "message.delta"]);
    expect(requests[0]!.signal.aborted).toBe(true);
    await expect(stream.text()).rejects.toBeInstanceOf(APIUserAbortError);
  });

  it("the caller's signal aborts it, before or during the stream", async () => {
    const state = { cancelled: false };
    const { fetch, requests } = mockFetch((request) =>
      openStream(request, [frame(1, "message.started", started)], state),
    );
    const controller = new AbortController();
    const stream = clientWith(fetch).agents.messages.stream(
      AGENT_ID,
      { text: "x" },
      { signal: controller.signal },
    );
    const done = stream.finalMessage();
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    await expect(done).rejects.toBeInstanceOf(APIUserAbortError);
    expect(requests[0]!.signal.aborted).toBe(true);

    const never = mockFetch(() => sse(replyFrames(["x"])));
    const early = clientWith(never.fetch).agents.messages.stream(
      AGENT_ID,
      { text: "x" },
      { signal: AbortSignal.abort() },
    );
    expect(await collect(early)).toEqual([]);
    await expect(early.text()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(never.requests).toHaveLength(0);
  });

  it("breaking out of the loop early cancels the body", async () => {
    const state = { cancelled: false };
    const { fetch } = mockFetch((request) => openStream(request, replyFrames(["a", "b"]).slice(0, 3), state));
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    for await (const event of stream) {
      if (event.type === "message.started") break;
    }
    expect(state.cancelled).toBe(true);
    await expect(stream.finalMessage()).rejects.toThrow(/closed before the reply was complete/);
  });

  it("breaking out right after message.completed keeps the outcome", async () => {
    const state = { cancelled: false };
    const { fetch } = mockFetch((request) => openStream(request, replyFrames(["a"]), state));
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    for await (const event of stream) {
      if (event.type === "message.completed") break;
    }
    expect(await stream.text()).toBe("a");
    expect((await stream.finalMessage()).id).toBe(completed.id);
  });

  it("times out a stream that goes silent, but not one whose loop body is slow", async () => {
    const state = { cancelled: false };
    const silent = mockFetch((request) => openStream(request, [frame(1, "message.started", started)], state));
    const error = await clientWith(silent.fetch, { timeout: 50 })
      .agents.messages.stream(AGENT_ID, { text: "x" })
      .text()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as Error).message).toMatch(/sent nothing for 50 ms/);
    // Each silence was resumed after the last event, until the resumptions were spent.
    expect(silent.requests).toHaveLength(1 + MAX_RECONNECTS);
    for (const resumed of silent.requests.slice(1)) {
      expect(resumed.method).toBe("GET");
      expect(resumed.url.pathname).toBe(`/v1/agents/${AGENT_ID}/messages/msg_1/events`);
      expect(resumed.headers.get("last-event-id")).toBe("1");
    }

    const { fetch } = mockFetch(() => sse(replyFrames(["a", "b"], reply({ text: "ab" }))));
    const stream = clientWith(fetch, { timeout: 100 }).agents.messages.stream(AGENT_ID, { text: "x" });
    for await (const event of stream) {
      if (event.type === "message.delta") await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(await stream.text()).toBe("ab");
  });

  it("resumes a dropped stream after the last event, invisibly: each event once, in order", async () => {
    const frames = replyFrames(["a", "b", "c", "d"], reply({ text: "abcd" }));
    // The first connection breaks after the second delta; the resumption sends from the third event again (one
    // already seen, which is skipped) to the end.
    const dropped = (request: SeenRequest) => {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const text of frames.slice(0, 4)) controller.enqueue(encoder.encode(text));
          setTimeout(() => controller.error(new TypeError("terminated")), 5);
        },
      });
      void request;
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    };
    const { fetch, requests } = mockFetch(dropped, () => sse(frames.slice(3)));
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    const events = await collect(stream);
    expect(events.map((event) => event.id)).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(await stream.text()).toBe("abcd");
    expect(requests).toHaveLength(2);
    expect(requests[1]!.method).toBe("GET");
    expect(requests[1]!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/messages/msg_1/events`);
    expect(requests[1]!.headers.get("last-event-id")).toBe("3");
    expect(requests[1]!.headers.get("idempotency-key")).toBeNull();
  });

  it("does not resume a stream that broke before it started, and fails when the resumption is refused", async () => {
    const broken = () => sse([": ping\n\n"]);
    const early = mockFetch(broken);
    const error = await clientWith(early.fetch, { maxRetries: 0 })
      .agents.messages.stream(AGENT_ID, { text: "x" })
      .text()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(early.requests).toHaveLength(1);

    const cut = mockFetch(
      () => sse(replyFrames(["a", "b"]).slice(0, 2)),
      () => apiError(404, "STREAM_NOT_FOUND"),
    );
    const refused = await clientWith(cut.fetch, { maxRetries: 0 })
      .agents.messages.stream(AGENT_ID, { text: "x" })
      .text()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotFoundError);
    expect(refused).toMatchObject({ code: "STREAM_NOT_FOUND" });
  });

  it("never reports an unconsumed failure as an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const { fetch } = mockFetch(() => apiError(404, "AGENT_NOT_FOUND"));
    clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "x" });
    await new Promise((resolve) => setTimeout(resolve, 30));
    process.off("unhandledRejection", onUnhandled);
    expect(unhandled).toEqual([]);
  });
});

describe("messages.stream and a shared signal", () => {
  it("lets go of the caller's signal once a stream is over", async () => {
    const { fetch } = mockFetch(() => sse(replyFrames(["a"])));
    const client = clientWith(fetch);
    const controller = new AbortController();
    const added: unknown[] = [];
    const removed: unknown[] = [];
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((type: string, listener: EventListener, options?: AddEventListenerOptions) => {
      added.push(listener);
      add(type, listener, options);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((type: string, listener: EventListener) => {
      removed.push(listener);
      remove(type, listener);
    }) as typeof signal.removeEventListener;
    for (let i = 0; i < 3; i++)
      await client.agents.messages.stream(AGENT_ID, { text: "x" }, { signal }).text();
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((listener) => removed.includes(listener))).toBe(true);
  });
});
