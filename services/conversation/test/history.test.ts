import { HistoryOrder, TurnRole } from "@agentry/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function converse(a: ReturnType<typeof agent>, texts: string[], userId: string, roomId?: string) {
  const ids: string[] = [];
  for (const text of texts) {
    h.openai.answer({ text: `re: ${text}`, finishReason: "stop" });
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text,
      userId,
      ...(roomId ? { roomId } : {}),
      apiKeyId: "key_01JTEST0000000000000000000",
    });
    ids.push(reply!.id);
  }
  return ids;
}

describe("history RPCs", () => {
  it("list an agent's conversations and messages, read one, and page by cursor", async () => {
    const a = agent();
    const [firstReply] = await converse(a, ["one", "two"], "u1", "r1");
    await converse(a, ["three"], "u2");

    const conversations = await h.client.listConversations({ accountId: ACCOUNT, agentId: a.id });
    expect(conversations.conversations.map((c) => [c.userId, c.roomId, c.messageCount])).toEqual([
      ["u2", "", 2],
      ["u1", "r1", 4],
    ]);
    expect(conversations.hasMore).toBe(false);

    const newest = await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id, page: { limit: 3 } });
    expect(newest.messages.map((m) => m.text)).toEqual(["re: three", "three", "re: two"]);
    expect(newest.hasMore).toBe(true);
    const rest = await h.client.listMessages({
      accountId: ACCOUNT,
      agentId: a.id,
      page: { limit: 3, before: newest.messages.at(-1)!.id },
    });
    expect(rest.messages.map((m) => m.text)).toEqual(["two", "re: one", "one"]);
    expect(rest.hasMore).toBe(false);

    const u1 = await h.client.listMessages({
      accountId: ACCOUNT,
      agentId: a.id,
      conversationId: conversations.conversations[1]!.id,
      page: { order: HistoryOrder.ASC },
    });
    expect(u1.messages.map((m) => [m.role, m.text])).toEqual([
      [TurnRole.USER, "one"],
      [TurnRole.ASSISTANT, "re: one"],
      [TurnRole.USER, "two"],
      [TurnRole.ASSISTANT, "re: two"],
    ]);

    const { message } = await h.client.getMessage({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId: firstReply!,
    });
    expect(message).toMatchObject({
      id: firstReply,
      text: "re: one",
      finishReason: "stop",
      conversationId: conversations.conversations[1]!.id,
      usage: { totalTokens: expect.any(Number) },
    });
    expect(
      (
        await failure(
          h.client.getMessage({ accountId: ACCOUNT, agentId: agent().id, messageId: firstReply! }),
        )
      ).code,
    ).toBe("MESSAGE_NOT_FOUND");
  });

  it("refuse bad pages, foreign cursors and another agent's conversation", async () => {
    const a = agent();
    const b = agent();
    await converse(a, ["mine"], "u1");
    const [theirs] = await converse(b, ["theirs"], "u1");
    const theirConversation = (await h.client.listConversations({ accountId: ACCOUNT, agentId: b.id }))
      .conversations[0]!.id;
    for (const page of [
      { limit: 101 },
      { limit: -1 },
      { before: "msg_x", after: "msg_y" },
      { before: theirs! },
    ]) {
      expect((await failure(h.client.listMessages({ accountId: ACCOUNT, agentId: a.id, page }))).code).toBe(
        "INVALID_REQUEST",
      );
    }
    expect(
      (
        await failure(
          h.client.listConversations({
            accountId: ACCOUNT,
            agentId: a.id,
            page: { after: theirConversation },
          }),
        )
      ).code,
    ).toBe("INVALID_REQUEST");
    expect(
      (
        await failure(
          h.client.listMessages({ accountId: ACCOUNT, agentId: a.id, conversationId: theirConversation }),
        )
      ).code,
    ).toBe("CONVERSATION_NOT_FOUND");
    expect((await failure(h.client.listMessages({ accountId: "", agentId: a.id }))).code).toBe(
      "INVALID_REQUEST",
    );
  });

  it("deletes a conversation from every read and every later prompt", async () => {
    const a = agent();
    await converse(a, ["remember the word cobalt"], "u1");
    const id = (await h.client.listConversations({ accountId: ACCOUNT, agentId: a.id })).conversations[0]!.id;
    expect(
      await h.client.deleteConversation({ accountId: ACCOUNT, agentId: a.id, conversationId: id }),
    ).toMatchObject({
      deletedMessages: 2,
    });
    expect((await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id })).messages).toEqual([]);
    expect(
      (await failure(h.client.deleteConversation({ accountId: ACCOUNT, agentId: a.id, conversationId: id })))
        .code,
    ).toBe("CONVERSATION_NOT_FOUND");
    // The next prompt of the same user starts from nothing.
    h.openai.reset();
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "what was the word?", userId: "u1" });
    expect(JSON.stringify(h.openai.lastRequest.body.messages)).not.toContain("cobalt");
  });

  it("export a user's messages across agents as a stream of pages, and erase them everywhere", async () => {
    const a = agent();
    const b = agent();
    await converse(a, ["a1", "a2"], "erased-user");
    await converse(b, ["b1"], "erased-user", "room");
    await converse(a, ["kept"], "someone-else");

    const exported: string[] = [];
    for await (const page of h.client.exportUser({ accountId: ACCOUNT, userId: "erased-user" })) {
      expect(page.messages.length).toBeGreaterThan(0);
      exported.push(...page.messages.map((m) => `${m.agentId === a.id ? "a" : "b"}:${m.text}`));
    }
    expect(exported).toEqual(["a:a1", "a:re: a1", "a:a2", "a:re: a2", "b:b1", "b:re: b1"]);

    expect(await h.client.eraseUser({ accountId: ACCOUNT, userId: "erased-user" })).toMatchObject({
      deletedMessages: 6,
    });
    const after: unknown[] = [];
    for await (const page of h.client.exportUser({ accountId: ACCOUNT, userId: "erased-user" }))
      after.push(page);
    expect(after).toEqual([]);
    expect(await h.client.eraseUser({ accountId: ACCOUNT, userId: "erased-user" })).toMatchObject({
      deletedMessages: 0,
    });
    expect(
      (await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id })).messages.map((m) => m.text),
    ).toEqual(["re: kept", "kept"]);
    expect((await failure(h.client.eraseUser({ accountId: ACCOUNT, userId: "" }))).code).toBe(
      "INVALID_REQUEST",
    );
  });
});
