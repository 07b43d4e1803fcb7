import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId } from "@agentry/core";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { conversationStoreContract } from "./contract-suite.js";
import { CONVERSATION_DB_FILE, openSqliteConversationStore } from "./sqlite.js";
import { MIGRATIONS, migrate } from "./sqlite-migrations.js";

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

describe("SqliteConversationStore", () => {
  it("writes <dataDir>/conversation.db in WAL mode with synchronous=FULL, and keeps data across reopening", async () => {
    const dataDir = join(tempDir(), "nested", "data");
    const store = openSqliteConversationStore({ dataDir });
    const k = { accountId: "acct_A", agentId: "agt_A", userId: "u", roomId: "r" };
    const at = new Date().toISOString();
    const replyId = newId("message");
    await store.saveExchange(
      {
        key: k,
        user: { id: newId("message"), text: "persist me", createdAt: at },
        reply: {
          id: replyId,
          text: "persisted",
          model: "m",
          provider: "openai",
          inputTokens: 1,
          outputTokens: 1,
          latencyMs: 1,
          createdAt: at,
        },
      },
      {
        ...k,
        id: replyId,
        requestId: null,
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
        createdAt: at,
      },
    );
    await store.close();

    const raw = new Database(join(dataDir, CONVERSATION_DB_FILE));
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();

    const reopened = openSqliteConversationStore({ dataDir });
    const { turns } = await reopened.listTurns(k, { limit: 10, cursor: null });
    expect(turns.map((t) => t.text)).toEqual(["persist me", "persisted"]);
    await reopened.close();
  });

  it("applies each migration once and refuses a database newer than the build", () => {
    const db = new Database(join(tempDir(), CONVERSATION_DB_FILE));
    migrate(db);
    migrate(db);
    expect(db.prepare("SELECT version FROM schema_migrations").pluck().all()).toEqual(
      MIGRATIONS.map((m) => m.version),
    );
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', '')").run();
    expect(() => migrate(db)).toThrow(/newer than this build/);
    db.close();
  });

  it("sets synchronous=FULL on its connection", () => {
    const store = openSqliteConversationStore({ dataDir: tempDir() });
    // synchronous is per connection; FULL is 2.
    expect(store.pragma("synchronous")).toBe(2);
    return store.close();
  });
});
