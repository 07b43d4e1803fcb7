import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { timeOfId } from "@agentry/core";
import { runSqliteMigrations, sqliteSchemaVersion } from "@agentry/sqlite";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { messagesPage } from "../src/store/queries.js";
import {
  CONVERSATION_DB_FILE,
  openSqliteConversationStore,
  type SqliteConversationStore,
} from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";
import type { HistoryLimits } from "../src/store/types.js";
import { storedMessageJson } from "../src/stored-messages.js";
import { auditStoreContract } from "../src/testing/audit-contract.js";
import { documentStoreContract } from "../src/testing/document-contract.js";
import { memoryStoreContract } from "../src/testing/memory-contract.js";
import {
  conversationStoreContract,
  exchangesOfEveryKind,
  storeExchange,
} from "../src/testing/store-contract.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "conversation-store-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

conversationStoreContract("sqlite", async () => openSqliteConversationStore({ dataDir: tempDir() }));
memoryStoreContract("sqlite", async () => openSqliteConversationStore({ dataDir: tempDir() }));
documentStoreContract("sqlite", async () => openSqliteConversationStore({ dataDir: tempDir() }));
auditStoreContract("sqlite", async () => openSqliteConversationStore({ dataDir: tempDir() }));

describe("SqliteConversationStore", () => {
  it("pages a conversation's messages from its own index, in order, with no sort and no scan of the agent's", async () => {
    const dir = tempDir();
    await openSqliteConversationStore({ dataDir: dir }).close();
    const db = new Database(join(dir, CONVERSATION_DB_FILE), { readonly: true });
    try {
      const filter = { conversationId: "conv_1" };
      const scope = { accountId: "acct_A", agentId: "agt_A", filter };
      const request = { limit: 100, before: null, after: null, order: "desc" as const };
      for (const [page, position] of [
        [request, null],
        [{ ...request, before: "msg_1" }, 42],
        [{ ...request, after: "msg_1", order: "asc" as const }, 42],
      ] as const) {
        const query = messagesPage("turns", () => "?", scope, page, position);
        const plan = db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${query.text}`)
          .all(...query.values)
          .map((row) => row.detail);
        expect(plan).toEqual([
          expect.stringMatching(
            /^SEARCH turns USING INDEX turns_of_conversation \(account_id=\? AND agent_id=\? AND conversation_id=\?/,
          ),
        ]);
      }
    } finally {
      db.close();
    }
  });

  it("presents the messages stored before their texts were kept from their columns, as the kept texts read", async () => {
    const dataDir = tempDir();
    const store = openSqliteConversationStore({ dataDir });
    const k = { accountId: "acct_A", agentId: "agt_A", userId: "u1", roomId: "r1" };
    for (const ex of exchangesOfEveryKind(k)) {
      expect(await store.saveExchange(ex, callOf(ex.reply.id, k))).toBe(true);
    }
    const pages = [
      { limit: 100, before: null, after: null, order: "desc" as const },
      { limit: 5, before: null, after: null, order: "asc" as const },
    ];
    const kept = await Promise.all(pages.map((page) => store.listMessageTexts("acct_A", "agt_A", {}, page)));
    await store.close();
    // Every other row as a turn of an earlier version left it.
    const db = new Database(join(dataDir, CONVERSATION_DB_FILE));
    expect(db.prepare("UPDATE turns SET message_json = NULL WHERE seq % 2 = 0").run().changes).toBe(6);
    db.close();
    const reopened = openSqliteConversationStore({ dataDir });
    try {
      for (const [i, page] of pages.entries()) {
        expect(await reopened.listMessageTexts("acct_A", "agt_A", {}, page)).toEqual(kept[i]);
      }
    } finally {
      await reopened.close();
    }
  });

  it("loads sqlite-vec, so that memories are ranked by vector besides full text", async () => {
    const store = openSqliteConversationStore({ dataDir: tempDir() });
    expect(await store.searchesVectors()).toBe(true);
    await store.close();
  });

  it("writes <dataDir>/conversation.db, applies the migrations once, and keeps data across reopening", async () => {
    const dataDir = join(tempDir(), "nested", "data");
    const store = openSqliteConversationStore({ dataDir });
    const k = { accountId: "acct_A", agentId: "agt_A", userId: "u", roomId: "r" };
    await storeExchange(store, k, "persist me", "persisted");
    await store.close();

    const reopened = openSqliteConversationStore({ dataDir });
    const { turns } = await reopened.listTurns(k, { limit: 10, cursor: null });
    expect(turns.map((t) => t.text)).toEqual(["persist me", "persisted"]);
    await reopened.close();
    expect(sqliteSchemaVersion(join(dataDir, CONVERSATION_DB_FILE))).toBe(
      Math.max(...MIGRATIONS.map((m) => m.version)),
    );
  });

  it("sets synchronous=FULL on its connection", () => {
    const store = openSqliteConversationStore({ dataDir: tempDir() });
    // synchronous is per connection; FULL is 2.
    expect(store.pragma("synchronous")).toBe(2);
    return store.close();
  });

  it("is back at synchronous=FULL after each write of the conversations' lines, which commit without it", async () => {
    const store = openSqliteConversationStore({ dataDir: tempDir() });
    const k = { accountId: "acct_A", agentId: "agt_A", userId: "u", roomId: "" };
    const entry = (id: string) => ({
      id,
      key: k,
      holder: "p1",
      owner: `p1/${id}`,
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      createdAt: new Date().toISOString(),
    });
    const writes = [
      () => store.joinConversation(entry("m1"), "enqueue", new Date().toISOString()),
      () => store.joinConversation(entry("m2"), "enqueue", new Date().toISOString()),
      () => store.admitTurn("m2", new Date().toISOString()),
      () => store.renewQueue("p1", ["m1", "m2"], new Date(Date.now() + 60_000).toISOString()),
      () => store.leaveConversation("m1", "p1/m1"),
      () => store.joinConversation(entry("m3"), "reject", new Date().toISOString()),
    ];
    for (const write of writes) {
      await write();
      expect(store.pragma("synchronous")).toBe(2);
    }
    await store.close();
  });

  describe("history cache", () => {
    const k = { accountId: "acct_C", agentId: "agt_C", userId: "u", roomId: "" };
    const texts = async (store: SqliteConversationStore, limits: HistoryLimits) =>
      (await store.recentTurns(k, limits)).map((turn) => `${turn.role}:${turn.text}`);

    it("answers every read exactly as a fresh read of the file would, as exchanges are stored", async () => {
      const dataDir = tempDir();
      const store = openSqliteConversationStore({ dataDir });
      // Texts of varied length against a small budget and turn limit: the window's cut moves on most saves.
      const limits = { maxTurns: 9, tokenBudget: 120 };
      let seed = 7;
      const random = () => {
        seed = (seed * 48271) % 2147483647;
        return seed / 2147483647;
      };
      for (let i = 0; i < 40; i++) {
        const cached = await texts(store, limits);
        const fresh = openSqliteConversationStore({ dataDir });
        expect(cached).toEqual(await texts(fresh, limits));
        await fresh.close();
        const words = (count: number) => "word ".repeat(Math.floor(random() * count)).trim() || "x";
        await storeExchange(store, k, `q${i} ${words(40)}`, `a${i} ${words(80)}`);
      }
      expect((await texts(store, { maxTurns: 1000, tokenBudget: 1_000_000 })).length).toBe(80);
      await store.close();
    });

    it("sees what another connection to the same file stored", async () => {
      const dataDir = tempDir();
      const store = openSqliteConversationStore({ dataDir });
      const other = openSqliteConversationStore({ dataDir });
      const limits = { maxTurns: 200, tokenBudget: 100_000 };
      await storeExchange(store, k, "one", "first");
      expect(await texts(store, limits)).toEqual(["user:one", "assistant:first"]);
      await storeExchange(other, k, "two", "second");
      expect(await texts(store, limits)).toEqual([
        "user:one",
        "assistant:first",
        "user:two",
        "assistant:second",
      ]);
      // Stored by both, in turn: the cache never appends its own exchange after someone else's it has not read.
      await storeExchange(store, k, "three", "third");
      await storeExchange(other, k, "four", "fourth");
      await storeExchange(store, k, "five", "fifth");
      expect(await texts(store, limits)).toEqual(await texts(other, limits));
      expect((await texts(store, limits)).length).toBe(10);
      await other.close();
      await store.close();
    });

    it("forgets a purged agent's conversations", async () => {
      const store = openSqliteConversationStore({ dataDir: tempDir() });
      const limits = { maxTurns: 200, tokenBudget: 100_000 };
      await storeExchange(store, k, "hello", "hi");
      expect(await texts(store, limits)).toHaveLength(2);
      await store.purgeAgent(k.accountId, k.agentId);
      expect(await texts(store, limits)).toEqual([]);
      await store.close();
    });
  });
});

describe("SqliteConversationStore schema version 2", () => {
  it("gives conversations stored before ids existed one each, and links their messages to it", async () => {
    const dataDir = tempDir();
    const file = join(dataDir, CONVERSATION_DB_FILE);
    const v1 = new Database(file);
    runSqliteMigrations(v1, { service: "conversation", migrations: MIGRATIONS.slice(0, 1) });
    const at = "2025-06-01T10:00:00.000Z";
    v1.prepare(
      `INSERT INTO conversations (account_id, agent_id, user_id, room_id, turn_count, created_at, updated_at)
       VALUES ('acct_A', 'agt_A', 'u1', '', 2, ?, ?)`,
    ).run(at, at);
    const insertTurn = v1.prepare(
      `INSERT INTO turns (id, account_id, agent_id, user_id, room_id, role, text, model, provider,
         input_tokens, output_tokens, latency_ms, created_at)
       VALUES (?, 'acct_A', 'agt_A', 'u1', '', ?, ?, NULL, NULL, 0, 0, 0, ?)`,
    );
    insertTurn.run("msg_01JAAAAAAAAAAAAAAAAAAAAAA1", "user", "before ids", at);
    insertTurn.run("msg_01JAAAAAAAAAAAAAAAAAAAAAA2", "assistant", "old reply", at);
    v1.close();

    const store = openSqliteConversationStore({ dataDir });
    try {
      const page = { limit: 10, before: null, after: null, order: "asc" as const };
      const [conversation] = (await store.listConversations("acct_A", "agt_A", {}, page)).items;
      expect(conversation).toMatchObject({ userId: "u1", messageCount: 2, createdAt: at });
      // Its id is dated by the conversation's first message.
      expect(timeOfId(conversation!.id)).toBe(Date.parse(at));
      const messages = (await store.listMessages("acct_A", "agt_A", {}, page)).items;
      expect(messages.map((m) => [m.text, m.conversationId, m.finishReason])).toEqual([
        ["before ids", conversation!.id, null],
        ["old reply", conversation!.id, null],
      ]);
      // Stored before texts were kept: presented from their columns.
      const texts = await store.listMessageTexts("acct_A", "agt_A", {}, page);
      expect(texts.items).toEqual(messages.map(storedMessageJson));
      expect(JSON.parse(texts.items[1]!)).toMatchObject({ role: "assistant", text: "old reply", model: "" });
      // New exchanges join it.
      await storeExchange(
        store,
        { accountId: "acct_A", agentId: "agt_A", userId: "u1", roomId: "" },
        "q",
        "a",
      );
      expect(
        (await store.listMessages("acct_A", "agt_A", { conversationId: conversation!.id }, page)).items,
      ).toHaveLength(4);
    } finally {
      await store.close();
    }
  });
});

/** The call record of a completed exchange. */
function callOf(id: string, k: { accountId: string; agentId: string; userId: string; roomId: string }) {
  return {
    ...k,
    id,
    requestId: null,
    apiKeyId: null,
    provider: "openai",
    model: "gpt-test",
    stream: false,
    outcome: "completed" as const,
    errorCode: null,
    errorMessage: null,
    latencyMs: 42,
    firstTokenMs: null,
    inputTokens: 11,
    outputTokens: 7,
    createdAt: new Date().toISOString(),
  };
}
