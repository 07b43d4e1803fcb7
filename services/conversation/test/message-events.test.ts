import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isId } from "@agentry/core";
import type { JsonObject, PublicEvent } from "@agentry/events";
import type { Reply } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

/** The reply object of the REST API, from the reply the RPC answered (as the gateway presents it). */
function replyJson(reply: Reply) {
  return {
    id: reply.id,
    agentId: reply.agentId,
    userId: reply.userId ?? null,
    roomId: reply.roomId ?? null,
    text: reply.text,
    model: reply.model,
    modelProvider: reply.modelProvider,
    finishReason: reply.finishReason,
    usage: {
      inputTokens: reply.usage!.inputTokens,
      outputTokens: reply.usage!.outputTokens,
      totalTokens: reply.usage!.totalTokens,
    },
    latencyMs: reply.latencyMs,
    createdAt: timestampDate(reply.createTime!).toISOString(),
  };
}

describe("message events, published to the webhooks service", () => {
  let h: Harness;
  const published: PublicEvent[] = [];
  beforeAll(async () => {
    h = await startHarness({
      publish: async (events) => {
        published.push(...events);
      },
    });
  });
  afterAll(() => h.close());
  afterEach(() => {
    published.length = 0;
    h.openai.reset();
  });

  const settled = async () => {
    h.conversation.relay!.kick();
    await h.conversation.relay!.settle();
  };
  const of = (agentId: string) =>
    published
      .filter((event) => event.data.agentId === agentId)
      .map((e): [string, JsonObject] => [e.type, e.data]);

  it("message.completed carries the reply exactly as the send answered it, once", async () => {
    const a = agent({ model: "gpt-test" });
    h.openai.answer({ text: "Hello there", usage: { input: 12, output: 3 } });
    const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi", userId: "u1" });
    await vi.waitFor(() => expect(of(a.id)).toHaveLength(1));
    await settled();

    const [event] = published;
    expect(isId("event", event!.id)).toBe(true);
    expect(event).toMatchObject({ type: "message.completed", accountId: ACCOUNT });
    expect(event!.createdAt).toBe(timestampDate(reply!.createTime!).toISOString());
    expect(JSON.stringify(event!.data)).toBe(JSON.stringify(replyJson(reply!)));
    expect(event!.data).toMatchObject({ userId: "u1", roomId: null, text: "Hello there" });
    expect(await h.conversation.store.pendingEvents(10)).toEqual([]);
    expect(published).toHaveLength(1);
  });

  it("a streamed reply's message.completed is the stream's completed reply, with the id it started with", async () => {
    const a = agent();
    h.openai.reply("one two three");
    const events = [];
    for await (const response of h.client.streamMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "hi",
      roomId: "r",
    }))
      events.push(response.event);
    const started = events.find((e) => e.case === "started")!.value as { messageId: string };
    const completed = events.find((e) => e.case === "completed")!.value as Reply;
    await vi.waitFor(() => expect(of(a.id)).toHaveLength(1));
    expect(of(a.id)[0]).toEqual(["message.completed", replyJson(completed)]);
    expect(of(a.id)[0]![1]).toMatchObject({ id: started.messageId, text: "one two three", roomId: "r" });
  });

  it("message.failed names the message and the error the caller got, unary and streamed", async () => {
    const a = agent();
    h.openai.failWith(401);
    const unary = await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
    expect(unary.code).toBe("MODEL_ERROR");

    h.openai.reply("one two three four", { cutAfter: 2 });
    let messageId = "";
    const streamed = await failure(async () => {
      for await (const response of h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "hi" }))
        if (response.event.case === "started") messageId = response.event.value.messageId;
    });
    expect(streamed.code).toBe("AGENT_UNAVAILABLE");

    await vi.waitFor(() => expect(of(a.id)).toHaveLength(2));
    const calls = await h.conversation.store.listCalls(ACCOUNT, a.id);
    expect(of(a.id)).toEqual([
      [
        "message.failed",
        { agentId: a.id, messageId: calls[0]!.id, code: "MODEL_ERROR", message: unary.message },
      ],
      ["message.failed", { agentId: a.id, messageId, code: "AGENT_UNAVAILABLE", message: streamed.message }],
    ]);
    expect(Object.keys(of(a.id)[0]![1])).toEqual(["agentId", "messageId", "code", "message"]);
  });

  it("a caller that went away is no failure: no event", async () => {
    const a = agent();
    h.openai.reply("one two three four five six", { chunkDelayMs: 100 });
    const controller = new AbortController();
    await expect(async () => {
      for await (const response of h.client.streamMessage(
        { accountId: ACCOUNT, agent: a, text: "hi" },
        { signal: controller.signal },
      ))
        if (response.event.case === "delta") controller.abort();
    }).rejects.toThrow();
    await vi.waitFor(async () => expect(await h.conversation.store.listCalls(ACCOUNT, a.id)).toHaveLength(1));
    await settled();
    expect(of(a.id)).toEqual([]);
  });

  it("a reply that completes after its agent was purged emits nothing, neither completed nor failed", async () => {
    const a = agent();
    h.openai.reply("late reply", { delayMs: 300 });
    const next = h.openai.nextRequest();
    const pending = failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
    await next;
    await h.client.purgeAgent({ accountId: ACCOUNT, agentId: a.id });
    expect((await pending).code).toBe("AGENT_NOT_FOUND");
    await settled();
    expect(of(a.id)).toEqual([]);
    expect(await h.conversation.store.pendingEvents(10)).toEqual([]);
  });
});

describe("the message events relay", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "conversation-events-"));
    dirs.push(dir);
    return dir;
  };

  it("publishes again, the same events with the same ids, until the webhooks service confirms; only then they leave the outbox", async () => {
    const attempts: string[][] = [];
    let up = false;
    const h = await startHarness({
      publish: async (events) => {
        attempts.push(events.map((event) => event.id));
        if (!up) throw new Error("webhooks service down");
      },
    });
    try {
      const a = agent();
      await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "one" });
      h.openai.failWith(500);
      await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "two" }));
      await vi.waitFor(() =>
        expect(attempts.filter((ids) => ids.length === 2).length).toBeGreaterThanOrEqual(2),
      );
      const waiting = await h.conversation.store.pendingEvents(10);
      expect(waiting.map((event) => event.type)).toEqual(["message.completed", "message.failed"]);

      up = true;
      await vi.waitFor(async () => expect(await h.conversation.store.pendingEvents(10)).toEqual([]));
      const ids = waiting.map((event) => event.id);
      // Every attempt after the second event was written offered both, with the ids they were written with.
      for (const attempt of attempts.filter((each) => each.length === 2)) expect(attempt).toEqual(ids);
    } finally {
      await h.close();
    }
  });

  it("publishes at start what a service that stopped before publishing left in the outbox", async () => {
    const dataDir = tempDir();
    const first = await startHarness({
      dataDir,
      publish: async () => {
        throw new Error("webhooks service down");
      },
    });
    const a = agent();
    await first.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" });
    const waiting = await first.conversation.store.pendingEvents(10);
    expect(waiting).toHaveLength(1);
    await first.close();

    const published: PublicEvent[] = [];
    const second = await startHarness({
      dataDir,
      publish: async (events) => {
        published.push(...events);
      },
    });
    try {
      await vi.waitFor(() => expect(published.map((event) => event.id)).toEqual([waiting[0]!.id]));
      expect(published[0]!.data).toEqual(waiting[0]!.data);
    } finally {
      await second.close();
    }
  });

  it("without a webhooks service, sends write no events", async () => {
    const h = await startHarness();
    try {
      expect(h.conversation.relay).toBeUndefined();
      const a = agent();
      await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" });
      h.openai.failWith(401);
      await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
      expect(await h.conversation.store.listCalls(ACCOUNT, a.id)).toHaveLength(2);
      expect(await h.conversation.store.pendingEvents(10)).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
