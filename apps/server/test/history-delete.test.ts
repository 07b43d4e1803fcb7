import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Harness, Tenant } from "./harness.js";
import {
  type Answer,
  type ConversationJson,
  expectError,
  type HistoryWorld,
  type MessageJson,
  MISSING,
  newAgent,
  type Page,
  query,
  say,
  startHistoryWorld,
} from "./history-helpers.js";

let world: HistoryWorld;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  world = await startHistoryWorld();
  ({ h, tenant } = world);
});
afterAll(() => world.close());
beforeEach(() => world.openai.reset());

interface ConversationDeleted {
  success: boolean;
  data: { id: string; deleted: true; messagesDeleted: number };
}
interface UserErased {
  success: boolean;
  data: { userId: string; deleted: true; messagesDeleted: number };
}

const deleteConversation = (agentId: string, conversationId: string, key = tenant.key) =>
  h.request<ConversationDeleted>("DELETE", `/v1/agents/${agentId}/conversations/${conversationId}`, {
    key,
  }) as Promise<Answer<ConversationDeleted>>;

const erase = (userId: string, key = tenant.key) =>
  h.request<UserErased>("DELETE", `/v1/users/${encodeURIComponent(userId)}`, { key }) as Promise<
    Answer<UserErased>
  >;

async function messagesOf(agentId: string, params: Record<string, string> = {}, key = tenant.key) {
  const res = await h.request<Page<MessageJson>>(
    "GET",
    `/v1/agents/${agentId}/messages${query({ ...params, limit: 100 })}`,
    { key },
  );
  expect(res.status).toBe(200);
  return res.body.data;
}

async function conversationsOf(agentId: string, key = tenant.key) {
  const res = await h.request<Page<ConversationJson>>("GET", `/v1/agents/${agentId}/conversations`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The text of every message the fake provider was last sent, system prompt included. */
const lastPrompt = () => JSON.stringify(world.openai.lastRequest.body.messages);

describe("DELETE /v1/agents/{agentId}/conversations/{conversationId}", () => {
  it("deletes the conversation's messages from every read and from the next prompt", async () => {
    const agentId = await newAgent(h, tenant.key);
    await say(h, tenant.key, agentId, "my code is 7731", { userId: "u1", roomId: "r1" });
    const replyId = await say(h, tenant.key, agentId, "what is my code?", { userId: "u1", roomId: "r1" });
    expect(lastPrompt()).toContain("7731");
    await say(h, tenant.key, agentId, "kept", { userId: "u2" });
    const [doomed] = await messagesOf(agentId, { userId: "u1", roomId: "r1" });
    const conversationId = doomed!.conversationId;

    const res = await deleteConversation(agentId, conversationId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { id: conversationId, deleted: true, messagesDeleted: 4 },
    });

    expect(await messagesOf(agentId, { userId: "u1" })).toEqual([]);
    expect((await messagesOf(agentId)).map((m) => m.text)).toEqual(["Echo: kept", "kept"]);
    expect((await conversationsOf(agentId)).map((c) => c.id)).not.toContain(conversationId);
    for (const id of [doomed!.id, replyId]) {
      const gone = await h.request<object>("GET", `/v1/agents/${agentId}/messages/${id}`, {
        key: tenant.key,
      });
      expectError(gone as Answer<object>, 404, "MESSAGE_NOT_FOUND");
    }
    const filtered = await h.request<object>(
      "GET",
      `/v1/agents/${agentId}/messages?conversationId=${conversationId}`,
      { key: tenant.key },
    );
    expectError(filtered as Answer<object>, 404, "CONVERSATION_NOT_FOUND");

    // The same user and room start afresh: a new conversation, and a prompt without the old messages.
    await say(h, tenant.key, agentId, "do you know my code?", { userId: "u1", roomId: "r1" });
    expect(lastPrompt()).not.toContain("7731");
    expect(lastPrompt()).toContain("do you know my code?");
    const [fresh] = await messagesOf(agentId, { userId: "u1", roomId: "r1" });
    expect(fresh!.conversationId).not.toBe(conversationId);

    expectError(await deleteConversation(agentId, conversationId), 404, "CONVERSATION_NOT_FOUND");
  });

  it("answers a conversation that is not the agent's, or not an id, with 404 CONVERSATION_NOT_FOUND", async () => {
    const agentId = await newAgent(h, tenant.key);
    const sibling = await newAgent(h, tenant.key);
    await say(h, tenant.key, sibling, "sibling's");
    const [theirs] = await conversationsOf(sibling);
    for (const id of [theirs!.id, MISSING.conversation, "conv_nope", MISSING.message]) {
      expectError(await deleteConversation(agentId, id), 404, "CONVERSATION_NOT_FOUND");
    }
    expect(await conversationsOf(sibling)).toHaveLength(1);
  });

  it("needs history:delete; another account's agent is not found and keeps its conversation", async () => {
    const agentId = await newAgent(h, tenant.key);
    await say(h, tenant.key, agentId, "mine");
    const [conversation] = await conversationsOf(agentId);
    expectError(
      (await deleteConversation(agentId, conversation!.id, "")) as Answer<object>,
      401,
      "UNAUTHORIZED",
    );
    const reader = await tenant.keyWith(["history:read", "agents:delete"]);
    const refused = await deleteConversation(agentId, conversation!.id, reader.key);
    expectError(refused, 403, "FORBIDDEN");
    expect(refused.body.error.message).toContain("history:delete");
    const stranger = await h.tenant();
    expectError(await deleteConversation(agentId, conversation!.id, stranger.key), 404, "AGENT_NOT_FOUND");
    const theirAgent = await newAgent(h, stranger.key);
    expectError(
      await deleteConversation(theirAgent, conversation!.id, stranger.key),
      404,
      "CONVERSATION_NOT_FOUND",
    );
    expectError(await deleteConversation(MISSING.agent, conversation!.id), 404, "AGENT_NOT_FOUND");
    expect(await conversationsOf(agentId)).toHaveLength(1);
    const only = await tenant.keyWith(["history:delete"]);
    expect((await deleteConversation(agentId, conversation!.id, only.key)).status).toBe(200);
  });
});

describe("DELETE /v1/users/{userId}", () => {
  it("erases the user's messages in every agent of the account, idempotently, and nobody else's", async () => {
    const a = await newAgent(h, tenant.key);
    const b = await newAgent(h, tenant.key);
    await say(h, tenant.key, a, "a in r1", { userId: "erin", roomId: "r1" });
    await say(h, tenant.key, a, "a in r2", { userId: "erin", roomId: "r2" });
    await say(h, tenant.key, b, "my pin is 5562", { userId: "erin" });
    await say(h, tenant.key, a, "another user", { userId: "frank", roomId: "r1" });
    await say(h, tenant.key, b, "no user at all");
    // The same user id in another account is another person.
    const stranger = await h.tenant();
    const theirAgent = await newAgent(h, stranger.key);
    await say(h, stranger.key, theirAgent, "theirs", { userId: "erin" });

    const res = await erase("erin");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { userId: "erin", deleted: true, messagesDeleted: 6 } });

    expect(await messagesOf(a, { userId: "erin" })).toEqual([]);
    expect(await messagesOf(b, { userId: "erin" })).toEqual([]);
    expect((await messagesOf(a)).map((m) => m.userId)).toEqual(["frank", "frank"]);
    expect((await messagesOf(b)).map((m) => m.userId)).toEqual([null, null]);
    expect((await conversationsOf(a)).map((c) => c.userId)).toEqual(["frank"]);
    expect(await messagesOf(theirAgent, {}, stranger.key)).toHaveLength(2);

    // Nothing of it reaches a later prompt.
    await say(h, tenant.key, b, "what is my pin?", { userId: "erin" });
    expect(lastPrompt()).not.toContain("5562");

    // Again: the same answer, nothing more deleted but what was said since.
    expect((await erase("erin")).body.data).toEqual({ userId: "erin", deleted: true, messagesDeleted: 2 });
    expect((await erase("erin")).body.data).toEqual({ userId: "erin", deleted: true, messagesDeleted: 0 });
    expect((await erase("never-seen")).body.data).toEqual({
      userId: "never-seen",
      deleted: true,
      messagesDeleted: 0,
    });
  });

  it("takes any user id a message can carry, URL-encoded", async () => {
    const agentId = await newAgent(h, tenant.key);
    const odd = "ana/maría ✓ #1?";
    await say(h, tenant.key, agentId, "hola", { userId: odd });
    const res = await erase(odd);
    expect(res.body.data).toEqual({ userId: odd, deleted: true, messagesDeleted: 2 });
    expect(await messagesOf(agentId)).toEqual([]);
  });

  it("refuses a user id no message can carry with 400", async () => {
    expectError(await erase("x".repeat(257)), 400, "INVALID_REQUEST", "userId");
    expectError(await erase("a\u0000b"), 400, "INVALID_REQUEST", "userId");
  });

  it("needs history:delete", async () => {
    expectError((await erase("erin", "")) as Answer<object>, 401, "UNAUTHORIZED");
    const reader = await tenant.keyWith(["history:read"]);
    expectError(await erase("erin", reader.key), 403, "FORBIDDEN");
    const only = await tenant.keyWith(["history:delete"]);
    expect((await erase("erin", only.key)).status).toBe(200);
  });
});
