import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId, timeOfId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { runPgMigrations } from "@agentry/pg";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConversationConfig } from "../src/config.js";
import { openConversationStore } from "../src/store/open.js";
import { openPostgresConversationStore, PostgresConversationStore } from "../src/store/postgres.js";
import { migrationTarget, PG_MIGRATIONS } from "../src/store/postgres-migrations.js";
import { messagesPage } from "../src/store/queries.js";
import { CONVERSATION_DB_FILE } from "../src/store/sqlite.js";
import type { CallRecord, ConversationKey, ConversationStore, NewExchange } from "../src/store/types.js";
import { storedMessageJson } from "../src/stored-messages.js";
import { auditStoreContract } from "../src/testing/audit-contract.js";
import { documentStoreContract } from "../src/testing/document-contract.js";
import { memoryStoreContract } from "../src/testing/memory-contract.js";
import {
  completedCall,
  conversationStoreContract,
  exchangesOfEveryKind,
} from "../src/testing/store-contract.js";
import { type PlainRole, plainRole } from "./fixtures/plain-role.js";

let db: TestDatabase;
/** A database copied from template1, where the server's superuser created pgvector's extension (scripts/test.sh). */
let vectorUrl: string;
/** Whether the server has pgvector installed: then the vector paths must run, else recall is by full text. */
let pgvector: boolean;
/** A role that may not create the extension: its stores recall by full text on any server. */
let plain: PlainRole;
beforeAll(async () => {
  db = await openTestDatabase();
  vectorUrl = await db.createDatabase({ template: "template1" });
  plain = await plainRole(db.url);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const available = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    pgvector = available.rowCount === 1;
  } finally {
    await client.end();
  }
}, 60_000);
afterAll(async () => {
  await plain?.drop();
  await db?.close();
}, 60_000);

// Each store is empty and of its own: a fresh schema, migrated from nothing, in this file's database.
let schemas = 0;
conversationStoreContract("postgres", () =>
  openPostgresConversationStore({ connectionString: db.url, schema: `conversation_${++schemas}` }),
);
memoryStoreContract("postgres", () =>
  openPostgresConversationStore({ connectionString: db.url, schema: `conversation_${++schemas}` }),
);
documentStoreContract("postgres", () =>
  openPostgresConversationStore({ connectionString: db.url, schema: `conversation_${++schemas}` }),
);
// The same contracts where pgvector ranks by vector (its extension created in template1 by the superuser).
memoryStoreContract("postgres with pgvector", () =>
  openPostgresConversationStore({ connectionString: vectorUrl, schema: `conversation_${++schemas}` }),
);
documentStoreContract("postgres with pgvector", () =>
  openPostgresConversationStore({ connectionString: vectorUrl, schema: `conversation_${++schemas}` }),
);

// And where it cannot: the full-text fallback, as a role that is not superuser.
memoryStoreContract("postgres without pgvector", async () => {
  const schema = `conversation_${++schemas}`;
  return openPostgresConversationStore({ connectionString: await plain.schema(schema), schema });
});
documentStoreContract("postgres without pgvector", async () => {
  const schema = `conversation_${++schemas}`;
  return openPostgresConversationStore({ connectionString: await plain.schema(schema), schema });
});

describe("postgres: pgvector", () => {
  it("ranks by vector where the database has the extension, by full text where the role could not create it", async () => {
    const withVector = await openPostgresConversationStore({
      connectionString: vectorUrl,
      schema: "pgvector_on",
    });
    // The migration's CREATE EXTENSION is refused to a role that is not superuser (pgvector is not a trusted
    // extension): the store falls back to full text instead of failing to start.
    const without = await openPostgresConversationStore({
      connectionString: await plain.schema("pgvector_off"),
      schema: "pgvector_off",
    });
    try {
      expect(await withVector.searchesVectors()).toBe(pgvector);
      expect(await without.searchesVectors()).toBe(false);
      if (!pgvector)
        console.warn("pgvector is not installed on the test server: its vector paths were not run");
    } finally {
      await withVector.close();
      await without.close();
    }
  });
});

auditStoreContract("postgres", () =>
  openPostgresConversationStore({ connectionString: db.url, schema: `conversation_${++schemas}` }),
);

const at = () => new Date().toISOString();

/** History limits that leave every turn of these tests in. */
const ALL = { maxTurns: 1000, tokenBudget: 1_000_000 };

function exchangeOf(key: ConversationKey, i: number): [NewExchange, CallRecord] {
  const reply = newId("message");
  return [
    {
      key,
      user: { id: newId("message"), text: `q${i}`, createdAt: at() },
      reply: {
        id: reply,
        text: `a${i}`,
        model: "m",
        provider: "openai",
        inputTokens: 1,
        outputTokens: 1,
        latencyMs: 1,
        finishReason: "stop",
        createdAt: at(),
      },
    },
    {
      ...key,
      id: reply,
      requestId: null,
      apiKeyId: null,
      provider: "openai",
      model: "m",
      stream: false,
      outcome: "completed",
      errorCode: null,
      errorMessage: null,
      latencyMs: 1,
      firstTokenMs: null,
      inputTokens: 1,
      outputTokens: 1,
      createdAt: at(),
    },
  ];
}

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe("PostgresConversationStore", () => {
  const opened: ConversationStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  const open = async (options: Parameters<typeof openConversationStore>[0]) => {
    const store = await openConversationStore(options);
    opened.push(store);
    return store;
  };

  it("is chosen by a database URL, its tables in the conversation schema; without one SQLite stays", async () => {
    const url = await db.createDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "conversation-pg-"));
    try {
      const store = await open({ dataDir, databaseUrl: url });
      expect(store).toBeInstanceOf(PostgresConversationStore);
      const key = { accountId: "acct_A", agentId: "agt_A", userId: "", roomId: "" };
      await store.saveExchange(...exchangeOf(key, 1));
      expect(await sql(url, "SELECT role, text FROM conversation.turns ORDER BY seq")).toEqual([
        { role: "user", text: "q1" },
        { role: "assistant", text: "a1" },
      ]);
      expect(existsSync(join(dataDir, CONVERSATION_DB_FILE))).toBe(false);

      const embedded = await open({ dataDir });
      expect(embedded).not.toBeInstanceOf(PostgresConversationStore);
      expect(existsSync(join(dataDir, CONVERSATION_DB_FILE))).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("pages a conversation's messages from its own index, in order, with no sort and no scan of the agent's", async () => {
    const url = await db.createDatabase();
    const store = await openPostgresConversationStore({ connectionString: url, schema: "conversation" });
    await store.close();
    // Many conversations of one agent, so that the planner weighs the indexes as it would in production.
    await sql(
      url,
      `INSERT INTO conversation.turns (id, conversation_id, account_id, agent_id, user_id, room_id, role, text,
         input_tokens, output_tokens, latency_ms, created_at)
       SELECT 'msg_' || n, 'conv_' || (n % 500), 'acct_A', 'agt_A', 'u' || (n % 500), '', 'user', 'hi', 0, 0, 0, now()
       FROM generate_series(1, 20000) AS n;
       ANALYZE conversation.turns;`,
    );
    const scope = { accountId: "acct_A", agentId: "agt_A", filter: { conversationId: "conv_7" } };
    const request = { limit: 100, before: null, after: null, order: "desc" as const };
    for (const [page, position] of [
      [request, null],
      [{ ...request, before: "msg_1" }, 15_000],
      [{ ...request, after: "msg_1", order: "asc" as const }, 5_000],
    ] as const) {
      const query = messagesPage("conversation.turns", (n) => `$${n}`, scope, page, position);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const plan = (
          await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${query.text}`, query.values)
        ).rows.map((row) => row["QUERY PLAN"]);
        expect(plan.join("\n")).toMatch(/Index Scan (Backward )?using turns_of_conversation on turns/);
        expect(plan.join("\n")).not.toMatch(/Sort|Seq Scan/);
      } finally {
        await client.end();
      }
    }
  });

  it("takes DATABASE_URL from the environment; empty means unset, and a bad value is refused without repeating it", () => {
    const url = "postgres://agentry:s3cret@db.internal:5432/agentry";
    expect(loadConversationConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    expect(loadConversationConfig({ DATABASE_URL: "" })).not.toHaveProperty("databaseUrl");
    expect(() => loadConversationConfig({ DATABASE_URL: "https://u:s3cret@db" })).toThrow(
      "DATABASE_URL: must be a postgres:// URL",
    );
    expect(() => loadConversationConfig({ DATABASE_URL: "https://u:s3cret@db" })).not.toThrow(/s3cret/);
  });

  it("applies one set of migrations when many instances open a fresh database at once", async () => {
    const url = await db.createDatabase();
    const stores = await Promise.all(
      Array.from({ length: 12 }, () => open({ dataDir: "unused", databaseUrl: url })),
    );
    expect(stores).toHaveLength(12);
    const versions = await sql<{ version: number }>(
      url,
      "SELECT version FROM conversation.schema_migrations ORDER BY version",
    );
    expect(versions.map((v) => v.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
  });

  it("gives conversations stored before ids existed one each, and links their messages to it", async () => {
    const url = await db.createDatabase();
    const pool = new pg.Pool({ connectionString: url });
    try {
      await runPgMigrations(pool, migrationTarget("conversation", PG_MIGRATIONS.slice(0, 1)));
      const at = "2025-06-01T10:00:00.000Z";
      await pool.query(
        `INSERT INTO conversation.conversations
           (account_id, agent_id, user_id, room_id, turn_count, created_at, updated_at)
         VALUES ('acct_A', 'agt_A', 'u1', '', 2, $1, $1)`,
        [at],
      );
      await pool.query(
        `INSERT INTO conversation.turns (id, account_id, agent_id, user_id, room_id, role, text, model, provider,
           input_tokens, output_tokens, latency_ms, created_at)
         VALUES ('msg_01JAAAAAAAAAAAAAAAAAAAAAA1', 'acct_A', 'agt_A', 'u1', '', 'user', 'before ids', NULL, NULL,
           0, 0, 0, $1),
           ('msg_01JAAAAAAAAAAAAAAAAAAAAAA2', 'acct_A', 'agt_A', 'u1', '', 'assistant', 'old reply', NULL, NULL,
           0, 0, 0, $1)`,
        [at],
      );
    } finally {
      await pool.end();
    }
    const store = await open({ dataDir: "unused", databaseUrl: url });
    const page = { limit: 10, before: null, after: null, order: "asc" as const };
    const [conversation] = (await store.listConversations("acct_A", "agt_A", {}, page)).items;
    expect(conversation).toMatchObject({
      userId: "u1",
      messageCount: 2,
      createdAt: "2025-06-01T10:00:00.000Z",
    });
    expect(timeOfId(conversation!.id)).toBe(Date.parse("2025-06-01T10:00:00.000Z"));
    const messages = (await store.listMessages("acct_A", "agt_A", {}, page)).items;
    expect(messages.map((m) => [m.text, m.conversationId, m.finishReason])).toEqual([
      ["before ids", conversation!.id, null],
      ["old reply", conversation!.id, null],
    ]);
    // Stored before texts were kept: presented from their columns.
    const texts = await store.listMessageTexts("acct_A", "agt_A", {}, page);
    expect(texts.items).toEqual(messages.map(storedMessageJson));
    expect(JSON.parse(texts.items[1]!)).toMatchObject({ role: "assistant", text: "old reply", model: "" });
  });

  it("presents the messages stored before their texts were kept from their columns, as the kept texts read", async () => {
    const url = await db.createDatabase();
    const store = await open({ dataDir: "unused", databaseUrl: url });
    const k = { accountId: "acct_A", agentId: "agt_A", userId: "u1", roomId: "r1" };
    for (const ex of exchangesOfEveryKind(k)) {
      expect(
        await store.saveExchange(ex, completedCall(k, { id: ex.reply.id, requestId: null, apiKeyId: null })),
      ).toBe(true);
    }
    const pages = [
      { limit: 100, before: null, after: null, order: "desc" as const },
      { limit: 5, before: null, after: null, order: "asc" as const },
    ];
    const kept = await Promise.all(pages.map((page) => store.listMessageTexts("acct_A", "agt_A", {}, page)));
    // Every other row as a turn of an earlier version left it.
    await sql(url, "UPDATE conversation.turns SET message_json = NULL WHERE seq % 2 = 0");
    const nulls = await sql<{ n: string }>(
      url,
      "SELECT count(*) AS n FROM conversation.turns WHERE message_json IS NULL",
    );
    expect(Number(nulls[0]!.n)).toBe(6);
    for (const [i, page] of pages.entries()) {
      expect(await store.listMessageTexts("acct_A", "agt_A", {}, page)).toEqual(kept[i]);
    }
  });

  it("refuses a database whose schema is newer than this build", async () => {
    const url = await db.createDatabase();
    await (await openConversationStore({ dataDir: "unused", databaseUrl: url })).close();
    await sql(url, "INSERT INTO conversation.schema_migrations VALUES (999, 'future', now())");
    await expect(openConversationStore({ dataDir: "unused", databaseUrl: url })).rejects.toThrow(
      /schema version 999, newer than this build/,
    );
  });

  it("keeps messages next to their replies, and pages without gaps, when two instances write one conversation", async () => {
    const url = await db.createDatabase();
    const a = await open({ dataDir: "unused", databaseUrl: url });
    const b = await open({ dataDir: "unused", databaseUrl: url });
    const key = { accountId: "acct_A", agentId: "agt_A", userId: "u", roomId: "r" };
    // A reader pages while the writes go on. A page without a next cursor is read again from the same cursor
    // until one appears, since the turns after it may still be coming.
    const before: string[] = [];
    let last: string[] = [];
    let cursor: string | null = null;
    const readMore = async () => {
      const page = await a.listTurns(key, { limit: 7, cursor });
      const texts = page.turns.map((t) => t.text);
      if (page.nextCursor === null) last = texts;
      else {
        before.push(...texts);
        last = [];
        cursor = page.nextCursor;
      }
    };
    let writing = true;
    const writes = Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).saveExchange(...exchangeOf(key, i))),
    ).finally(() => {
      writing = false;
    });
    let reads = 0;
    while (writing) {
      await readMore();
      reads++;
    }
    await writes;
    expect(reads).toBeGreaterThan(0);
    const turns = await a.recentTurns(key, ALL);
    expect(turns).toHaveLength(120);
    for (let i = 0; i < turns.length; i += 2) {
      expect(turns[i]!.role).toBe("user");
      expect(turns[i + 1]!.text).toBe(turns[i]!.text.replace("q", "a"));
    }
    // Whatever the reader saw is a prefix of the final order: no turn committed late was skipped.
    const seen = [...before, ...last];
    expect(seen).toEqual(turns.slice(0, seen.length).map((t) => t.text));
  });

  it("leaves nothing of an agent purged while two instances are saving its exchanges", async () => {
    const url = await db.createDatabase();
    const a = await open({ dataDir: "unused", databaseUrl: url });
    const b = await open({ dataDir: "unused", databaseUrl: url });
    // The purge comes from a third instance, so it does not queue for a connection behind the saves.
    const c = await open({ dataDir: "unused", databaseUrl: url });
    const key = { accountId: "acct_A", agentId: "agt_race", userId: "", roomId: "" };
    const kept = { ...key, agentId: "agt_kept" };
    let stored = 0;
    let purge: Promise<unknown> | undefined;
    const saves = Array.from({ length: 120 }, (_, i) =>
      (i % 2 === 0 ? a : b).saveExchange(...exchangeOf(key, i)).then((saved) => {
        if (saved && ++stored === 10) purge = c.purgeAgent("acct_A", "agt_race");
        return saved;
      }),
    );
    await a.saveExchange(...exchangeOf(kept, 0));
    const outcomes = await Promise.all(saves);
    await purge;
    // The purge really raced the saves: some were stored before it, some refused after it.
    expect(outcomes.filter(Boolean).length).toBeGreaterThanOrEqual(10);
    expect(outcomes.filter((saved) => !saved).length).toBeGreaterThan(0);
    expect(await a.recentTurns(key, ALL)).toEqual([]);
    expect(await b.listCalls("acct_A", "agt_race")).toEqual([]);
    expect(await sql(url, "SELECT * FROM conversation.conversations WHERE agent_id = 'agt_race'")).toEqual(
      [],
    );
    expect(await a.recentTurns(kept, ALL)).toHaveLength(2);
  });

  it("counts every one of many simultaneous sends from two instances exactly, while a user is erased and an agent purged", async () => {
    const url = await db.createDatabase();
    const a = await open({ dataDir: "unused", databaseUrl: url });
    const b = await open({ dataDir: "unused", databaseUrl: url });
    const c = await open({ dataDir: "unused", databaseUrl: url });
    const hour = "2026-03-10T10:00:00.000Z";
    // Every send lands in the same hour and day: they all update the account's two rows.
    const sends = Array.from({ length: 240 }, (_, i) => {
      const key = {
        accountId: "acct_A",
        agentId: ["agt_A", "agt_B", "agt_gone"][i % 3]!,
        userId: ["u1", "u2", ""][Math.floor(i / 3) % 3]!,
        roomId: "",
      };
      const [exchange, call] = exchangeOf(key, i);
      const record = {
        ...call,
        createdAt: new Date(Date.parse(hour) + i * 1000).toISOString(),
        latencyMs: 10 + i,
      };
      const store = i % 2 === 0 ? a : b;
      const failed = i % 5 === 0;
      const sent = failed
        ? store.recordCall({
            ...record,
            outcome: "failed",
            errorCode: "MODEL_ERROR",
            inputTokens: 0,
            outputTokens: 0,
          })
        : store.saveExchange(exchange, record);
      return sent.then((stored) => ({ key, failed, stored }));
    });
    const erase = c.eraseUser("acct_A", "u1");
    const purge = c.purgeAgent("acct_A", "agt_gone");
    const outcomes = await Promise.all(sends);
    await Promise.all([erase, purge]);

    const kept = outcomes.filter((o) => o.stored && o.key.agentId !== "agt_gone");
    const usage = await a.getUsage({
      accountId: "acct_A",
      granularity: "hour",
      from: new Date(hour),
      to: new Date(Date.parse(hour) + 3_600_000),
      groupBy: ["agentId"],
    });
    expect(usage.totals.map((g) => [g.agentId, g.figures.messages, g.figures.errors])).toEqual(
      ["agt_A", "agt_B"].map((agentId) => {
        const of = kept.filter((o) => o.key.agentId === agentId);
        return [agentId, of.length, of.filter((o) => o.failed).length];
      }),
    );
    const ungrouped = await b.getUsage({
      accountId: "acct_A",
      granularity: "day",
      from: new Date(hour),
      to: new Date(Date.parse(hour) + 86_400_000),
    });
    expect(ungrouped.totals[0]!.figures.messages).toBe(kept.length);
    expect(ungrouped.totals[0]!.figures.inputTokens).toBe(kept.filter((o) => !o.failed).length);
    const byUser = await b.getUsage({
      accountId: "acct_A",
      granularity: "day",
      from: new Date(hour),
      to: new Date(Date.parse(hour) + 86_400_000),
      groupBy: ["userId"],
    });
    expect(byUser.totals.reduce((sum, g) => sum + g.figures.messages, 0)).toBe(kept.length);
  });

  it("refuses U+0000 in a message with INVALID_REQUEST, storing nothing", async () => {
    const store = await open({ dataDir: "unused", databaseUrl: db.url });
    const key = { accountId: "acct_A", agentId: "agt_nul", userId: "", roomId: "" };
    const [exchange, call] = exchangeOf(key, 1);
    const error = await store
      .saveExchange({ ...exchange, user: { ...exchange.user, text: "a\u0000b" } }, call)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("INVALID_REQUEST");
    expect(await store.recentTurns(key, ALL)).toEqual([]);
    expect(await store.listCalls("acct_A", "agt_nul")).toEqual([]);
  });
});
