import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const conversations = (
  agentId: string,
  params: Record<string, string | number | undefined> = {},
  key = tenant.key,
) =>
  h.request<Page<ConversationJson>>("GET", `/v1/agents/${agentId}/conversations${query(params)}`, {
    key,
  }) as Promise<Answer<Page<ConversationJson>>>;

const messages = (
  agentId: string,
  params: Record<string, string | number | undefined> = {},
  key = tenant.key,
) =>
  h.request<Page<MessageJson>>("GET", `/v1/agents/${agentId}/messages${query(params)}`, {
    key,
  }) as Promise<Answer<Page<MessageJson>>>;

const message = (agentId: string, messageId: string, key = tenant.key) =>
  h.request<{ success: boolean; data: MessageJson }>("GET", `/v1/agents/${agentId}/messages/${messageId}`, {
    key,
  }) as Promise<Answer<{ success: boolean; data: MessageJson }>>;

/** Every page of a list, following the cursor the way the contract says: `before` for desc, `after` for asc. */
async function allPages(
  agentId: string,
  params: Record<string, string | number | undefined>,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pages = 0;
  const cursor = params.order === "asc" ? "after" : "before";
  let next: string | undefined;
  for (;;) {
    const res = await messages(agentId, { ...params, [cursor]: next });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages += 1;
    ids.push(...res.body.data.map((m) => m.id));
    if (!res.body.pagination.hasMore) return { ids, pages };
    next = res.body.data.at(-1)!.id;
  }
}

describe("GET /v1/agents/{agentId}/conversations", () => {
  let agentId: string;
  beforeAll(async () => {
    agentId = await newAgent(h, tenant.key);
    await say(h, tenant.key, agentId, "default conversation");
    await say(h, tenant.key, agentId, "u1 in r1", { userId: "u1", roomId: "r1" });
    await say(h, tenant.key, agentId, "u1 in r2", { userId: "u1", roomId: "r2" });
    await say(h, tenant.key, agentId, "u2 in r1", { userId: "u2", roomId: "r1" });
  });

  it("lists the agent's conversations, newest activity first, with the default one's ids null", async () => {
    const res = await conversations(agentId);
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ limit: 20, hasMore: false });
    expect(res.body.data.map((c) => [c.userId, c.roomId])).toEqual([
      ["u2", "r1"],
      ["u1", "r2"],
      ["u1", "r1"],
      [null, null],
    ]);
    for (const conversation of res.body.data) {
      expect(Object.keys(conversation).sort()).toEqual(
        ["agentId", "createdAt", "id", "lastMessageAt", "messageCount", "roomId", "userId"].sort(),
      );
      expect(conversation).toMatchObject({ agentId, messageCount: 2 });
      expect(conversation.id).toMatch(/^conv_[0-9A-Z]{26}$/);
      expect(Date.parse(conversation.lastMessageAt)).toBeGreaterThanOrEqual(
        Date.parse(conversation.createdAt),
      );
    }

    // New activity moves a conversation to the front, under the same id.
    const oldest = res.body.data.at(-1)!;
    await say(h, tenant.key, agentId, "default again");
    const after = await conversations(agentId);
    expect(after.body.data[0]).toMatchObject({ id: oldest.id, messageCount: 4 });
  });

  it("filters by user, by room, or both", async () => {
    const pairs = async (params: Record<string, string>) =>
      (await conversations(agentId, params)).body.data.map((c) => `${c.userId}/${c.roomId}`).sort();
    expect(await pairs({ userId: "u1" })).toEqual(["u1/r1", "u1/r2"]);
    expect(await pairs({ roomId: "r1" })).toEqual(["u1/r1", "u2/r1"]);
    expect(await pairs({ userId: "u1", roomId: "r1" })).toEqual(["u1/r1"]);
    expect(await pairs({ userId: "nobody" })).toEqual([]);
  });

  it("pages with limit and either cursor", async () => {
    const everything = (await conversations(agentId)).body.data.map((c) => c.id);
    const first = await conversations(agentId, { limit: 3 });
    expect(first.body.data.map((c) => c.id)).toEqual(everything.slice(0, 3));
    expect(first.body.pagination).toEqual({ limit: 3, hasMore: true });
    const second = await conversations(agentId, { limit: 3, before: everything[2] });
    expect(second.body.data.map((c) => c.id)).toEqual(everything.slice(3));
    expect(second.body.pagination.hasMore).toBe(false);
    // `after` gives the ones just newer, still newest first.
    const back = await conversations(agentId, { limit: 2, after: everything[3] });
    expect(back.body.data.map((c) => c.id)).toEqual(everything.slice(1, 3));
    expect(back.body.pagination.hasMore).toBe(true);
  });

  it("refuses bad query values, unknown parameters and foreign cursors with 400", async () => {
    const other = await newAgent(h, tenant.key);
    await say(h, tenant.key, other, "elsewhere", { userId: "u9" });
    const foreign = (await conversations(other)).body.data[0]!.id;
    const cases: [Record<string, string>, string][] = [
      [{ limit: "0" }, "limit"],
      [{ limit: "101" }, "limit"],
      [{ limit: "ten" }, "limit"],
      [{ userId: "" }, "userId"],
      [{ roomId: "x".repeat(257) }, "roomId"],
      [{ before: "conv_nope" }, "before"],
      [{ before: MISSING.message }, "before"],
      [{ before: MISSING.conversation, after: MISSING.conversation }, "after"],
      [{ sortBy: "name" }, "sortBy"],
      [{ order: "asc" }, "order"],
    ];
    for (const [params, field] of cases)
      expectError(await conversations(agentId, params), 400, "INVALID_REQUEST", field);
    expectError(
      await conversations(agentId, { before: MISSING.conversation }),
      400,
      "INVALID_REQUEST",
      "before",
    );
    expectError(await conversations(agentId, { after: foreign }), 400, "INVALID_REQUEST", "after");
    const twice = await h.request("GET", `/v1/agents/${agentId}/conversations?limit=1&limit=2`, {
      key: tenant.key,
    });
    expectError(twice as Answer<object>, 400, "INVALID_REQUEST", "limit");
  });

  it("needs a key with history:read, and answers another account's agent as missing", async () => {
    expectError((await conversations(agentId, {}, "")) as Answer<object>, 401, "UNAUTHORIZED");
    const wrong = await tenant.keyWith(["agents:read", "history:delete"]);
    const refused = await conversations(agentId, {}, wrong.key);
    expectError(refused, 403, "FORBIDDEN");
    expect(refused.body.error.message).toContain("history:read");
    const only = await tenant.keyWith(["history:read"]);
    expect((await conversations(agentId, {}, only.key)).status).toBe(200);
    const stranger = await h.tenant();
    expectError(await conversations(agentId, {}, stranger.key), 404, "AGENT_NOT_FOUND");
    expectError(await conversations(MISSING.agent), 404, "AGENT_NOT_FOUND");
  });

  it("answers a malformed agent id as missing without asking the registry", async () => {
    const original = h.gateway.context.agents.getAgent;
    let calls = 0;
    h.gateway.context.agents.getAgent = (...args) => {
      calls += 1;
      return original(...args);
    };
    try {
      expectError(await conversations("agt_nope"), 404, "AGENT_NOT_FOUND");
      expectError(await messages("not-an-agent"), 404, "AGENT_NOT_FOUND");
      expectError(await message("agt_x", MISSING.message), 404, "AGENT_NOT_FOUND");
      expect(calls).toBe(0);
    } finally {
      h.gateway.context.agents.getAgent = original;
    }
  });
});

describe("GET /v1/agents/{agentId}/messages", () => {
  let agentId: string;
  /** The long conversation's messages, oldest first, as sent. */
  const sent: { text: string; replyId: string }[] = [];
  const EXCHANGES = 23;

  beforeAll(async () => {
    agentId = await newAgent(h, tenant.key);
    for (let i = 0; i < EXCHANGES; i++) {
      const text = `long ${i}`;
      sent.push({ text, replyId: await say(h, tenant.key, agentId, text, { userId: "long", roomId: "r" }) });
    }
    await say(h, tenant.key, agentId, "other room", { userId: "long", roomId: "elsewhere" });
    await say(h, tenant.key, agentId, "other user", { userId: "short", roomId: "r" });
    await say(h, tenant.key, agentId, "nobody");
  });

  it("presents both sides of an exchange, the reply under the id the send call gave", async () => {
    const res = await messages(agentId, { userId: "long", roomId: "r", order: "asc", limit: 2 });
    expect(res.status).toBe(200);
    const [user, assistant] = res.body.data;
    expect(Object.keys(user!).sort()).toEqual(
      ["agentId", "conversationId", "createdAt", "id", "role", "roomId", "text", "userId"].sort(),
    );
    expect(user).toMatchObject({ agentId, userId: "long", roomId: "r", role: "user", text: "long 0" });
    expect(user!.id).toMatch(/^msg_[0-9A-Z]{26}$/);
    expect(assistant).toEqual({
      id: sent[0]!.replyId,
      agentId,
      conversationId: user!.conversationId,
      userId: "long",
      roomId: "r",
      role: "assistant",
      text: "Echo: long 0",
      model: "gpt-4o-mini",
      modelProvider: "openai",
      finishReason: "stop",
      usage: {
        inputTokens: expect.any(Number),
        outputTokens: expect.any(Number),
        totalTokens: assistant!.usage!.inputTokens + assistant!.usage!.outputTokens,
      },
      latencyMs: expect.any(Number),
      createdAt: expect.any(String),
    });
    const nobody = await messages(agentId, { limit: 1 });
    expect(nobody.body.data[0]).toMatchObject({ userId: null, roomId: null, role: "assistant" });
  });

  it("pages through a conversation of several pages in both orders, with both cursors", async () => {
    const params = { userId: "long", roomId: "r", limit: 20 };
    const desc = await allPages(agentId, { ...params, order: "desc" });
    const asc = await allPages(agentId, { ...params, order: "asc" });
    expect(desc.ids).toHaveLength(EXCHANGES * 2);
    expect(desc.pages).toBe(Math.ceil((EXCHANGES * 2) / 20));
    expect(asc.ids).toEqual([...desc.ids].reverse());
    expect(new Set(asc.ids).size).toBe(EXCHANGES * 2);
    // Replies follow their messages.
    expect(asc.ids.filter((_, i) => i % 2 === 1)).toEqual(sent.map((s) => s.replyId));

    // The other cursor in each order: the items nearest the cursor, presented in the order asked.
    const middle = asc.ids[20]!;
    const newer = await messages(agentId, { ...params, order: "desc", limit: 5, after: middle });
    expect(newer.body.data.map((m) => m.id)).toEqual(asc.ids.slice(21, 26).reverse());
    expect(newer.body.pagination.hasMore).toBe(true);
    const older = await messages(agentId, { ...params, order: "asc", limit: 5, before: middle });
    expect(older.body.data.map((m) => m.id)).toEqual(asc.ids.slice(15, 20));
    expect(older.body.pagination.hasMore).toBe(true);
    const oldest = await messages(agentId, { ...params, order: "asc", limit: 5, before: asc.ids[3] });
    expect(oldest.body.data.map((m) => m.id)).toEqual(asc.ids.slice(0, 3));
    expect(oldest.body.pagination.hasMore).toBe(false);
    const newest = await messages(agentId, { ...params, limit: 100, after: asc.ids.at(-2) });
    expect(newest.body.data.map((m) => m.id)).toEqual([asc.ids.at(-1)]);
    expect(newest.body.pagination).toEqual({ limit: 100, hasMore: false });
  });

  it("filters by conversation, user, room, both, or none", async () => {
    const count = async (params: Record<string, string>) =>
      (await messages(agentId, { ...params, limit: 100 })).body.data.length;
    const conversationId = (await messages(agentId, { userId: "long", roomId: "r", limit: 1 })).body.data[0]!
      .conversationId;
    expect(await count({ conversationId })).toBe(EXCHANGES * 2);
    expect(await count({ userId: "long" })).toBe(EXCHANGES * 2 + 2);
    expect(await count({ roomId: "r" })).toBe(EXCHANGES * 2 + 2);
    expect(await count({ userId: "long", roomId: "r" })).toBe(EXCHANGES * 2);
    expect(await count({ userId: "short" })).toBe(2);
    expect(await count({})).toBe(EXCHANGES * 2 + 6);
    const texts = (await messages(agentId, { roomId: "elsewhere" })).body.data.map((m) => m.text);
    expect(texts).toEqual(["Echo: other room", "other room"]);
  });

  it("refuses a conversation id with user or room, bad values and foreign cursors with 400", async () => {
    const conversationId = (await messages(agentId, { limit: 1 })).body.data[0]!.conversationId;
    const otherAgent = await newAgent(h, tenant.key);
    await say(h, tenant.key, otherAgent, "hello");
    const foreign = (await messages(otherAgent, { limit: 1 })).body.data[0]!.id;
    const cases: [Record<string, string>, string][] = [
      [{ conversationId, userId: "long" }, "conversationId"],
      [{ conversationId, roomId: "r" }, "conversationId"],
      [{ order: "up" }, "order"],
      [{ limit: "0" }, "limit"],
      [{ limit: "101" }, "limit"],
      [{ limit: "1.5" }, "limit"],
      [{ before: "msg_1" }, "before"],
      [{ after: MISSING.conversation }, "after"],
      [{ before: MISSING.message, after: MISSING.message }, "after"],
      [{ before: MISSING.message }, "before"],
      [{ after: foreign }, "after"],
      [{ userId: "u", colour: "blue" }, "colour"],
      [{ userId: "a\u0000b" }, "userId"],
    ];
    for (const [params, field] of cases)
      expectError(await messages(agentId, params), 400, "INVALID_REQUEST", field);
  });

  it("answers a conversation that is not the agent's, or not an id, with 404 CONVERSATION_NOT_FOUND", async () => {
    const otherAgent = await newAgent(h, tenant.key);
    await say(h, tenant.key, otherAgent, "hello");
    const theirs = (await messages(otherAgent, { limit: 1 })).body.data[0]!.conversationId;
    for (const conversationId of [theirs, MISSING.conversation, "conv_nope", "x"]) {
      expectError(await messages(agentId, { conversationId }), 404, "CONVERSATION_NOT_FOUND");
    }
  });

  it("needs history:read, and answers another account's agent as missing", async () => {
    expectError((await messages(agentId, {}, "")) as Answer<object>, 401, "UNAUTHORIZED");
    const wrong = await tenant.keyWith(["messages:send", "agents:read"]);
    expectError(await messages(agentId, {}, wrong.key), 403, "FORBIDDEN");
    const stranger = await h.tenant();
    expectError(await messages(agentId, {}, stranger.key), 404, "AGENT_NOT_FOUND");
    // Their own agent, with one of ours as cursor: not an item of their list.
    const theirAgent = await newAgent(h, stranger.key);
    const ours = (await messages(agentId, { limit: 1 })).body.data[0]!.id;
    expectError(await messages(theirAgent, { before: ours }, stranger.key), 400, "INVALID_REQUEST", "before");
  });
});

describe("GET /v1/agents/{agentId}/messages/{messageId}", () => {
  let agentId: string;
  let replyId: string;
  let userMessage: MessageJson;

  beforeAll(async () => {
    agentId = await newAgent(h, tenant.key);
    replyId = await say(h, tenant.key, agentId, "remember me", { userId: "u1" });
    userMessage = (await messages(agentId, { order: "asc", limit: 1 })).body.data[0]!;
  });

  it("answers a message of either role", async () => {
    const reply = await message(agentId, replyId);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({
      id: replyId,
      agentId,
      role: "assistant",
      text: "Echo: remember me",
      userId: "u1",
      roomId: null,
    });
    const sentMessage = await message(agentId, userMessage.id);
    expect(sentMessage.body).toEqual({ success: true, data: userMessage });
  });

  it("answers a message that is not the agent's, or not an id, with 404 MESSAGE_NOT_FOUND", async () => {
    const sibling = await newAgent(h, tenant.key);
    const siblingReply = await say(h, tenant.key, sibling, "hi");
    expectError(await message(agentId, siblingReply), 404, "MESSAGE_NOT_FOUND");
    expectError(await message(agentId, MISSING.message), 404, "MESSAGE_NOT_FOUND");
    expectError(await message(agentId, "msg_nope"), 404, "MESSAGE_NOT_FOUND");
    expectError(await message(agentId, userMessage.conversationId), 404, "MESSAGE_NOT_FOUND");
  });

  it("needs history:read; another account's agent or message is not found", async () => {
    expectError((await message(agentId, replyId, "")) as Answer<object>, 401, "UNAUTHORIZED");
    const wrong = await tenant.keyWith(["history:delete"]);
    expectError(await message(agentId, replyId, wrong.key), 403, "FORBIDDEN");
    const stranger = await h.tenant();
    expectError(await message(agentId, replyId, stranger.key), 404, "AGENT_NOT_FOUND");
    // Through an agent of their own, our message id is just not theirs.
    const theirAgent = await newAgent(h, stranger.key);
    expectError(await message(theirAgent, replyId, stranger.key), 404, "MESSAGE_NOT_FOUND");
  });
});

describe("sending a message", () => {
  it("names the caller's key to the conversation service, for usage by key", async () => {
    const agentId = await newAgent(h, tenant.key);
    const sender = await tenant.keyWith(["messages:send"]);
    const conversations = h.gateway.context.conversations;
    const seen: (string | undefined)[] = [];
    const send = conversations.sendMessage;
    const stream = conversations.streamMessage;
    conversations.sendMessage = (request, options) => {
      seen.push(request.apiKeyId);
      return send(request, options);
    };
    conversations.streamMessage = (request, options) => {
      seen.push(request.apiKeyId);
      return stream(request, options);
    };
    try {
      await say(h, sender.key, agentId, "plain");
      const streamed = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${sender.key}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "streamed", stream: true }),
      });
      expect(await streamed.text()).toContain("message.completed");
    } finally {
      conversations.sendMessage = send;
      conversations.streamMessage = stream;
    }
    expect(seen).toEqual([sender.keyId, sender.keyId]);
  });
});
