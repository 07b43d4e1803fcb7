import { AppError } from "@agentry/errors";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ErrorBody, Harness, Tenant } from "./harness.js";
import {
  expectError,
  type HistoryWorld,
  type MessageJson,
  ndjsonLines,
  newAgent,
  type Page,
  say,
  startHistoryWorld,
  writeConversation,
} from "./history-helpers.js";

let world: HistoryWorld;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  world = await startHistoryWorld();
  ({ h, tenant } = world);
});
afterAll(() => world.close());

async function exportOf(userId: string, key = tenant.key) {
  const res = await fetch(`${h.url}/v1/users/${encodeURIComponent(userId)}/export`, {
    headers: key === "" ? {} : { authorization: `Bearer ${key}` },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function errorOf(userId: string, key = tenant.key) {
  const { status, headers, text } = await exportOf(userId, key);
  return { status, headers, body: JSON.parse(text) as ErrorBody };
}

async function messagesOf(agentId: string, userId: string): Promise<MessageJson[]> {
  const res = await h.request<Page<MessageJson>>(
    "GET",
    `/v1/agents/${agentId}/messages?userId=${encodeURIComponent(userId)}&order=asc&limit=100`,
    { key: tenant.key },
  );
  return res.body.data;
}

describe("GET /v1/users/{userId}/export", () => {
  it("streams the user's messages across agents as NDJSON, oldest first, each with its agent", async () => {
    const a = await newAgent(h, tenant.key);
    const b = await newAgent(h, tenant.key);
    await say(h, tenant.key, a, "first, to a", { userId: "gail", roomId: "r1" });
    await say(h, tenant.key, b, "second, to b", { userId: "gail" });
    await say(h, tenant.key, a, "third, to a in another room", { userId: "gail", roomId: "r2" });
    await say(h, tenant.key, a, "someone else", { userId: "hank" });
    const stranger = await h.tenant();
    await say(h, stranger.key, await newAgent(h, stranger.key), "another account's gail", { userId: "gail" });

    const res = await exportOf("gail");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("x-ratelimit-limit")).toBeTruthy();
    const lines = ndjsonLines(res.text);
    expect(lines.map((m) => [m.agentId, m.role, m.text])).toEqual([
      [a, "user", "first, to a"],
      [a, "assistant", "Echo: first, to a"],
      [b, "user", "second, to b"],
      [b, "assistant", "Echo: second, to b"],
      [a, "user", "third, to a in another room"],
      [a, "assistant", "Echo: third, to a in another room"],
    ]);
    // Each line is the object the message routes answer.
    const listed = [...(await messagesOf(a, "gail")), ...(await messagesOf(b, "gail"))];
    expect([...lines].sort((x, y) => x.id.localeCompare(y.id))).toEqual(
      listed.sort((x, y) => x.id.localeCompare(y.id)),
    );
  });

  it("answers 200 with an empty body for a user with no messages", async () => {
    const res = await exportOf("nobody-at-all");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(res.text).toBe("");
  });

  it("leaves out the messages of agents the registry no longer has, asking once per agent", async () => {
    const kept = await newAgent(h, tenant.key);
    const gone = await newAgent(h, tenant.key);
    for (let i = 0; i < 3; i++) {
      await say(h, tenant.key, kept, `kept ${i}`, { userId: "ivy" });
      await say(h, tenant.key, gone, `gone ${i}`, { userId: "ivy" });
    }
    // As between an agent's deletion and the purge of its history, which the registry relays afterwards.
    const original = h.gateway.context.agents.getAgent;
    const asked: string[] = [];
    h.gateway.context.agents.getAgent = (request, options) => {
      asked.push(request.id ?? "");
      if (request.id === gone) return Promise.reject(new AppError("AGENT_NOT_FOUND", "gone"));
      return original(request, options);
    };
    let lines: MessageJson[];
    try {
      lines = ndjsonLines((await exportOf("ivy")).text);
    } finally {
      h.gateway.context.agents.getAgent = original;
    }
    expect(lines.map((m) => m.text).filter((text) => text.startsWith("kept"))).toHaveLength(3);
    expect(lines.every((m) => m.agentId === kept)).toBe(true);
    expect(lines).toHaveLength(6);
    expect(asked.sort()).toEqual([gone, kept].sort());
  });

  it("takes any user id a message can carry, URL-encoded", async () => {
    const agentId = await newAgent(h, tenant.key);
    const odd = "jo/ná ✓ %20?#";
    await say(h, tenant.key, agentId, "odd one", { userId: odd });
    const lines = ndjsonLines((await exportOf(odd)).text);
    expect(lines.map((m) => [m.userId, m.text])).toEqual([
      [odd, "odd one"],
      [odd, "Echo: odd one"],
    ]);
  });

  it("refuses a user id no message can carry with 400, as JSON", async () => {
    const res = await errorOf("x".repeat(257));
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expectError({ ...res, headers: res.headers }, 400, "INVALID_REQUEST", "userId");
  });

  it("answers a failure before the first line as an ordinary JSON error", async () => {
    const original = h.gateway.context.conversations.exportUser;
    h.gateway.context.conversations.exportUser = () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.reject(new AppError("AGENT_UNAVAILABLE", "The conversation service is down.")),
      }),
    });
    try {
      const res = await errorOf("gail");
      expectError(res, 503, "AGENT_UNAVAILABLE");
    } finally {
      h.gateway.context.conversations.exportUser = original;
    }
  });

  it("reads no further than the caller takes, and stops when it leaves", async () => {
    const agentId = await newAgent(h, tenant.key);
    // 80 pages of the ExportUser stream, some 50 MiB of NDJSON.
    await writeConversation(h.dataDir, {
      accountId: tenant.accountId,
      agentId,
      userId: "slow-reader",
      count: 40_000,
      textChars: 1_000,
    });
    const conversations = h.gateway.context.conversations;
    const original = conversations.exportUser;
    let pulled = 0;
    let closed = false;
    conversations.exportUser = (request, options) => {
      const pages = original(request, options)[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            const page = await pages.next();
            if (!page.done) pulled += 1;
            return page;
          },
          return: async () => {
            closed = true;
            return (await pages.return?.()) ?? { done: true, value: undefined };
          },
        }),
      };
    };
    const leave = new AbortController();
    try {
      const res = await fetch(`${h.url}/v1/users/slow-reader/export`, {
        headers: { authorization: `Bearer ${tenant.key}` },
        signal: leave.signal,
      });
      const reader = res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      // The reader pauses: the gateway fills the connection's buffers, then waits for it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const waiting = pulled;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(pulled).toBe(waiting);
      expect(pulled).toBeLessThan(40);
      leave.abort();
      await vi.waitFor(() => expect(closed).toBe(true));
      expect(pulled).toBe(waiting);
    } finally {
      conversations.exportUser = original;
    }
    // The gateway goes on serving, and an export read to the end has every message.
    const full = await exportOf("slow-reader");
    expect(full.text.split("\n")).toHaveLength(40_001);
  });

  it("needs history:read", async () => {
    expectError(await errorOf("gail", ""), 401, "UNAUTHORIZED");
    const deleter = await tenant.keyWith(["history:delete", "agents:read"]);
    const refused = await errorOf("gail", deleter.key);
    expectError(refused, 403, "FORBIDDEN");
    expect(refused.body.error.message).toContain("history:read");
    const only = await tenant.keyWith(["history:read"]);
    expect((await exportOf("gail", only.key)).status).toBe(200);
  });
});
