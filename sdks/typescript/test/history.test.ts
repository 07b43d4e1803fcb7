import { describe, expect, it } from "vitest";
import {
  AgentryError,
  BadRequestError,
  CursorPage,
  type HistoryMessage,
  NotFoundError,
  PermissionDeniedError,
} from "../src/index.js";
import { AGENT_ID } from "./helpers.js";
import { cursorList, fail, hangUp, localServer, ok } from "./server.js";

const CONVERSATION_ID = "conv_01JAAAAAAAAAAAAAAAAAAAAAAA";

/** Stored messages m01…m`count`, oldest first, alternating user and assistant. */
function messages(count: number): HistoryMessage[] {
  return Array.from({ length: count }, (_, i): HistoryMessage => {
    const common = {
      id: `msg_${String(i + 1).padStart(2, "0")}`,
      agentId: AGENT_ID,
      conversationId: CONVERSATION_ID,
      userId: "user-42",
      roomId: null,
      text: `text ${i + 1}`,
      createdAt: "2026-01-01T00:00:00.000Z",
    };
    return i % 2 === 0
      ? { ...common, role: "user" }
      : {
          ...common,
          role: "assistant",
          model: "gpt-4o-mini",
          modelProvider: "openai",
          finishReason: "stop",
          usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 },
          latencyMs: 12,
        };
  });
}

const ids = (items: readonly { id: string }[]) => items.map((item) => item.id.slice(-2));

describe("agents.messages.list", () => {
  it("awaited, gives one cursor page of the query as sent", async () => {
    const server = await localServer(cursorList(messages(5)));
    const page = await server.client().agents.messages.list(AGENT_ID, {
      userId: "user-42",
      roomId: "room 1",
      limit: 2,
    });
    expect(page).toBeInstanceOf(CursorPage);
    expect(ids(page.data)).toEqual(["05", "04"]);
    expect(page.data[1]).toMatchObject({
      role: "assistant",
      model: "gpt-4o-mini",
      usage: { totalTokens: 7 },
    });
    expect(page.pagination).toEqual({ limit: 2, hasMore: true });
    expect(page.hasNextPage()).toBe(true);
    const [seen] = server.requests;
    expect(seen!.method).toBe("GET");
    expect(seen!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/messages`);
    expect(Object.fromEntries(seen!.url.searchParams)).toEqual({
      userId: "user-42",
      roomId: "room 1",
      limit: "2",
    });
    expect(seen!.headers.authorization).toBe("Bearer agentry_sk_test");
  });

  it("iterated, walks every message newest first, each page before the last one's id", async () => {
    const server = await localServer(cursorList(messages(5)));
    const seen: string[] = [];
    for await (const message of server.client().agents.messages.list(AGENT_ID, { limit: 2 }))
      seen.push(message.id);
    expect(ids(seen.map((id) => ({ id })))).toEqual(["05", "04", "03", "02", "01"]);
    expect(server.requests.map((r) => r.url.search)).toEqual([
      "?limit=2",
      "?limit=2&before=msg_04",
      "?limit=2&before=msg_02",
    ]);
  });

  it("oldest first, pages after the last one's id, and listAll gathers them in one array", async () => {
    const server = await localServer(cursorList(messages(4)));
    const all = await server.client().agents.messages.listAll(AGENT_ID, { order: "asc", limit: 2 });
    expect(ids(all)).toEqual(["01", "02", "03", "04"]);
    // Four items in pages of two: the second page says there is nothing more.
    expect(server.requests.map((r) => r.url.search)).toEqual([
      "?order=asc&limit=2",
      "?order=asc&limit=2&after=msg_02",
    ]);
  });

  it("keeps walking the way a given cursor points, whatever the order shown", async () => {
    const server = await localServer(cursorList(messages(7)));
    const client = server.client();
    // Older than msg_06, shown oldest first: the next page is before the page's first (oldest) item.
    const older = await client.agents.messages.listAll(AGENT_ID, {
      before: "msg_06",
      order: "asc",
      limit: 2,
    });
    expect(ids(older)).toEqual(["04", "05", "02", "03", "01"]);
    // Newer than msg_02, shown newest first: the next page is after the page's first (newest) item.
    const newer = await client.agents.messages.listAll(AGENT_ID, { after: "msg_02", limit: 2 });
    expect(ids(newer)).toEqual(["04", "03", "06", "05", "07"]);
    expect(
      server.requests.map((r) => r.url.searchParams.get("before") ?? r.url.searchParams.get("after")),
    ).toEqual(["msg_06", "msg_04", "msg_02", "msg_02", "msg_04", "msg_06"]);
  });

  it("nextPage() and iterPages() go page by page, then stop", async () => {
    const server = await localServer(cursorList(messages(3)));
    const first = await server.client().agents.messages.list(AGENT_ID, { limit: 2 });
    const second = await first.nextPage();
    expect(ids(second.data)).toEqual(["01"]);
    expect(second.hasNextPage()).toBe(false);
    await expect(second.nextPage()).rejects.toBeInstanceOf(AgentryError);
    const sizes: number[] = [];
    for await (const page of first.iterPages()) sizes.push(page.data.length);
    expect(sizes).toEqual([2, 1]);
  });

  it("an empty history iterates nothing, with one request", async () => {
    const server = await localServer(cursorList([]));
    expect(await server.client().agents.messages.listAll(AGENT_ID)).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("is lazy, and retried like any read", async () => {
    const server = await localServer(fail(503, "AGENT_UNAVAILABLE"), hangUp, cursorList(messages(1)));
    const pending = server.client().agents.messages.list(AGENT_ID);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.requests).toHaveLength(0);
    expect(ids((await pending).data)).toEqual(["01"]);
    expect(server.requests).toHaveLength(3);
  });

  it("reports a cursor the list does not know, a missing scope and a missing conversation", async () => {
    const server = await localServer(
      cursorList(messages(2)),
      fail(403, "FORBIDDEN"),
      fail(404, "CONVERSATION_NOT_FOUND"),
    );
    const client = server.client();
    const unknown = await client.agents.messages
      .list(AGENT_ID, { before: "msg_99" })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(BadRequestError);
    expect(unknown).toMatchObject({
      code: "INVALID_REQUEST",
      details: [{ field: "before", issue: "unknown" }],
    });
    await expect(client.agents.messages.list(AGENT_ID)).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(
      client.agents.messages.list(AGENT_ID, { conversationId: CONVERSATION_ID }),
    ).rejects.toMatchObject({ status: 404, code: "CONVERSATION_NOT_FOUND" });
    expect(server.requests).toHaveLength(3);
  });
});

describe("agents.messages.get", () => {
  it("reads one message by its id", async () => {
    const [message] = messages(2).slice(1);
    const server = await localServer(ok(message));
    expect(await server.client().agents.messages.get(AGENT_ID, "msg_02")).toEqual(message);
    expect(server.requests[0]!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/messages/msg_02`);
  });

  it("throws NotFoundError with the code, and refuses an empty id before sending", async () => {
    const server = await localServer(fail(404, "MESSAGE_NOT_FOUND"));
    const client = server.client();
    const error = await client.agents.messages.get(AGENT_ID, "msg_x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "MESSAGE_NOT_FOUND", requestId: "req_local" });
    await expect(client.agents.messages.get(AGENT_ID, "")).rejects.toThrow(/messageId must be a non-empty/);
    expect(server.requests).toHaveLength(1);
  });
});

describe("agents.conversations", () => {
  const conversations = ["01", "02", "03"].map((n) => ({
    id: `conv_${n}`,
    agentId: AGENT_ID,
    userId: "user-42",
    roomId: `room-${n}`,
    messageCount: 2,
    createdAt: "2026-01-01T00:00:00.000Z",
    lastMessageAt: "2026-01-01T00:00:00.000Z",
  }));

  it("lists them a page at a time, and iterates them all", async () => {
    const server = await localServer(cursorList(conversations));
    const client = server.client();
    const page = await client.agents.conversations.list(AGENT_ID, { userId: "user-42", limit: 2 });
    expect(page.data.map((c) => c.roomId)).toEqual(["room-03", "room-02"]);
    expect(page.hasNextPage()).toBe(true);
    const all = await client.agents.conversations.listAll(AGENT_ID, { userId: "user-42", limit: 2 });
    expect(all).toEqual([...conversations].reverse());
    expect(server.requests.map((r) => `${r.url.pathname}${r.url.search}`)).toEqual([
      `/v1/agents/${AGENT_ID}/conversations?userId=user-42&limit=2`,
      `/v1/agents/${AGENT_ID}/conversations?userId=user-42&limit=2`,
      `/v1/agents/${AGENT_ID}/conversations?userId=user-42&limit=2&before=conv_02`,
    ]);
  });

  it("deletes one, retrying like any idempotent call", async () => {
    const deleted = { id: CONVERSATION_ID, deleted: true, messagesDeleted: 4 };
    const server = await localServer(fail(500, "INTERNAL_ERROR"), ok(deleted));
    expect(await server.client().agents.conversations.delete(AGENT_ID, CONVERSATION_ID)).toEqual(deleted);
    expect(server.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      `DELETE /v1/agents/${AGENT_ID}/conversations/${CONVERSATION_ID}`,
      `DELETE /v1/agents/${AGENT_ID}/conversations/${CONVERSATION_ID}`,
    ]);
  });

  it("a deleted conversation is NotFoundError, never retried", async () => {
    const server = await localServer(fail(404, "CONVERSATION_NOT_FOUND"));
    await expect(
      server.client().agents.conversations.delete(AGENT_ID, CONVERSATION_ID),
    ).rejects.toMatchObject({ name: "NotFoundError", code: "CONVERSATION_NOT_FOUND" });
    expect(server.requests).toHaveLength(1);
  });
});

describe("users.erase", () => {
  it("erases a user, the id escaped in the path", async () => {
    const erased = { userId: "team/ada 1", deleted: true, messagesDeleted: 6 };
    const server = await localServer(ok(erased));
    expect(await server.client().users.erase("team/ada 1")).toEqual(erased);
    const [seen] = server.requests;
    expect(seen!.method).toBe("DELETE");
    expect(seen!.url.pathname).toBe("/v1/users/team%2Fada%201");
  });

  it("without the history:delete scope is PermissionDeniedError", async () => {
    const server = await localServer(fail(403, "FORBIDDEN"));
    await expect(server.client().users.erase("user-42")).rejects.toBeInstanceOf(PermissionDeniedError);
    expect(server.requests).toHaveLength(1);
  });
});
