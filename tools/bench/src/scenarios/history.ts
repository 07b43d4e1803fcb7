import { join } from "node:path";
import {
  CONVERSATION_DB_FILE,
  openSqliteConversationStore,
  storedMessageJson,
  type TurnRecord,
} from "@agentry/conversation";
import { newId } from "@agentry/core";
import Database from "better-sqlite3";
import { type Bench, type LoadResult, log, serviceEnv } from "../bench.js";
import { type Seed, seed } from "../harness.js";

export interface HistoryResult {
  /** Messages in the conversation. */
  messages: number;
  /** How long writing them took, in seconds. */
  seedSeconds: number;
  /** Each round: the agent read, then the page, under the same load on the same gateway. */
  rounds: { get: LoadResult; page: LoadResult }[];
}

/**
 * Listing the newest 100 messages of a conversation that holds `settings.historyMessages` against reading an agent,
 * CPU per request on the same all-in-one gateway in the same run (docs/api/history.md, "Stored messages"). The
 * conversation is written before the gateway starts: its first exchange through the store, the rest as rows in
 * one transaction, the way the store writes them (each with its message's JSON text).
 */
export async function historyPage(bench: Bench, providerEnv: Record<string, string>): Promise<HistoryResult> {
  const dataDir = join(bench.dir, "history");
  const tenant = await seed(dataDir);
  // Exchanges: a message and its reply.
  const messages = 2 * Math.max(1, Math.floor(bench.settings.historyMessages / 2));
  const started = performance.now();
  const conversationId = await writeConversation(dataDir, tenant, messages / 2);
  const seedSeconds = (performance.now() - started) / 1000;
  log(`wrote ${messages} messages in ${seedSeconds.toFixed(1)} s`);

  const gateway = await bench.startGateway(
    "gateway-history",
    { ...serviceEnv(dataDir), ...providerEnv },
    tenant,
  );
  const headers = { authorization: `Bearer ${tenant.apiKey}` };
  const agentPath = `/v1/agents/${tenant.agentId}`;
  const pagePath = `${agentPath}/messages?conversationId=${conversationId}&limit=100`;
  await checkConversation(gateway.url, agentPath, pagePath, headers, messages);

  const rounds: HistoryResult["rounds"] = [];
  for (let round = 1; round <= bench.settings.rounds; round++) {
    log(`round ${round}: GET ${agentPath} and GET ${agentPath}/messages?...&limit=100 ...`);
    const get = await bench.load(`${gateway.url}${agentPath}`, headers, [gateway.process]);
    const page = await bench.load(`${gateway.url}${pagePath}`, headers, [gateway.process]);
    rounds.push({ get, page });
  }
  await bench.stop([gateway.process]);
  return { messages, seedSeconds, rounds };
}

/** Writes one conversation of `exchanges` messages and their replies to the tenant's agent; returns its id. */
async function writeConversation(dataDir: string, tenant: Seed, exchanges: number): Promise<string> {
  const key = { accountId: tenant.accountId, agentId: tenant.agentId, userId: "reader", roomId: "archive" };
  const start = Date.now() - exchanges * 60_000;
  const at = (i: number, offset: number) => new Date(start + i * 60_000 + offset).toISOString();
  const question = (i: number) =>
    `Question ${i}: what did we decide about the shipment schedule for week ${i % 52}?`;
  const answer = (i: number) =>
    `Answer ${i}: the shipment leaves on the ${(i % 28) + 1}th; the carrier confirmed the slot, and the ` +
    "customs papers are filed. I will send a reminder the day before, with the tracking number once it exists.";

  // The first exchange through the store: the conversation gets its id and row as any conversation does.
  const store = openSqliteConversationStore({ dataDir });
  const reply = newId("message", Date.parse(at(0, 1500)));
  await store.saveExchange(
    {
      key,
      user: { id: newId("message", Date.parse(at(0, 0))), text: question(0), createdAt: at(0, 0) },
      reply: {
        id: reply,
        text: answer(0),
        model: "bench-model",
        provider: "openai",
        inputTokens: 120,
        outputTokens: 48,
        latencyMs: 1500,
        finishReason: "stop",
        createdAt: at(0, 1500),
      },
    },
    {
      ...key,
      id: reply,
      requestId: null,
      apiKeyId: tenant.apiKeyId,
      provider: "openai",
      model: "bench-model",
      stream: false,
      outcome: "completed",
      errorCode: null,
      errorMessage: null,
      latencyMs: 1500,
      firstTokenMs: 1500,
      inputTokens: 120,
      outputTokens: 48,
      createdAt: at(0, 1500),
    },
  );
  await store.close();

  // The others as the store's own rows, in one transaction.
  const db = new Database(join(dataDir, CONVERSATION_DB_FILE));
  try {
    const conversation = db
      .prepare<[string, string, string, string], { id: string }>(
        "SELECT id FROM conversations WHERE account_id = ? AND agent_id = ? AND user_id = ? AND room_id = ?",
      )
      .get(key.accountId, key.agentId, key.userId, key.roomId)!;
    const insert = db.prepare(
      `INSERT INTO turns (id, conversation_id, account_id, agent_id, user_id, room_id, role, text, model, provider,
         input_tokens, output_tokens, latency_ms, finish_reason, created_at, message_json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const write = (turn: TurnRecord) =>
      insert.run(
        turn.id,
        turn.conversationId,
        turn.accountId,
        turn.agentId,
        turn.userId,
        turn.roomId,
        turn.role,
        turn.text,
        turn.model,
        turn.provider,
        turn.inputTokens,
        turn.outputTokens,
        turn.latencyMs,
        turn.finishReason,
        turn.createdAt,
        storedMessageJson(turn),
      );
    const turn = { ...key, conversationId: conversation.id, toolCalls: [], citations: [] };
    const flags = { background: false, fallback: false };
    db.transaction(() => {
      for (let i = 1; i < exchanges; i++) {
        const asked = at(i, 0);
        const answered = at(i, 1500);
        write({
          ...turn,
          ...flags,
          id: newId("message", Date.parse(asked)),
          role: "user",
          text: question(i),
          model: null,
          provider: null,
          inputTokens: 0,
          outputTokens: 0,
          latencyMs: 0,
          finishReason: null,
          createdAt: asked,
        });
        write({
          ...turn,
          ...flags,
          id: newId("message", Date.parse(answered)),
          role: "assistant",
          text: answer(i),
          model: "bench-model",
          provider: "openai",
          inputTokens: 120,
          outputTokens: 48,
          latencyMs: 1500,
          finishReason: "stop",
          createdAt: answered,
        });
      }
      db.prepare("UPDATE conversations SET turn_count = ?, updated_at = ? WHERE id = ?").run(
        exchanges * 2,
        at(exchanges - 1, 1500),
        conversation.id,
      );
    })();
    return conversation.id;
  } finally {
    db.close();
  }
}

/** Fails the run unless the gateway sees the whole conversation and answers a full page with more behind it. */
async function checkConversation(
  url: string,
  agentPath: string,
  pagePath: string,
  headers: Record<string, string>,
  count: number,
): Promise<void> {
  const conversations = (await (await fetch(`${url}${agentPath}/conversations`, { headers })).json()) as {
    data: { messageCount: number }[];
  };
  const page = (await (await fetch(`${url}${pagePath}`, { headers })).json()) as {
    data: unknown[];
    pagination: { hasMore: boolean };
  };
  const held = conversations.data[0]?.messageCount;
  if (held !== count || page.data.length !== 100 || !page.pagination.hasMore) {
    throw new Error(
      `the conversation holds ${held} messages and its page ${page.data.length}, not ${count} and 100`,
    );
  }
}
