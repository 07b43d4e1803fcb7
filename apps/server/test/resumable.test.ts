import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";
import { readEvents, type SseEvent } from "./sse.js";

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;

/** A server answered by the fake OpenAI, with `env` on top. */
const startServer = (env: Record<string, string> = {}) =>
  startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    ...env,
  });

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  h = await startServer();
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
});
beforeEach(() => {
  openai.reset();
});

async function newAgent(on: Harness = h, key = tenant.key): Promise<string> {
  const res = await on.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key,
    body: { name: "Ada", bio: ["Counts things"] },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

function post(
  on: Harness,
  agentId: string,
  body: Record<string, unknown>,
  cutAfter?: number,
  key = tenant.key,
) {
  return readEvents(`${on.url}/v1/agents/${agentId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(cutAfter === undefined ? {} : { cutAfter }),
  });
}

function resume(
  on: Harness,
  agentId: string,
  messageId: string,
  options: { lastEventId?: string; after?: string; key?: string } = {},
) {
  const query = options.after === undefined ? "" : `?after=${encodeURIComponent(options.after)}`;
  return readEvents(`${on.url}/v1/agents/${agentId}/messages/${messageId}/events${query}`, {
    headers: {
      authorization: `Bearer ${options.key ?? tenant.key}`,
      ...(options.lastEventId === undefined ? {} : { "last-event-id": options.lastEventId }),
    },
  });
}

const messageIdOf = (events: SseEvent[]) => (events[0]!.data as { id: string }).id;

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("resumable streams", () => {
  it("numbers every event and replays exactly the events after any cut point, ending with the terminal one", async () => {
    const agentId = await newAgent();
    openai.reply("one two three four five six seven eight");
    const whole = await post(h, agentId, { text: "count", stream: true });
    expect(whole.status).toBe(200);
    expect(whole.events.map((event) => event.id)).toEqual(whole.events.map((_, i) => String(i + 1)));
    expect(whole.events.at(-1)!.event).toBe("message.completed");
    const messageId = messageIdOf(whole.events);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: whole.events.length }),
        fc.boolean(),
        async (cut, byHeader) => {
          const resumed = await resume(
            h,
            agentId,
            messageId,
            byHeader ? { lastEventId: String(cut) } : { after: String(cut) },
          );
          expect(resumed.status).toBe(200);
          expect([...whole.events.slice(0, cut), ...resumed.events]).toEqual(whole.events);
        },
      ),
      { numRuns: 40, interruptAfterTimeLimit: 4000 },
    );
  });

  it("resumes a stream cut at a random event, while it is generated, into the original sequence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 9 }), async (cut) => {
        const agentId = await newAgent();
        openai.reply("a b c d e f g h", { chunkDelayMs: 15 });
        const first = await post(h, agentId, { text: "go", stream: true, onDisconnect: "continue" }, cut);
        expect(first.events).toHaveLength(cut);
        const messageId = messageIdOf(first.events);
        const rest = await resume(h, agentId, messageId, { lastEventId: first.events.at(-1)!.id! });
        const all = [...first.events, ...rest.events];
        expect(all.map((event) => event.id)).toEqual(all.map((_, i) => String(i + 1)));
        expect(all.at(-1)!.event).toBe("message.completed");
        const deltas = all.filter((event) => event.event === "message.delta");
        expect(deltas.map((event) => (event.data as { text: string }).text).join("")).toBe("a b c d e f g h");
        expect((all.at(-1)!.data as { text: string }).text).toBe("a b c d e f g h");
        // The whole original sequence, read again from the start.
        expect((await resume(h, agentId, messageId)).events).toEqual(all);
      }),
      { numRuns: 6, interruptAfterTimeLimit: 5000 },
    );
  });

  it("with onDisconnect continue, stores the complete reply after the caller left", async () => {
    const agentId = await newAgent();
    openai.reply("slow words arrive one by one here", { chunkDelayMs: 40 });
    const first = await post(h, agentId, { text: "tell me", stream: true, onDisconnect: "continue" }, 2);
    const messageId = messageIdOf(first.events);
    const stored = await eventually(
      () =>
        h.request<{ data: { text: string; role: string } }>(
          "GET",
          `/v1/agents/${agentId}/messages/${messageId}`,
          { key: tenant.key },
        ),
      (res) => res.status === 200,
    );
    expect(stored.status).toBe(200);
    expect(stored.body.data).toMatchObject({ role: "assistant", text: "slow words arrive one by one here" });
    await expect(openai.requests.at(-1)!.outcome).resolves.toBe("finished");
  });

  it("by default cancels on disconnect: the resumed stream ends with the error event", async () => {
    const agentId = await newAgent();
    openai.reply("slow words arrive one by one here", { chunkDelayMs: 100 });
    const first = await post(h, agentId, { text: "tell me", stream: true }, 2);
    await expect(openai.requests.at(-1)!.outcome).resolves.toBe("aborted");
    const messageId = messageIdOf(first.events);
    const rest = await eventually(
      () => resume(h, agentId, messageId, { lastEventId: "2" }),
      (res) => res.events.at(-1)?.event === "error",
    );
    expect(rest.events.at(-1)).toMatchObject({ event: "error", data: { code: "AGENT_UNAVAILABLE" } });
    expect(Number(rest.events.at(-1)!.id)).toBeGreaterThan(2);
  });

  it("is 404 STREAM_NOT_FOUND for an unknown message, a malformed id and another account's message", async () => {
    const agentId = await newAgent();
    const unknown = await resume(h, agentId, "msg_01J00000000000000000000000");
    expect(unknown.status).toBe(404);
    expect((JSON.parse(unknown.body) as ErrorBody).error.code).toBe("STREAM_NOT_FOUND");
    expect((await resume(h, agentId, "nope")).status).toBe(404);
    openai.reply("mine");
    const mine = await post(h, agentId, { text: "hi", stream: true });
    const other = await h.tenant();
    const otherAgent = await newAgent(h, other.key);
    const foreign = await resume(h, otherAgent, messageIdOf(mine.events), { key: other.key });
    expect(foreign.status).toBe(404);
    const foreignAgent = await resume(h, agentId, messageIdOf(mine.events), { key: other.key });
    expect(foreignAgent.status).toBe(404);
    expect((JSON.parse(foreignAgent.body) as ErrorBody).error.code).toBe("AGENT_NOT_FOUND");
  });

  it("is 400 for an after or Last-Event-ID that is not a whole number", async () => {
    const agentId = await newAgent();
    for (const bad of ["-1", "x", "1.5", "", "99999999999999999"]) {
      const byQuery = await resume(h, agentId, "msg_01J00000000000000000000000", { after: bad });
      expect(byQuery.status).toBe(400);
      const body = JSON.parse(byQuery.body) as ErrorBody;
      expect(body.error.code).toBe("INVALID_REQUEST");
      expect(body.error.details?.[0]?.field).toBe("after");
    }
    const byHeader = await resume(h, agentId, "msg_01J00000000000000000000000", { lastEventId: "abc" });
    expect(byHeader.status).toBe(400);
    expect((JSON.parse(byHeader.body) as ErrorBody).error.details?.[0]?.field).toBe("Last-Event-ID");
  });

  it("needs the messages:send scope", async () => {
    const agentId = await newAgent();
    const reader = await tenant.keyWith(["agents:read"]);
    const res = await resume(h, agentId, "msg_01J00000000000000000000000", { key: reader.key });
    expect(res.status).toBe(403);
  });

  it("forgets a stream's events after STREAM_RETENTION: then 404", async () => {
    const short = await startServer({ STREAM_RETENTION: "1s" });
    try {
      const owner = await short.tenant();
      const agentId = await newAgent(short, owner.key);
      openai.reply("brief");
      const done = await post(short, agentId, { text: "hi", stream: true }, undefined, owner.key);
      const messageId = messageIdOf(done.events);
      expect((await resume(short, agentId, messageId, { key: owner.key })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const gone = await resume(short, agentId, messageId, { key: owner.key });
      expect(gone.status).toBe(404);
      expect((JSON.parse(gone.body) as ErrorBody).error.code).toBe("STREAM_NOT_FOUND");
    } finally {
      await short.close();
    }
  });
});

interface BackgroundBody {
  data: {
    id: string;
    status: string;
    text?: string;
    userId?: string | null;
    error?: { code: string; message: string };
  };
}

describe("background messages", () => {
  const getMessage = (agentId: string, id: string) =>
    h.request<BackgroundBody>("GET", `/v1/agents/${agentId}/messages/${id}`, { key: tenant.key });

  it("answers 202 pending at once, then runs to completion without its caller; the reply reads back by id", async () => {
    const agentId = await newAgent();
    openai.reply("done in the background", { delayMs: 300 });
    const accepted = await h.request<BackgroundBody>("POST", `/v1/agents/${agentId}/messages`, {
      key: tenant.key,
      body: { text: "work on this", background: true, userId: "u-bg" },
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body.data).toEqual({ id: expect.stringMatching(/^msg_/), status: "pending" });
    const id = accepted.body.data.id;
    expect((await getMessage(agentId, id)).body.data).toEqual({
      id,
      agentId,
      userId: "u-bg",
      roomId: null,
      status: "pending",
    });
    const done = await eventually(
      () => getMessage(agentId, id),
      (res) => res.body.data.status !== "pending",
    );
    expect(done.body.data).toMatchObject({
      id,
      status: "completed",
      text: "done in the background",
      userId: "u-bg",
    });
    // Its events can be followed too, as a stream's.
    const { events } = await resume(h, agentId, id);
    expect(events[0]).toMatchObject({ id: "1", event: "message.started", data: { id, agentId } });
    expect(events.at(-1)).toMatchObject({
      event: "message.completed",
      data: { id, text: "done in the background" },
    });
    const deltas = events.slice(1, -1);
    expect(deltas.every((event) => event.event === "message.delta")).toBe(true);
    expect(deltas.map((event) => (event.data as { text: string }).text).join("")).toBe(
      "done in the background",
    );
  });

  it("records a failure with its error", async () => {
    const agentId = await newAgent();
    openai.failWith(401);
    const accepted = await h.request<BackgroundBody>("POST", `/v1/agents/${agentId}/messages`, {
      key: tenant.key,
      body: { text: "fail", background: true },
    });
    expect(accepted.status).toBe(202);
    const failed = await eventually(
      () => getMessage(agentId, accepted.body.data.id),
      (res) => res.body.data.status !== "pending",
    );
    expect(failed.body.data).toMatchObject({ status: "failed", error: { code: "MODEL_ERROR" } });
    // The agent's health follows the background message too.
    const agent = await eventually(
      () => h.request<{ data: { status: string } }>("GET", `/v1/agents/${agentId}`, { key: tenant.key }),
      (res) => res.body.data.status === "error",
    );
    expect(agent.body.data.status).toBe("error");
  });

  it("keeps a background message's outcome after STREAM_RETENTION, its events gone", async () => {
    const short = await startServer({ STREAM_RETENTION: "1s" });
    try {
      const owner = await short.tenant();
      const read = (agentId: string, id: string) =>
        short.request<BackgroundBody>("GET", `/v1/agents/${agentId}/messages/${id}`, { key: owner.key });
      const start = async (agentId: string) => {
        const accepted = await short.request<BackgroundBody>("POST", `/v1/agents/${agentId}/messages`, {
          key: owner.key,
          body: { text: "work", background: true },
        });
        expect(accepted.status).toBe(202);
        const id = accepted.body.data.id;
        await eventually(
          () => read(agentId, id),
          (res) => res.body.data.status !== "pending",
        );
        return id;
      };
      const completedAgent = await newAgent(short, owner.key);
      openai.reply("kept");
      const completed = await start(completedAgent);
      const failedAgent = await newAgent(short, owner.key);
      openai.failWith(401);
      const failed = await start(failedAgent);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect((await resume(short, completedAgent, completed, { key: owner.key })).status).toBe(404);
      expect((await resume(short, failedAgent, failed, { key: owner.key })).status).toBe(404);
      expect((await read(completedAgent, completed)).body.data).toMatchObject({
        id: completed,
        status: "completed",
        text: "kept",
      });
      expect((await read(failedAgent, failed)).body.data).toMatchObject({
        id: failed,
        status: "failed",
        error: { code: "MODEL_ERROR" },
      });
    } finally {
      await short.close();
    }
  });

  it("holds a concurrency slot until it ends", async () => {
    const limited = await h.tenant({ limits: { concurrentMessages: 1 } });
    const agentId = await newAgent(h, limited.key);
    openai.reply("slow", { delayMs: 600 });
    const accepted = await h.request("POST", `/v1/agents/${agentId}/messages`, {
      key: limited.key,
      body: { text: "one", background: true },
    });
    expect(accepted.status).toBe(202);
    const refused = await h.request<ErrorBody>("POST", `/v1/agents/${agentId}/messages`, {
      key: limited.key,
      body: { text: "two" },
    });
    expect(refused.status).toBe(429);
    openai.reply("fine");
    const later = await eventually(
      () =>
        h.request("POST", `/v1/agents/${agentId}/messages`, { key: limited.key, body: { text: "three" } }),
      (res) => res.status === 200,
    );
    expect(later.status).toBe(200);
  });

  it("refuses background with stream", async () => {
    const agentId = await newAgent();
    const res = await h.request<ErrorBody>("POST", `/v1/agents/${agentId}/messages`, {
      key: tenant.key,
      body: { text: "x", background: true, stream: true },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details?.[0]?.field).toBe("background");
  });
});
