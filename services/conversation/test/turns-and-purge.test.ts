import { TurnRole } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe("ListTurns", () => {
  it("reads a conversation oldest first, page by page, with every turn's fields", async () => {
    const a = agent({ model: "gpt-test" });
    for (let i = 1; i <= 3; i++) {
      h.openai.answer({ text: `answer ${i}`, usage: { input: 10 * i, output: i } });
      await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: `question ${i}`, userId: "u1" });
    }
    const first = await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id, userId: "u1", pageSize: 4 });
    expect(first.turns.map((t) => t.text)).toEqual(["question 1", "answer 1", "question 2", "answer 2"]);
    expect(first.nextPageToken).not.toBe("");
    const second = await h.client.listTurns({
      accountId: ACCOUNT,
      agentId: a.id,
      userId: "u1",
      pageSize: 4,
      pageToken: first.nextPageToken,
    });
    expect(second.turns.map((t) => t.text)).toEqual(["question 3", "answer 3"]);
    expect(second.nextPageToken).toBe("");

    const [user, assistant] = first.turns;
    expect(user).toMatchObject({
      agentId: a.id,
      userId: "u1",
      roomId: "",
      role: TurnRole.USER,
      model: "",
      modelProvider: "",
      latencyMs: 0,
    });
    expect(user!.usage).toBeUndefined();
    expect(assistant).toMatchObject({
      agentId: a.id,
      userId: "u1",
      role: TurnRole.ASSISTANT,
      model: "gpt-test",
      modelProvider: "openai",
      usage: { inputTokens: 10, outputTokens: 1, totalTokens: 11 },
    });
    expect(timestampDate(assistant!.createTime!).getTime()).toBeGreaterThanOrEqual(
      timestampDate(user!.createTime!).getTime(),
    );

    const all = await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id, userId: "u1" });
    expect(all.turns.length).toBe(6);
    expect(
      (await h.client.listTurns({ accountId: "acct_other", agentId: a.id, userId: "u1" })).turns,
    ).toEqual([]);
  });

  it("refuses a bad page size or page token with INVALID_REQUEST", async () => {
    const a = agent();
    for (const request of [
      { accountId: ACCOUNT, agentId: a.id, pageSize: 101 },
      { accountId: ACCOUNT, agentId: a.id, pageSize: -1 },
      { accountId: ACCOUNT, agentId: a.id, pageToken: "forged" },
      { accountId: ACCOUNT, agentId: "" },
      { accountId: "", agentId: a.id },
    ]) {
      expect((await failure(h.client.listTurns(request))).code).toBe("INVALID_REQUEST");
    }
    expect((await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id, pageSize: 100 })).turns).toEqual(
      [],
    );
  });
});

describe("PurgeAgent", () => {
  it("leaves nothing of the agent readable, is idempotent, and keeps other agents' data", async () => {
    const doomed = agent();
    const other = agent();
    await h.client.sendMessage({ accountId: ACCOUNT, agent: doomed, text: "one", userId: "u1" });
    await h.client.sendMessage({ accountId: ACCOUNT, agent: doomed, text: "two", userId: "u2", roomId: "r" });
    await h.client.sendMessage({ accountId: ACCOUNT, agent: doomed, text: "three" });
    h.openai.failWith(500);
    await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: doomed, text: "four" }));
    await h.client.sendMessage({ accountId: ACCOUNT, agent: other, text: "kept", userId: "u1" });

    const purged = await h.client.purgeAgent({ accountId: ACCOUNT, agentId: doomed.id });
    expect(purged).toMatchObject({ deletedTurns: 6, deletedCalls: 4 });

    for (const [userId, roomId] of [
      ["u1", undefined],
      ["u2", "r"],
      [undefined, undefined],
    ] as const) {
      const { turns } = await h.client.listTurns({
        accountId: ACCOUNT,
        agentId: doomed.id,
        ...(userId ? { userId } : {}),
        ...(roomId ? { roomId } : {}),
      });
      expect(turns).toEqual([]);
    }
    expect(await h.conversation.store.listCalls(ACCOUNT, doomed.id)).toEqual([]);

    expect(await h.client.purgeAgent({ accountId: ACCOUNT, agentId: doomed.id })).toMatchObject({
      deletedTurns: 0,
      deletedCalls: 0,
    });
    expect(
      (await h.client.listTurns({ accountId: ACCOUNT, agentId: other.id, userId: "u1" })).turns.length,
    ).toBe(2);
    expect((await h.conversation.store.listCalls(ACCOUNT, other.id)).length).toBe(1);
  });

  it("stores nothing of a reply that completes after its agent was purged", async () => {
    const a = agent();
    h.openai.reply("late reply", { delayMs: 300 });
    const next = h.openai.nextRequest();
    const pending = failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
    await next;
    await h.client.purgeAgent({ accountId: ACCOUNT, agentId: a.id });
    const error = await pending;
    expect(error.code).toBe("AGENT_NOT_FOUND");
    expect((await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id })).turns).toEqual([]);
    expect(await h.conversation.store.listCalls(ACCOUNT, a.id)).toEqual([]);
  });

  it("succeeds for an agent with nothing stored, and refuses a request without ids", async () => {
    expect(await h.client.purgeAgent({ accountId: ACCOUNT, agentId: "agt_never_seen" })).toMatchObject({
      deletedTurns: 0,
      deletedCalls: 0,
    });
    expect((await failure(h.client.purgeAgent({ accountId: ACCOUNT, agentId: "" }))).code).toBe(
      "INVALID_REQUEST",
    );
  });
});
