import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { afterEach, describe, expect, it } from "vitest";
import { fitHistory, turnTokens } from "../history.js";
import type { CallRecord, ConversationKey, ConversationStore, NewExchange } from "../store/types.js";

let clock = Date.parse("2026-01-01T00:00:00.000Z");

/** Strictly increasing timestamps, so ordering assertions do not depend on the wall clock's resolution. */
function tick(): string {
  clock += 1;
  return new Date(clock).toISOString();
}

function key(overrides: Partial<ConversationKey> = {}): ConversationKey {
  return { accountId: "acct_A", agentId: "agt_A", userId: "", roomId: "", ...overrides };
}

function exchange(k: ConversationKey, question: string, answer: string): NewExchange {
  return {
    key: k,
    user: { id: newId("message"), text: question, createdAt: tick() },
    reply: {
      id: newId("message"),
      text: answer,
      model: "gpt-test",
      provider: "openai",
      inputTokens: 11,
      outputTokens: 7,
      latencyMs: 42,
      createdAt: tick(),
    },
  };
}

function call(k: ConversationKey, overrides: Partial<CallRecord> = {}): CallRecord {
  return {
    ...k,
    id: newId("message"),
    requestId: "req_1",
    provider: "openai",
    model: "gpt-test",
    stream: false,
    outcome: "completed",
    errorCode: null,
    errorMessage: null,
    latencyMs: 42,
    firstTokenMs: null,
    inputTokens: 11,
    outputTokens: 7,
    createdAt: tick(),
    ...overrides,
  };
}

/** Stores a question and its answer, with the call record, as a completed message does; asserts it was stored. */
export async function storeExchange(
  store: ConversationStore,
  k: ConversationKey,
  question: string,
  answer: string,
) {
  const ex = exchange(k, question, answer);
  expect(await store.saveExchange(ex, call(k, { id: ex.reply.id }))).toBe(true);
  return ex;
}

/** History limits that leave every turn of these tests in. */
const ALL = { maxTurns: 1000, tokenBudget: 1_000_000 };

/** The texts of the conversation's whole history, oldest first. */
async function history(store: ConversationStore, k: ConversationKey, limits = ALL): Promise<string[]> {
  return (await store.recentTurns(k, limits)).map((t) => t.text);
}

/**
 * The behaviour every ConversationStore implementation must have. `open` returns a new, empty store each time
 * it is called; the suite closes what it opened.
 */
export function conversationStoreContract(name: string, open: () => Promise<ConversationStore>): void {
  describe(`ConversationStore contract: ${name}`, () => {
    const opened: ConversationStore[] = [];
    const fresh = async () => {
      const store = await open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    it("stores a message and its reply together, oldest first, with every field", async () => {
      const store = await fresh();
      const k = key({ userId: "u1", roomId: "r1" });
      const ex = await storeExchange(store, k, "hello", "hi there");
      const { turns } = await store.listTurns(k, { limit: 10, cursor: null });
      expect(turns).toEqual([
        {
          ...k,
          id: ex.user.id,
          role: "user",
          text: "hello",
          model: null,
          provider: null,
          inputTokens: 0,
          outputTokens: 0,
          latencyMs: 0,
          createdAt: ex.user.createdAt,
        },
        {
          ...k,
          id: ex.reply.id,
          role: "assistant",
          text: "hi there",
          model: "gpt-test",
          provider: "openai",
          inputTokens: 11,
          outputTokens: 7,
          latencyMs: 42,
          createdAt: ex.reply.createdAt,
        },
      ]);
    });

    it("keeps conversations apart by account, agent, user and room, the default one included", async () => {
      const store = await fresh();
      const keys = [
        key(),
        key({ userId: "u1" }),
        key({ roomId: "r1" }),
        key({ userId: "u1", roomId: "r1" }),
        key({ userId: "u2", roomId: "r1" }),
        key({ agentId: "agt_B" }),
        key({ accountId: "acct_B" }),
      ];
      for (const [i, k] of keys.entries()) await storeExchange(store, k, `question ${i}`, `answer ${i}`);
      for (const [i, k] of keys.entries()) {
        expect(await history(store, k)).toEqual([`question ${i}`, `answer ${i}`]);
        const page = await store.listTurns(k, { limit: 10, cursor: null });
        expect(page.turns.map((t) => t.text)).toEqual([`question ${i}`, `answer ${i}`]);
      }
    });

    it("reads the history as the prompt uses it: most recent turns up to maxTurns, oldest first, never starting with a reply", async () => {
      const store = await fresh();
      const k = key();
      expect(await store.recentTurns(k, ALL)).toEqual([]);
      for (let i = 1; i <= 4; i++) await storeExchange(store, k, `q${i}`, `a${i}`);
      expect(await store.recentTurns(k, { maxTurns: 4, tokenBudget: 1000 })).toEqual([
        { role: "user", text: "q3" },
        { role: "assistant", text: "a3" },
        { role: "user", text: "q4" },
        { role: "assistant", text: "a4" },
      ]);
      expect(await history(store, k, { maxTurns: 3, tokenBudget: 1000 })).toEqual(["q4", "a4"]);
      expect(await history(store, k, { maxTurns: 1, tokenBudget: 1000 })).toEqual([]);
      expect(await history(store, k, { maxTurns: 0, tokenBudget: 1000 })).toEqual([]);
      expect((await history(store, k)).length).toBe(8);
    });

    it("stops the history at the token budget, between turns: ceil(characters / 4) + 4 tokens each", async () => {
      const store = await fresh();
      const k = key({ userId: "budget" });
      // Every turn costs 14 tokens (40 characters), except the 1000-character reply a2 (254).
      const text = (tag: string, length = 40) => tag.padEnd(length, ".");
      await storeExchange(store, k, text("q1"), text("a1"));
      await storeExchange(store, k, text("q2"), text("a2", 1000));
      await storeExchange(store, k, text("q3"), text("a3"));
      await storeExchange(store, k, text("q4"), text("a4"));
      const cut = async (tokenBudget: number) =>
        (await history(store, k, { maxTurns: 200, tokenBudget })).map((t) => t.slice(0, 2));
      expect(await cut(4 * 14)).toEqual(["q3", "a3", "q4", "a4"]);
      // One token short: q3 no longer fits, and a3 may not come first.
      expect(await cut(4 * 14 - 1)).toEqual(["q4", "a4"]);
      // a2 does not fit: nothing older is read, though q2 would fit what is left.
      expect(await cut(4 * 14 + 253)).toEqual(["q3", "a3", "q4", "a4"]);
      // a2 fits, q2 does not, and a2 may not come first.
      expect(await cut(4 * 14 + 254)).toEqual(["q3", "a3", "q4", "a4"]);
      expect(await cut(5 * 14 + 254)).toEqual(["q2", "a2", "q3", "a3", "q4", "a4"]);
      expect(await cut(13)).toEqual([]);
      expect(await cut(0)).toEqual([]);
    });

    it("reads a long history whole and in order, cut by maxTurns or the budget anywhere in it", async () => {
      const store = await fresh();
      const k = key({ userId: "long" });
      // 150 exchanges, 300 turns of 5 tokens each (q000 / a000: 4 characters).
      const tag = (kind: string, i: number) => `${kind}${String(i).padStart(3, "0")}`;
      for (let i = 0; i < 150; i++) await storeExchange(store, k, tag("q", i), tag("a", i));
      const all = Array.from({ length: 150 }, (_, i) => [tag("q", i), tag("a", i)]).flat();
      expect(await history(store, k, { maxTurns: 1000, tokenBudget: 100_000 })).toEqual(all);
      expect(await history(store, k, { maxTurns: 200, tokenBudget: 100_000 })).toEqual(all.slice(-200));
      expect(await history(store, k, { maxTurns: 97, tokenBudget: 100_000 })).toEqual(all.slice(-96));
      // 141 turns fit 5 tokens each in 705; the oldest of them is a reply, so 140 remain.
      expect(await history(store, k, { maxTurns: 1000, tokenBudget: 705 })).toEqual(all.slice(-140));
      expect(await history(store, k, { maxTurns: 1000, tokenBudget: 5 * 64 })).toEqual(all.slice(-64));
    });

    it("reads at least every turn the prompt keeps, whatever the characters", async () => {
      const store = await fresh();
      const k = key({ userId: "unicode" });
      // To the prompt an astral character is two UTF-16 units, to a database one character of 4 UTF-8 bytes;
      // "é" is one unit of 2 bytes, "漢" one of 3.
      const texts = [
        "plain question",
        "🙂".repeat(30),
        "é".repeat(41),
        "x",
        "🚀 ".repeat(25),
        "漢字".repeat(9),
      ];
      for (let i = 0; i < 6; i++) await storeExchange(store, k, texts[i]!, texts[(i + 3) % 6]!);
      const all = (await store.listTurns(k, { limit: 100, cursor: null })).turns.map(({ role, text }) => ({
        role,
        text,
      }));
      const total = all.reduce((sum, t) => sum + turnTokens(t.text), 0);
      for (let budget = 0; budget <= total + 1; budget++) {
        const limits = { maxTurns: 200, tokenBudget: budget };
        const read = await store.recentTurns(k, limits);
        expect(all.slice(all.length - read.length)).toEqual(read);
        expect(fitHistory(read, limits)).toEqual(fitHistory(all, limits));
      }
    });

    it("pages through turns with opaque cursors and refuses a forged one", async () => {
      const store = await fresh();
      const k = key({ userId: "pager" });
      for (let i = 1; i <= 4; i++) await storeExchange(store, k, `q${i}`, `a${i}`);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await store.listTurns(k, { limit: 3, cursor });
        seen.push(...page.turns.map((t) => t.text));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== null && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual(["q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4"]);

      const exact = await store.listTurns(k, { limit: 8, cursor: null });
      expect(exact.turns.length).toBe(8);
      expect(exact.nextCursor).toBeNull();

      await expect(store.listTurns(k, { limit: 3, cursor: "not-a-cursor" })).rejects.toMatchObject({
        code: "INVALID_REQUEST",
      });
      await expect(store.listTurns(k, { limit: 3, cursor: "bm9wZQ" })).rejects.toBeInstanceOf(AppError);
    });

    it("keeps each message next to its reply when exchanges are saved at the same time", async () => {
      const store = await fresh();
      const k = key({ userId: "busy" });
      const exchanges = Array.from({ length: 20 }, (_, i) => exchange(k, `q${i}`, `a${i}`));
      const results = await Promise.all(
        exchanges.map((ex) => store.saveExchange(ex, call(k, { id: ex.reply.id }))),
      );
      expect(results.every(Boolean)).toBe(true);
      const turns = await store.recentTurns(k, ALL);
      expect(turns.length).toBe(40);
      for (let i = 0; i < turns.length; i += 2) {
        expect(turns[i]!.role).toBe("user");
        expect(turns[i + 1]!.role).toBe("assistant");
        expect(turns[i + 1]!.text).toBe(turns[i]!.text.replace("q", "a"));
      }
    });

    it("records every call, stored reply or not, oldest first", async () => {
      const store = await fresh();
      const k = key({ userId: "u1" });
      const ex = await storeExchange(store, k, "q", "a");
      const failed = call(k, {
        outcome: "failed",
        errorCode: "AGENT_UNAVAILABLE",
        errorMessage: "The openai provider is overloaded (HTTP 529). Retry shortly.",
        stream: true,
        firstTokenMs: 12,
        inputTokens: 0,
        outputTokens: 0,
      });
      expect(await store.recordCall(failed)).toBe(true);
      const calls = await store.listCalls("acct_A", "agt_A");
      expect(calls.map((c) => c.id)).toEqual([ex.reply.id, failed.id]);
      expect(calls[1]).toEqual(failed);
      expect(await store.listCalls("acct_B", "agt_A")).toEqual([]);
      expect((await history(store, k)).length).toBe(2);
    });

    it("purges everything of one agent in the account, idempotently, and stores nothing for it afterwards", async () => {
      const store = await fresh();
      const gone = key({ agentId: "agt_gone", userId: "u1" });
      const kept = key({ agentId: "agt_kept", userId: "u1" });
      await storeExchange(store, gone, "q1", "a1");
      await storeExchange(store, { ...gone, userId: "" }, "q2", "a2");
      await store.recordCall(call(gone, { outcome: "failed", errorCode: "MODEL_ERROR" }));
      await storeExchange(store, kept, "q", "a");

      expect(await store.purgeAgent("acct_B", "agt_gone")).toEqual({ turns: 0, calls: 0 });
      expect((await history(store, gone)).length).toBe(2);

      expect(await store.purgeAgent("acct_A", "agt_gone")).toEqual({ turns: 4, calls: 3 });
      expect(await history(store, gone)).toEqual([]);
      expect(await history(store, { ...gone, userId: "" })).toEqual([]);
      expect((await store.listTurns(gone, { limit: 10, cursor: null })).turns).toEqual([]);
      expect(await store.listCalls("acct_A", "agt_gone")).toEqual([]);
      expect(await store.purgeAgent("acct_A", "agt_gone")).toEqual({ turns: 0, calls: 0 });

      const late = exchange(gone, "late question", "late answer");
      expect(await store.saveExchange(late, call(gone, { id: late.reply.id }))).toBe(false);
      expect(await store.recordCall(call(gone))).toBe(false);
      expect(await history(store, gone)).toEqual([]);
      expect(await store.listCalls("acct_A", "agt_gone")).toEqual([]);

      expect(await history(store, kept)).toEqual(["q", "a"]);
      expect((await store.listCalls("acct_A", "agt_kept")).length).toBe(1);
    });
  });
}
