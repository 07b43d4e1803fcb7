import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteConversationStore } from "@agentry/conversation";
import { completedCall, exchangesOfEveryKind } from "@agentry/conversation/testing/store-contract";
import { HistoryOrder, type Turn, TurnRole, TurnView } from "@agentry/proto";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * A page of messages is written from the texts the conversation store keeps with each turn (TurnView JSON). These
 * tests hold it to the bytes the gateway wrote before, when it presented the Turn messages itself:
 * `presentedBefore` is that presentation as it was, applied to what a conversation service answers in the Turn form.
 */

function isoTime(value: Parameters<typeof timestampDate>[0] | undefined): string {
  return value ? timestampDate(value).toISOString() : new Date(0).toISOString();
}

/** A stored message in the Turn form, as the gateway presented it before. */
function presentedBefore(turn: Turn) {
  const common = {
    id: turn.id,
    agentId: turn.agentId,
    conversationId: turn.conversationId,
    userId: turn.userId || null,
    roomId: turn.roomId || null,
    role: turn.role === TurnRole.ASSISTANT ? "assistant" : "user",
    text: turn.text,
  };
  const createdAt = isoTime(turn.createTime);
  if (turn.role !== TurnRole.ASSISTANT) return { ...common, createdAt };
  return {
    ...common,
    model: turn.model,
    modelProvider: turn.modelProvider,
    finishReason: turn.finishReason || null,
    usage: {
      inputTokens: turn.usage?.inputTokens ?? 0,
      outputTokens: turn.usage?.outputTokens ?? 0,
      totalTokens: turn.usage?.totalTokens ?? 0,
    },
    latencyMs: turn.latencyMs,
    createdAt,
    ...(turn.toolCalls.length > 0
      ? {
          toolCalls: turn.toolCalls.map((call) => ({
            id: call.id,
            name: call.name,
            arguments: jsonOf(call.argumentsJson),
            ok: call.ok,
            ...(call.ok ? { output: jsonOf(call.outputJson) } : { error: call.error }),
          })),
        }
      : {}),
    ...(turn.citations.length > 0
      ? {
          citations: turn.citations.map((c) => ({
            documentId: c.documentId,
            chunk: c.chunk,
            score: c.score,
          })),
        }
      : {}),
  };
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Stores exchanges of every kind for the agent in the conversation store's file, as a running service would. */
async function storeEveryKind(dataDir: string, accountId: string, agentId: string): Promise<number> {
  const store = openSqliteConversationStore({ dataDir });
  const key = { accountId, agentId, userId: "u1", roomId: "r1" };
  const exchanges = exchangesOfEveryKind(key);
  try {
    for (const exchange of exchanges) {
      const call = completedCall(exchange.key, {
        id: exchange.reply.id,
        requestId: null,
        apiKeyId: null,
        createdAt: exchange.reply.createdAt,
      });
      expect(await store.saveExchange(exchange, call)).toBe(true);
    }
  } finally {
    await store.close();
  }
  return 2 * exchanges.length;
}

interface Setup {
  h: Harness;
  tenant: Tenant;
  agentId: string;
  conversationId: string;
  count: number;
}

/** The pages the route answers, each with the request the gateway makes for it (view left to the caller). */
function pagesOf({ tenant, agentId, conversationId }: Setup) {
  const scope = { accountId: tenant.accountId, agentId };
  const page = (limit: number, order: "asc" | "desc" = "desc", before = "") => ({
    limit,
    before,
    after: "",
    order: order === "asc" ? HistoryOrder.ASC : HistoryOrder.DESC,
  });
  return [
    { query: "limit=100", request: { ...scope, page: page(100) } },
    { query: "limit=5&order=asc", request: { ...scope, page: page(5, "asc") } },
    { query: "limit=3&userId=u1", request: { ...scope, userId: "u1", page: page(3) } },
    {
      query: `limit=100&conversationId=${conversationId}&order=asc`,
      request: { ...scope, conversationId, page: page(100, "asc") },
    },
    { query: "limit=100&roomId=nobody", request: { ...scope, roomId: "nobody", page: page(100) } },
  ];
}

/** The route's answers against the presentation of before, in the deployment `setup` runs. */
function pagesAsBefore(setup: () => Setup) {
  async function raw(path: string) {
    const { h, tenant } = setup();
    const response = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(response.status).toBe(200);
    return {
      text: await response.text(),
      type: response.headers.get("content-type"),
      length: response.headers.get("content-length"),
    };
  }

  it("answers every page of messages of every kind with the bytes of before", async () => {
    const s = setup();
    const conversations = s.h.gateway.context.conversations;
    const all = await raw(`/v1/agents/${s.agentId}/messages?limit=100`);
    expect(JSON.parse(all.text).data).toHaveLength(s.count);
    for (const { query, request } of pagesOf(s)) {
      const page = await raw(`/v1/agents/${s.agentId}/messages?${query}`);
      // The Turn form, as a service answers a request without a view.
      const { messages, hasMore } = await conversations.listMessages(request);
      expect(messages.length, query).toBeGreaterThan(query.includes("nobody") ? -1 : 0);
      const before = JSON.stringify({
        success: true,
        data: messages.map(presentedBefore),
        pagination: { limit: request.page.limit, hasMore },
      });
      expect(page.text, query).toBe(before);
      expect(page.type).toBe("application/json; charset=utf-8");
      expect(page.length).toBe(String(Buffer.byteLength(before)));
    }
  });

  it("answers the same bytes when a conversation service of the earlier release answers, which ignores the view", async () => {
    const s = setup();
    const paths = pagesOf(s).map(({ query }) => `/v1/agents/${s.agentId}/messages?${query}`);
    const current = await Promise.all(paths.map(raw));
    const conversations = s.h.gateway.context.conversations;
    const { listMessages } = conversations;
    const asked: TurnView[] = [];
    conversations.listMessages = (request, options) => {
      asked.push(request.view ?? TurnView.UNSPECIFIED);
      return listMessages({ ...request, view: TurnView.UNSPECIFIED }, options);
    };
    try {
      for (const [i, path] of paths.entries()) expect(await raw(path)).toEqual(current[i]);
      expect(asked).toEqual(paths.map(() => TurnView.JSON));
    } finally {
      Object.assign(conversations, { listMessages });
    }
  });
}

async function agentOf(h: Harness, tenant: Tenant): Promise<string> {
  const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Historian" },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data.id;
}

async function conversationOf(h: Harness, tenant: Tenant, agentId: string): Promise<string> {
  const listed = await h.request<{ data: { id: string; userId: string | null; roomId: string | null }[] }>(
    "GET",
    `/v1/agents/${agentId}/conversations?userId=u1&roomId=r1`,
    { key: tenant.key },
  );
  return listed.body.data[0]!.id;
}

describe("message pages as text, all-in-one", () => {
  const s = {} as Setup;
  beforeAll(async () => {
    s.h = await startHarness();
    s.tenant = await s.h.tenant();
    s.agentId = await agentOf(s.h, s.tenant);
    s.count = await storeEveryKind(s.h.dataDir, s.tenant.accountId, s.agentId);
    s.conversationId = await conversationOf(s.h, s.tenant, s.agentId);
  });
  afterAll(() => s.h?.close());

  pagesAsBefore(() => s);
});

describe("message pages as text, gateway and conversation service in separate processes (HTTP/2)", () => {
  const s = {} as Setup;
  let dataDir: string;
  let conversation: DeployableProcess;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agentry-split-history-"));
    conversation = await startDeployable("services/conversation", {
      DATA_DIR: dataDir,
      CONVERSATION_PORT: "0",
    });
    s.h = await startHarness({ CONVERSATION_URL: conversation.url, RPC_TIMEOUT_MS: "5000" });
    s.tenant = await s.h.tenant();
    s.agentId = await agentOf(s.h, s.tenant);
    s.count = await storeEveryKind(dataDir, s.tenant.accountId, s.agentId);
    s.conversationId = await conversationOf(s.h, s.tenant, s.agentId);
  });
  afterAll(async () => {
    await s.h?.close();
    await conversation?.stop("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  });

  pagesAsBefore(() => s);
});
