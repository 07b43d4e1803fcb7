import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { StreamMessageResponse } from "@agentry/proto";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgresConversationStore } from "../src/store/postgres.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

let keys = 0;
/** A fresh Idempotency-Key's SHA-256 hex, as the gateway passes it. */
function keyHash(): string {
  keys += 1;
  return createHash("sha256").update(`key-${keys}-${Date.now()}`).digest("hex");
}

async function streamed(stream: AsyncIterable<StreamMessageResponse>) {
  const all: { sequence: bigint; event: StreamMessageResponse["event"] }[] = [];
  for await (const response of stream) all.push({ sequence: response.sequence, event: response.event });
  return all;
}

let db: TestDatabase | undefined;
afterAll(() => db?.close());

describe.each(["sqlite", "postgres"] as const)("messages with an Idempotency-Key (%s)", (kind) => {
  let h: Harness;
  beforeAll(async () => {
    if (kind === "postgres") {
      db ??= await openTestDatabase();
      const store = await openPostgresConversationStore({
        connectionString: db.url,
        schema: `conversation_keys_${Date.now()}`,
      });
      h = await startHarness({ store });
    } else {
      h = await startHarness();
    }
  }, 60_000);
  afterAll(() => h.close());
  beforeEach(() => {
    h.openai.reset();
  });

  const send = (owner: ReturnType<typeof agent>, hash: string | undefined, text = "hello") =>
    h.client.sendMessage({
      accountId: ACCOUNT,
      agent: owner,
      text,
      userId: "u1",
      ...(hash ? { idempotencyKeyHash: hash } : {}),
    });
  /** "hello" from u1, streamed under the key, as the events it answers. */
  const stream = (owner: ReturnType<typeof agent>, hash: string) =>
    streamed(
      h.client.streamMessage({
        accountId: ACCOUNT,
        agent: owner,
        text: "hello",
        userId: "u1",
        idempotencyKeyHash: hash,
      }),
    );

  it("answers a message sent again with its key with the stored reply, without calling the model", async () => {
    const owner = agent();
    const hash = keyHash();
    h.openai.answer({ text: "the one reply", usage: { input: 12, output: 3 } });
    const first = await send(owner, hash);
    const again = await send(owner, hash);
    expect(h.openai.requests).toHaveLength(1);
    expect(again.reply).toEqual(first.reply);
    expect(again.reply?.text).toBe("the one reply");
    expect(again.reply?.usage).toMatchObject({ inputTokens: 12, outputTokens: 3, totalTokens: 15 });
    const history = await h.client.listTurns({ accountId: ACCOUNT, agentId: owner.id, userId: "u1" });
    expect(history.turns.map((turn) => turn.text)).toEqual(["hello", "the one reply"]);

    // Another key, or none, is another message.
    const other = await send(owner, keyHash());
    const none = await send(owner, undefined);
    expect(h.openai.requests).toHaveLength(3);
    expect(other.reply?.id).not.toBe(first.reply?.id);
    expect(none.reply?.id).not.toBe(other.reply?.id);
  });

  it("waits for the reply of a send with the key still being answered, and calls the model once", async () => {
    const owner = agent();
    const hash = keyHash();
    h.openai.reply("slow and single", { delayMs: 200 });
    const [a, b] = await Promise.all([send(owner, hash), send(owner, hash)]);
    expect(h.openai.requests).toHaveLength(1);
    expect(b.reply).toEqual(a.reply);
  });

  it("runs a message again under its key right after it failed with a retryable error, as JSON or a stream", async () => {
    const owner = agent();
    for (const again of ["json", "stream"] as const) {
      const hash = keyHash();
      // The failure comes once the send's run is in the store, and the retry before its end is.
      h.openai.failWith(503, { delayMs: 20 });
      await failure(send(owner, hash));
      const before = h.openai.requests.length;
      h.openai.reply(`generated again (${again})`);
      if (again === "json") {
        expect((await send(owner, hash)).reply?.text).toBe("generated again (json)");
      } else {
        const events = await stream(owner, hash);
        expect(events.at(-1)?.event.case).toBe("completed");
      }
      expect(h.openai.requests.length).toBe(before + 1);
    }
  });

  it("generates anew a message sent again while its first send is still failing, instead of answering that failure", async () => {
    const owner = agent();
    const hash = keyHash();
    // The first send's caller gives up while the model is still answering: its retry comes before that send ends.
    h.openai.failWith(503, { delayMs: 400 });
    const gaveUp = new AbortController();
    const first = failure(
      h.client.sendMessage(
        { accountId: ACCOUNT, agent: owner, text: "hello", userId: "u1", idempotencyKeyHash: hash },
        { signal: gaveUp.signal },
      ),
    );
    await expect.poll(() => h.openai.requests.length).toBe(1);
    gaveUp.abort();
    await first;
    h.openai.reply("answered on the retry");
    expect((await send(owner, hash)).reply?.text).toBe("answered on the retry");
    expect(h.openai.requests).toHaveLength(2);
  });

  it("refuses the key with another message: IDEMPOTENCY_KEY_REUSED", async () => {
    const owner = agent();
    const hash = keyHash();
    await send(owner, hash, "first");
    expect((await failure(send(owner, hash, "second"))).code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect((await failure(send(agent(), hash, "first"))).code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(h.openai.requests).toHaveLength(1);
    expect((await failure(send(owner, "not-a-hash"))).code).toBe("INVALID_REQUEST");
  });

  it("replays a stream's events from its log, then, once the log is gone, as started, one delta and completed", async () => {
    const owner = agent();
    const hash = keyHash();
    h.openai.answer({ chunks: ["Once ", "upon ", "a time."] });
    const stream = () =>
      streamed(
        h.client.streamMessage({
          accountId: ACCOUNT,
          agent: owner,
          text: "a story",
          userId: "u1",
          idempotencyKeyHash: hash,
        }),
      );
    const first = await stream();
    const again = await stream();
    expect(h.openai.requests).toHaveLength(1);
    expect(first.map(({ event }) => event.case)).toEqual(["started", "delta", "delta", "delta", "completed"]);
    expect(again).toEqual(first);

    // The log is kept for STREAM_RETENTION; then the stored reply is all there is.
    const started = first[0]!.event;
    if (started.case !== "started") throw new Error("expected the started event first");
    while (
      (await h.conversation.store.getRun(ACCOUNT, owner.id, started.value.messageId))?.status !== "completed"
    ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await h.conversation.store.removeExpiredRuns("2999-01-01T00:00:00.000Z", 1000);
    const rebuilt = await stream();
    expect(h.openai.requests).toHaveLength(1);
    expect(rebuilt.map(({ sequence, event }) => [Number(sequence), event.case])).toEqual([
      [1, "started"],
      [2, "delta"],
      [3, "completed"],
    ]);
    expect(rebuilt[0]!.event).toEqual(first[0]!.event);
    expect(rebuilt[1]!.event.value).toMatchObject({ text: "Once upon a time." });
    expect(rebuilt[2]!.event).toEqual(first.at(-1)!.event);
  });

  it("streams the stored reply of a message first sent as JSON with the key", async () => {
    const owner = agent();
    const hash = keyHash();
    h.openai.reply("answered as JSON");
    const first = await send(owner, hash);
    const events = await stream(owner, hash);
    expect(h.openai.requests).toHaveLength(1);
    const completed = events.at(-1)!.event;
    expect(completed.case).toBe("completed");
    expect(completed.value).toEqual(first.reply);
  });

  it("answers a background message sent again with its key with the first one's id, running or done", async () => {
    const owner = agent();
    const hash = keyHash();
    h.openai.reply("in the background", { delayMs: 200 });
    const start = () =>
      h.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "work", idempotencyKeyHash: hash });
    const { messageId } = await start();
    expect((await start()).messageId).toBe(messageId);
    for await (const _ of h.client.watchMessage({
      accountId: ACCOUNT,
      agentId: owner.id,
      messageId,
      after: 0n,
      endOnly: true,
    })) {
      // To its end.
    }
    expect((await start()).messageId).toBe(messageId);
    expect(h.openai.requests).toHaveLength(1);
    const turns = await h.client.listTurns({ accountId: ACCOUNT, agentId: owner.id });
    expect(turns.turns.map((turn) => turn.text)).toEqual(["work", "in the background"]);
  });

  it("forgets the key with the exchange: a user erased, a conversation or an agent deleted", async () => {
    const owner = agent();
    const erased = keyHash();
    const dropped = keyHash();
    const purged = keyHash();
    await send(owner, erased);
    await h.client.eraseUser({ accountId: ACCOUNT, userId: "u1" });
    await send(owner, erased);
    expect(h.openai.requests).toHaveLength(2);

    const room = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: owner,
      text: "in a room",
      roomId: "r1",
      idempotencyKeyHash: dropped,
    });
    const turn = await h.client.getMessage({
      accountId: ACCOUNT,
      agentId: owner.id,
      messageId: room.reply!.id,
    });
    await h.client.deleteConversation({
      accountId: ACCOUNT,
      agentId: owner.id,
      conversationId: turn.message!.conversationId,
    });
    expect(await h.conversation.store.keyedExchange(ACCOUNT, dropped, new Date().toISOString())).toBeNull();

    const doomed = agent();
    await send(doomed, purged);
    expect(
      await h.conversation.store.keyedExchange(ACCOUNT, purged, new Date().toISOString()),
    ).not.toBeNull();
    await h.client.purgeAgent({ accountId: ACCOUNT, agentId: doomed.id });
    expect(await h.conversation.store.keyedExchange(ACCOUNT, purged, new Date().toISOString())).toBeNull();
    expect(
      await h.conversation.store.keyedExchange(ACCOUNT, erased, new Date().toISOString()),
    ).not.toBeNull();
  });
});

describe.each(["sqlite", "postgres"] as const)(
  "a message sent again with its key to another process (%s)",
  (kind) => {
    /** Two conversation services on one store, as two replicas are: `a` gets the first send, `b` the retry. */
    let a: Harness;
    let b: Harness;
    let dataDir: string | undefined;
    beforeAll(async () => {
      if (kind === "postgres") {
        db ??= await openTestDatabase();
        const schema = `conversation_keys_two_${Date.now()}`;
        const open = () => openPostgresConversationStore({ connectionString: db!.url, schema });
        a = await startHarness({ store: await open() });
        b = await startHarness({ store: await open() });
      } else {
        dataDir = mkdtempSync(join(tmpdir(), "conversation-keys-"));
        a = await startHarness({ dataDir });
        b = await startHarness({ dataDir });
      }
    }, 60_000);
    afterAll(async () => {
      await Promise.all([a.close(), b.close()]);
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });
    beforeEach(() => {
      a.openai.reset();
      b.openai.reset();
    });

    /** Resolves once the first send's run is in the store, where the other process can find it. */
    async function recorded(hash: string): Promise<void> {
      while (!(await b.conversation.store.keyedRun(ACCOUNT, hash, new Date().toISOString()))) await sleep(1);
    }

    const message = (owner: ReturnType<typeof agent>, hash: string, text = "a story") => ({
      accountId: ACCOUNT,
      agent: owner,
      text,
      userId: "u1",
      idempotencyKeyHash: hash,
    });

    async function exchanges(on: Harness, owner: ReturnType<typeof agent>): Promise<string[]> {
      const { turns } = await on.client.listTurns({ accountId: ACCOUNT, agentId: owner.id, userId: "u1" });
      return turns.map((turn) => turn.text);
    }

    /** The message was generated once, by `a`, and is stored as this one exchange. */
    async function generatedOnceByA(owner: ReturnType<typeof agent>, exchange: string[]): Promise<void> {
      expect(a.openai.requests).toHaveLength(1);
      expect(b.openai.requests).toHaveLength(0);
      expect(await exchanges(b, owner)).toEqual(exchange);
    }

    it("follows the stream being generated by the other: the same events, one provider call, one exchange", async () => {
      const owner = agent();
      const hash = keyHash();
      // Held until the retry has reached the other process.
      a.openai.answer({ chunks: ["Once ", "upon ", "a time."], delayMs: 300 });
      const first = streamed(a.client.streamMessage(message(owner, hash)));
      await recorded(hash);
      const again = await streamed(b.client.streamMessage(message(owner, hash)));
      expect(again).toEqual(await first);
      expect(again.map(({ event }) => event.case)).toEqual([
        "started",
        "delta",
        "delta",
        "delta",
        "completed",
      ]);
      await generatedOnceByA(owner, ["a story", "Once upon a time."]);
    });

    it("answers a background message's id, and a JSON send its reply once generated, from the other's run", async () => {
      const owner = agent();
      const hash = keyHash();
      a.openai.reply("in the background", { delayMs: 300 });
      const { messageId } = await a.client.startMessage(message(owner, hash, "work"));
      expect((await b.client.startMessage(message(owner, hash, "work"))).messageId).toBe(messageId);
      const sent = await b.client.sendMessage(message(owner, hash, "work"));
      expect(sent.reply?.id).toBe(messageId);
      expect(sent.reply?.text).toBe("in the background");
      const read = await b.client.getMessage({ accountId: ACCOUNT, agentId: owner.id, messageId });
      expect(read.background?.reply).toEqual(sent.reply);
      await generatedOnceByA(owner, ["work", "in the background"]);
    });

    it("waits for the JSON send being answered by the other, as JSON or as a stream: one provider call", async () => {
      const owner = agent();
      const hash = keyHash();
      a.openai.reply("answered once", { delayMs: 300 });
      const first = a.client.sendMessage(message(owner, hash));
      await recorded(hash);
      const [again, streamedAgain] = await Promise.all([
        b.client.sendMessage(message(owner, hash)),
        streamed(b.client.streamMessage(message(owner, hash))),
      ]);
      expect(again.reply).toEqual((await first).reply);
      expect(streamedAgain.map(({ event }) => event.case)).toEqual(["started", "delta", "completed"]);
      expect(streamedAgain.at(-1)!.event.value).toEqual(again.reply);
      await generatedOnceByA(owner, ["a story", "answered once"]);
      // A JSON send keeps no log to resume.
      const resumed = async () => {
        for await (const _ of b.client.watchMessage({
          accountId: ACCOUNT,
          agentId: owner.id,
          messageId: again.reply!.id,
        })) {
          // None.
        }
      };
      expect((await failure(resumed)).code).toBe("STREAM_NOT_FOUND");
    });

    it("answers a JSON send with the failure of the other's run", async () => {
      const owner = agent();
      const hash = keyHash();
      a.openai.failWith(401, { delayMs: 300 });
      const first = failure(streamed(a.client.streamMessage(message(owner, hash))));
      await recorded(hash);
      const again = await failure(b.client.sendMessage(message(owner, hash)));
      expect(again.code).toBe("MODEL_ERROR");
      expect((await first).code).toBe("MODEL_ERROR");
      expect(b.openai.requests).toHaveLength(0);
      // Failures are not kept: sent once more, the message is generated.
      b.openai.reply("second time lucky");
      expect((await b.client.sendMessage(message(owner, hash))).reply?.text).toBe("second time lucky");
    });

    it("refuses the key with another message while the other generates the first: IDEMPOTENCY_KEY_REUSED", async () => {
      const owner = agent();
      const hash = keyHash();
      a.openai.reply("the first", { delayMs: 300 });
      const first = streamed(a.client.streamMessage(message(owner, hash)));
      await recorded(hash);
      const other = await failure(streamed(b.client.streamMessage(message(owner, hash, "another story"))));
      expect(other.code).toBe("IDEMPOTENCY_KEY_REUSED");
      expect((await failure(b.client.sendMessage(message(agent(), hash)))).code).toBe(
        "IDEMPOTENCY_KEY_REUSED",
      );
      await first;
      expect(b.openai.requests).toHaveLength(0);
    });
  },
);
