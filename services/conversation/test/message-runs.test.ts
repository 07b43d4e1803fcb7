import { setTimeout as sleep } from "node:timers/promises";
import { newId } from "@agentry/core";
import { MessageStatus, type WatchMessageResponse } from "@agentry/proto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.openai.reset();
});

async function watch(agentId: string, messageId: string, after = 0n): Promise<WatchMessageResponse[]> {
  const responses: WatchMessageResponse[] = [];
  for await (const response of h.client.watchMessage({ accountId: ACCOUNT, agentId, messageId, after })) {
    responses.push(response);
  }
  return responses;
}

describe("message runs", () => {
  it("answers a background message's id once it is recorded, then its reply by GetMessage and WatchMessage", async () => {
    const owner = agent();
    h.openai.reply("in the background", { delayMs: 100 });
    const { messageId } = await h.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "work" });
    const pending = await h.client.getMessage({ accountId: ACCOUNT, agentId: owner.id, messageId });
    expect(pending.background?.status).toBe(MessageStatus.PENDING);
    const events = await watch(owner.id, messageId);
    // The first answer says the log exists; then the events, numbered from 1, the completed one last.
    expect(events[0]!.event.case).toBeUndefined();
    expect(events.slice(1).map((event) => Number(event.sequence))).toEqual(
      events.slice(1).map((_, i) => i + 1),
    );
    expect(events.at(-1)!.event.case).toBe("completed");
    const done = await h.client.getMessage({ accountId: ACCOUNT, agentId: owner.id, messageId });
    expect(done.background?.status).toBe(MessageStatus.COMPLETED);
    expect(done.background?.reply?.text).toBe("in the background");
    // Nothing of it for another agent, nor a message that is not one.
    expect((await failure(watch(agent().id, messageId))).code).toBe("STREAM_NOT_FOUND");
    expect(
      (await failure(h.client.getMessage({ accountId: ACCOUNT, agentId: agent().id, messageId }))).code,
    ).toBe("MESSAGE_NOT_FOUND");
  });

  it("refuses a bad background message at once, and a negative after", async () => {
    const owner = agent();
    const refused = await failure(h.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "" }));
    expect(refused.code).toBe("INVALID_REQUEST");
    const negative = await failure(watch(owner.id, newId("message"), -1n));
    expect(negative.code).toBe("INVALID_REQUEST");
  });

  it("marks failed a pending message whose process stopped once its deadline has passed", async () => {
    const owner = agent();
    const id = newId("message");
    const long = new Date(Date.now() - 60_000).toISOString();
    await h.conversation.store.startRun({
      id,
      accountId: ACCOUNT,
      agentId: owner.id,
      userId: null,
      roomId: null,
      background: true,
      logged: true,
      idempotencyKey: null,
      status: "pending",
      errorCode: null,
      errorMessage: null,
      result: null,
      createdAt: long,
      deadlineAt: new Date(Date.now() - 1000).toISOString(),
      endedAt: null,
      expiresAt: null,
      keptUntil: null,
    });
    await h.conversation.store.appendRunEvents(id, [
      { seq: 1, type: "started", data: JSON.stringify({ messageId: id, agentId: owner.id }) },
    ]);
    const read = await h.client.getMessage({ accountId: ACCOUNT, agentId: owner.id, messageId: id });
    expect(read.background?.status).toBe(MessageStatus.FAILED);
    expect(read.background?.error?.code).toBe("AGENT_UNAVAILABLE");
    // Its log ends with the failure, numbered after its last event.
    const events = await watch(owner.id, id);
    expect(events.slice(1).map((event) => [Number(event.sequence), event.event.case])).toEqual([
      [1, "started"],
      [2, "failed"],
    ]);
    expect((await watch(owner.id, id, 2n)).slice(1)).toEqual([]);
  });
});

describe("background messages after their events expire", () => {
  const RETENTION_MS = 150;
  let short: Harness;
  beforeAll(async () => {
    short = await startHarness({ streamRetentionMs: RETENTION_MS });
  });
  afterAll(async () => {
    await short.close();
  });

  const read = (agentId: string, messageId: string) =>
    short.client.getMessage({ accountId: ACCOUNT, agentId, messageId });

  /** Reads the message until it is no longer pending. */
  async function ended(agentId: string, messageId: string) {
    for (;;) {
      const state = await read(agentId, messageId);
      if (state.background?.status !== MessageStatus.PENDING) return state;
      await sleep(10);
    }
  }

  /** Waits out the retention, then sweeps as the service does each minute. */
  async function expire(): Promise<void> {
    await sleep(RETENTION_MS + 50);
    while ((await short.conversation.store.removeExpiredRuns(new Date().toISOString(), 100)) > 0);
  }

  async function events(agentId: string, messageId: string) {
    const all: WatchMessageResponse[] = [];
    for await (const response of short.client.watchMessage({ accountId: ACCOUNT, agentId, messageId })) {
      all.push(response);
    }
    return all;
  }

  it("answers a completed one as completed, with its whole reply, for as long as the reply is stored", async () => {
    const owner = agent();
    short.openai.reply("done in the background", { usage: { input: 9, output: 4 } });
    const { messageId } = await short.client.startMessage({
      accountId: ACCOUNT,
      agent: owner,
      text: "work",
      userId: "u1",
      roomId: "r1",
    });
    const live = await ended(owner.id, messageId);
    expect(live.background?.status).toBe(MessageStatus.COMPLETED);
    await expire();
    expect(await short.conversation.store.getRun(ACCOUNT, owner.id, messageId)).toBeNull();
    expect((await failure(events(owner.id, messageId))).code).toBe("STREAM_NOT_FOUND");
    const later = await read(owner.id, messageId);
    expect(later.message).toBeUndefined();
    expect(later.background?.status).toBe(MessageStatus.COMPLETED);
    // The reply as the run answered it, fields and all.
    expect(later.background?.reply).toEqual(live.background?.reply);
    expect(later.background).toMatchObject({ id: messageId, agentId: owner.id, userId: "u1", roomId: "r1" });

    // A message sent otherwise is still read as a stored message.
    const plain = await short.client.sendMessage({ accountId: ACCOUNT, agent: owner, text: "now" });
    const stored = await read(owner.id, plain.reply!.id);
    expect(stored.background).toBeUndefined();
    expect(stored.message?.text).toBe(plain.reply?.text);

    // It goes with its conversation.
    const [conversation] = (
      await short.client.listConversations({ accountId: ACCOUNT, agentId: owner.id, userId: "u1" })
    ).conversations;
    await short.client.deleteConversation({
      accountId: ACCOUNT,
      agentId: owner.id,
      conversationId: conversation!.id,
    });
    expect((await failure(read(owner.id, messageId))).code).toBe("MESSAGE_NOT_FOUND");
  });

  it("answers a failed one as failed, with its error, for a day at least, its events gone", async () => {
    const owner = agent();
    short.openai.failWith(401, { message: "bad key" });
    const { messageId } = await short.client.startMessage({
      accountId: ACCOUNT,
      agent: owner,
      text: "work",
      userId: "u_fail",
    });
    const live = await ended(owner.id, messageId);
    expect(live.background?.status).toBe(MessageStatus.FAILED);
    await expire();
    expect((await failure(events(owner.id, messageId))).code).toBe("STREAM_NOT_FOUND");
    expect(await short.conversation.store.runEvents(messageId, 0, 100)).toEqual([]);
    const later = await read(owner.id, messageId);
    expect(later.background?.status).toBe(MessageStatus.FAILED);
    expect(later.background?.error).toEqual(live.background?.error);
    expect(later.background?.error?.code).toBe("MODEL_ERROR");
    const run = await short.conversation.store.getRun(ACCOUNT, owner.id, messageId);
    expect(Date.parse(run!.keptUntil!) - Date.parse(run!.endedAt!)).toBe(24 * 60 * 60 * 1000);

    // Its user erased: nothing of it is left.
    await short.client.eraseUser({ accountId: ACCOUNT, userId: "u_fail" });
    expect((await failure(read(owner.id, messageId))).code).toBe("MESSAGE_NOT_FOUND");
  });

  it("forgets a failed one with its agent", async () => {
    const owner = agent();
    short.openai.failWith(401, { message: "bad key" });
    const { messageId } = await short.client.startMessage({ accountId: ACCOUNT, agent: owner, text: "work" });
    await ended(owner.id, messageId);
    await expire();
    expect((await read(owner.id, messageId)).background?.status).toBe(MessageStatus.FAILED);
    await short.client.purgeAgent({ accountId: ACCOUNT, agentId: owner.id });
    expect((await failure(read(owner.id, messageId))).code).toBe("MESSAGE_NOT_FOUND");
  });
});
