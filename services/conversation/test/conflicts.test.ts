import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageStatus } from "@agentry/proto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OpenAIChatBody } from "../src/testing/index.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

/** Two conversation services on one SQLite file, as two processes would share it. */
let dataDir: string;
let a: Harness;
let b: Harness;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "conversation-conflicts-"));
  const runLeases = { leaseMs: 2_000, renewMs: 100, scanMs: 100 };
  a = await startHarness({ dataDir, runLeases });
  b = await startHarness({ dataDir, runLeases });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  a.openai.reset();
  b.openai.reset();
});

/** A reply streamed a word every `ms`: a message that stays in progress for a while. */
function slow(words: number, ms = 100) {
  return { chunks: Array.from({ length: words }, (_, i) => `w${i} `), chunkDelayMs: ms };
}

/** The text of every message a provider request carried, in order. */
function prompt(body: OpenAIChatBody): string[] {
  return body.messages.map((message) => (typeof message.content === "string" ? message.content : ""));
}

async function settled(on: Harness, agentId: string, messageId: string) {
  await expect
    .poll(
      async () => (await on.client.getMessage({ accountId: ACCOUNT, agentId, messageId })).background?.status,
      { timeout: 15_000 },
    )
    .not.toBe(MessageStatus.PENDING);
  return (await on.client.getMessage({ accountId: ACCOUNT, agentId, messageId })).background!;
}

describe("a second message while the conversation has one in progress", () => {
  it("reject: refuses it with CONVERSATION_BUSY, sync and background, per send or by the agent's setting", async () => {
    const owner = agent();
    const strict = agent({ settings: { concurrentMessages: "reject" } });
    a.openai.answer(slow(10));
    a.openai.answer(slow(10));
    const first = await a.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "first" });
    const firstStrict = await a.client.startMessage({ accountId: ACCOUNT, agent: strict, text: "first" });
    await expect.poll(() => a.openai.requests.length).toBe(2);

    // Per send, on the other process too.
    for (const on of [a, b]) {
      const sync = await failure(
        on.client.sendMessage({ accountId: ACCOUNT, agent: owner, text: "now?", onConflict: "reject" }),
      );
      expect(sync.code).toBe("CONVERSATION_BUSY");
      expect(sync.message).toMatch(/enqueue/);
      const background = await failure(
        on.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "now?", onConflict: "reject" }),
      );
      expect(background.code).toBe("CONVERSATION_BUSY");
    }
    // The agent's settings.concurrentMessages, without onConflict.
    const bySetting = await failure(
      b.client.sendMessage({ accountId: ACCOUNT, agent: strict, text: "now?" }),
    );
    expect(bySetting.code).toBe("CONVERSATION_BUSY");
    // Another conversation of the agent is not busy.
    b.openai.reply("other user");
    const other = await b.client.sendMessage({
      accountId: ACCOUNT,
      agent: strict,
      text: "hi",
      userId: "someone-else",
    });
    expect(other.reply?.text).toBe("other user");
    // Nothing refused was sent to a model; once the first has ended, the conversation takes messages again.
    expect(a.openai.requests).toHaveLength(2);
    expect((await settled(a, owner.id, first.messageId)).status).toBe(MessageStatus.COMPLETED);
    expect((await settled(a, strict.id, firstStrict.messageId)).status).toBe(MessageStatus.COMPLETED);
    b.openai.reply("free again");
    const after = await b.client.sendMessage({ accountId: ACCOUNT, agent: strict, text: "now" });
    expect(after.reply?.text).toBe("free again");
  }, 30_000);

  it("enqueue (the default): three messages answered one at a time in the order they came, each seeing the one before", async () => {
    const owner = agent();
    a.openai.answer({ ...slow(5), text: undefined });
    const first = await a.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "one" });
    await expect.poll(() => a.openai.requests.length).toBe(1);
    const second = await a.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "two" });
    // A JSON send waits its turn too.
    const third = a.client.sendMessage({
      accountId: ACCOUNT,
      agent: owner,
      text: "three",
      onConflict: "enqueue",
    });
    const reply = await third;
    expect(reply.reply?.text).toBe("Echo: three");
    for (const { messageId } of [first, second]) {
      expect((await settled(a, owner.id, messageId)).status).toBe(MessageStatus.COMPLETED);
    }
    // One provider call at a time, in order, each with the replies before it in its history.
    expect(a.openai.requests.map((request) => prompt(request.body).at(-1))).toEqual(["one", "two", "three"]);
    expect(prompt(a.openai.requests[1]!.body)).toContain("w0 w1 w2 w3 w4 ");
    expect(prompt(a.openai.requests[2]!.body)).toContain("Echo: two");
    const history = await a.client.listMessages({
      accountId: ACCOUNT,
      agentId: owner.id,
      page: { limit: 10 },
    });
    expect(history.messages.map((message) => message.text).reverse()).toEqual([
      "one",
      "w0 w1 w2 w3 w4 ",
      "two",
      "Echo: two",
      "three",
      "Echo: three",
    ]);
  }, 30_000);

  it("enqueue across two processes on one SQLite file: the order they came in, whichever process takes each", async () => {
    const owner = agent();
    a.openai.answer(slow(5));
    const first = await a.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "one" });
    await expect.poll(() => a.openai.requests.length).toBe(1);
    b.openai.answer(slow(3));
    const second = await b.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "two" });
    const third = await a.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "three" });
    // Waiting its turn behind the first, the second has not reached its model.
    expect(b.openai.requests).toHaveLength(0);
    for (const { messageId } of [first, second, third]) {
      expect((await settled(a, owner.id, messageId)).status).toBe(MessageStatus.COMPLETED);
    }
    expect(prompt(b.openai.requests[0]!.body).at(-1)).toBe("two");
    expect(prompt(b.openai.requests[0]!.body)).toContain("w0 w1 w2 w3 w4 ");
    expect(prompt(a.openai.requests[1]!.body).at(-1)).toBe("three");
    expect(prompt(a.openai.requests[1]!.body)).toContain("w0 w1 w2 ");
    const history = await b.client.listMessages({
      accountId: ACCOUNT,
      agentId: owner.id,
      page: { limit: 10 },
    });
    expect(history.messages.map((message) => message.text).reverse()).toEqual([
      "one",
      "w0 w1 w2 w3 w4 ",
      "two",
      "w0 w1 w2 ",
      "three",
      "Echo: three",
    ]);
  }, 30_000);

  it("interrupt: cancels the message in progress (its partial text stored, cancelled), then answers the new one", async () => {
    const owner = agent();
    a.openai.answer(slow(100, 50));
    const first = await a.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "ramble" });
    await expect.poll(() => a.openai.requests.length).toBe(1);
    // Some text is out before the interruption.
    await expect
      .poll(async () => {
        const events: string[] = [];
        const watch = a.client.watchMessage({
          accountId: ACCOUNT,
          agentId: owner.id,
          messageId: first.messageId,
          after: 0n,
        });
        for await (const event of watch) {
          if (event.event.case) events.push(event.event.case);
          if (events.includes("delta")) break;
        }
        return events.includes("delta");
      })
      .toBe(true);
    // From the other process: the process generating the first stops it at its next tick.
    b.openai.reply("the new answer");
    const second = await b.client.sendMessage({
      accountId: ACCOUNT,
      agent: owner,
      text: "stop, answer this",
      onConflict: "interrupt",
    });
    expect(second.reply?.text).toBe("the new answer");
    expect(await a.openai.requests[0]!.outcome).toBe("aborted");

    const cancelled = await settled(b, owner.id, first.messageId);
    expect(cancelled.status).toBe(MessageStatus.CANCELLED);
    expect(cancelled.reply?.finishReason).toBe("cancelled");
    const partial = cancelled.reply!.text;
    expect(partial.length).toBeGreaterThan(0);
    expect(slow(100).chunks.join("").startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan(slow(100).chunks.join("").length);
    // The new message's prompt has the cancelled reply's text in its history, before it.
    expect(prompt(b.openai.requests[0]!.body)).toContain(partial);
    const history = await a.client.listMessages({
      accountId: ACCOUNT,
      agentId: owner.id,
      page: { limit: 10 },
    });
    expect(history.messages.map((message) => [message.text, message.finishReason]).reverse()).toEqual([
      ["ramble", ""],
      [partial, "cancelled"],
      ["stop, answer this", ""],
      ["the new answer", "stop"],
    ]);
  }, 30_000);

  it("interrupt of a JSON send: its caller is answered a cancelled reply, without text", async () => {
    const owner = agent();
    a.openai.answer({ text: "too late", delayMs: 5_000 });
    const first = a.client.sendMessage({ accountId: ACCOUNT, agent: owner, text: "slow one" });
    await expect.poll(() => a.openai.requests.length).toBe(1);
    a.openai.reply("quick one");
    const second = await a.client.startMessage({
      accountId: ACCOUNT,
      agent: owner,
      text: "never mind",
      onConflict: "interrupt",
    });
    const interrupted = await first;
    expect(interrupted.reply).toMatchObject({ text: "", finishReason: "cancelled" });
    const state = await settled(a, owner.id, second.messageId);
    expect(state.status).toBe(MessageStatus.COMPLETED);
    expect(state.reply?.text).toBe("quick one");
  }, 30_000);

  it("refuses an onConflict it does not know", async () => {
    const refused = await failure(
      a.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "hi", onConflict: "queue" }),
    );
    expect(refused.code).toBe("INVALID_REQUEST");
  });
});
