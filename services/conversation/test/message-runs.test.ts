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
      status: "pending",
      errorCode: null,
      errorMessage: null,
      result: null,
      createdAt: long,
      deadlineAt: new Date(Date.now() - 1000).toISOString(),
      endedAt: null,
      expiresAt: null,
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
