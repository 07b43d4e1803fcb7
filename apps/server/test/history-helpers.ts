import { join } from "node:path";
import { CONVERSATION_DB_FILE, openConversationStore } from "@agentry/conversation";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { newId } from "@agentry/core";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant, type TestResponse } from "./harness.js";

/** A stored message as the history routes present it. */
export interface MessageJson {
  id: string;
  agentId: string;
  conversationId: string;
  userId: string | null;
  roomId: string | null;
  role: "user" | "assistant";
  text: string;
  model?: string;
  modelProvider?: string;
  finishReason?: string | null;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
  latencyMs?: number;
  createdAt: string;
}

export interface ConversationJson {
  id: string;
  agentId: string;
  userId: string | null;
  roomId: string | null;
  messageCount: number;
  createdAt: string;
  lastMessageAt: string;
}

export interface Page<T> {
  success: boolean;
  data: T[];
  pagination: { limit: number; hasMore: boolean };
}

export type Answer<T> = TestResponse<T & ErrorBody>;

/** The all-in-one server in front of a fake OpenAI that answers every message, and one tenant. */
export interface HistoryWorld {
  h: Harness;
  openai: FakeProviderServer<OpenAIChatBody>;
  tenant: Tenant;
  close(): Promise<void>;
}

export async function startHistoryWorld(): Promise<HistoryWorld> {
  const openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  const h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
  const tenant = await h.tenant();
  return {
    h,
    openai,
    tenant,
    async close() {
      await h.close();
      await openai.close();
    },
  };
}

export async function newAgent(h: Harness, key: string): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key,
    body: { name: "Ada", bio: ["Counts things"] },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** Sends one message and answers the reply's id. */
export async function say(
  h: Harness,
  key: string,
  agentId: string,
  text: string,
  conversation: { userId?: string; roomId?: string } = {},
): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", `/v1/agents/${agentId}/messages`, {
    key,
    body: { text, ...conversation },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.id;
}

export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) search.append(name, String(value));
  }
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}

export function expectError(res: TestResponse<ErrorBody>, status: number, code: string, field?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe(code);
  if (field !== undefined) expect(res.body.error.details?.map((detail) => detail.field)).toContain(field);
}

/** A well-formed id of a kind that names nothing. */
export const MISSING = {
  agent: "agt_01JAAAAAAAAAAAAAAAAAAAAAAA",
  conversation: "conv_01JAAAAAAAAAAAAAAAAAAAAAAA",
  message: "msg_01JAAAAAAAAAAAAAAAAAAAAAAA",
};

/** The NDJSON of an export, one parsed object per line; every line must end in a newline. */
export function ndjsonLines(text: string): MessageJson[] {
  if (text === "") return [];
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as MessageJson);
}

/**
 * Writes one conversation of `count` messages (user and assistant in turn, `textChars` characters each) straight
 * into the conversation database of `dataDir`, in one transaction, and answers their ids in storage order. The
 * store is opened once first, so the file has the service's schema; sending that many messages through a model
 * would take far too long.
 */
export async function writeConversation(
  dataDir: string,
  at: { accountId: string; agentId: string; userId: string; count: number; textChars: number },
): Promise<string[]> {
  await (await openConversationStore({ dataDir })).close();
  const db = new Database(join(dataDir, CONVERSATION_DB_FILE));
  const ids: string[] = [];
  try {
    const conversationId = newId("conversation");
    const start = Date.parse("2026-01-01T00:00:00.000Z");
    const filler = "lorem ipsum dolor sit amet ".repeat(Math.ceil(at.textChars / 27));
    const insertTurn = db.prepare(
      `INSERT INTO turns (id, account_id, agent_id, user_id, room_id, role, text, model, provider, input_tokens,
         output_tokens, latency_ms, created_at, conversation_id, finish_reason)
       VALUES (?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    db.transaction(() => {
      db.prepare(
        `INSERT INTO conversations (account_id, agent_id, user_id, room_id, turn_count, created_at, updated_at, id)
         VALUES (?, ?, ?, '', ?, ?, ?, ?)`,
      ).run(
        at.accountId,
        at.agentId,
        at.userId,
        at.count,
        new Date(start).toISOString(),
        new Date(start + at.count).toISOString(),
        conversationId,
      );
      for (let i = 0; i < at.count; i++) {
        const id = newId("message");
        ids.push(id);
        const assistant = i % 2 === 1;
        insertTurn.run(
          id,
          at.accountId,
          at.agentId,
          at.userId,
          assistant ? "assistant" : "user",
          `${i} ${filler}`.slice(0, at.textChars),
          assistant ? "gpt-4o-mini" : null,
          assistant ? "openai" : null,
          assistant ? 250 : 0,
          assistant ? 250 : 0,
          assistant ? 900 : 0,
          new Date(start + i).toISOString(),
          conversationId,
          assistant ? "stop" : null,
        );
      }
    })();
  } finally {
    db.close();
  }
  return ids;
}
