import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteSchemaVersion } from "@agentry/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import {
  CONVERSATION_DB_FILE,
  openSqliteConversationStore,
  type SqliteConversationStore,
} from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";
import type { HistoryLimits } from "../src/store/types.js";
import { conversationStoreContract, storeExchange } from "../src/testing/store-contract.js";

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
