import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { afterEach, describe, expect, it } from "vitest";
import { fitHistory, turnTokens } from "../history.js";
import type {
  CallRecord,
  ConversationKey,
  ConversationStore,
  NewExchange,
  NewOutboxEvent,
  PageRequest,
  RunEnd,
  RunEvent,
  RunRecord,
} from "../store/types.js";
import { storedMessageJson } from "../stored-messages.js";
import {
  PERCENTILE_RELATIVE_ACCURACY,
  type UsageDimension,
  type UsageGroup,
  type UsageReport,
  type UsageRequest,
} from "../usage.js";

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
      finishReason: "stop",
      createdAt: tick(),
    },
  };
}

/** The call record of a completed exchange of `k`, with `overrides`. */
export function completedCall(k: ConversationKey, overrides: Partial<CallRecord> = {}): CallRecord {
  return {
    ...k,
    id: newId("message"),
    requestId: "req_1",
    apiKeyId: "key_1",
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
  expect(await store.saveExchange(ex, completedCall(k, { id: ex.reply.id }))).toBe(true);
  return ex;
}

/**
 * Exchanges of every kind a stored message can be (under `k`'s account and agent; `k`'s user and room, and the
 * default conversation's): tool calls that answered JSON, answered nothing, failed, or were called with arguments
 * that are not JSON; citations; a reply stored without a finish reason; a background reply by a fallback model;
 * text that JSON escapes (quotes, controls, U+2028, a lone surrogate) and text beyond ASCII.
 */
export function exchangesOfEveryKind(k: ConversationKey): NewExchange[] {
  const plain = exchange({ ...k, userId: "", roomId: "" }, "hello", "hi");
  const tools = exchange(k, "what time is it, and what is 2+2?", "noon, and 4");
  tools.reply.toolCalls = [
    { id: "call_1", name: "time__now", arguments: '{"zone":"Europe/Paris"}', ok: true, output: '"12:00 ✓"' },
    { id: "call_2", name: "calc__evaluate", arguments: '{"expression": ', ok: false, error: "Not JSON." },
    { id: "call_3", name: "calc__evaluate", arguments: "", ok: true },
    { id: "call_4", name: "web__fetch", arguments: '{"url":"https://a.test"}', ok: true, output: "not json" },
  ];
  const cited = exchange(k, "what does the handbook say?", "It says [1].");
  cited.reply.citations = [
    { documentId: "doc_01JAAAAAAAAAAAAAAAAAAAAAAA", chunk: 3, score: 1 },
    { documentId: "doc_01JBBBBBBBBBBBBBBBBBBBBBBB", chunk: 0, score: 0.1 + 0.2 },
  ];
  const unfinished = exchange(k, "an old reply", "stored before the finish reason was kept");
  unfinished.reply.finishReason = "";
  const background = exchange({ ...k, roomId: "" }, "later, please", "done in the background");
  background.reply.background = true;
  background.reply.fallback = true;
  const escaped = exchange(
    k,
    'Grüße 👋 "quoted" \\ back\\slash\n\u2028 \u0007 \ud800 lone',
    "line\nbreak\ttab </script> \u2028\u2029 ✓",
  );
  return [plain, tools, cited, unfinished, background, escaped];
}

/**
 * A message event as the service writes one: its data with members in no sorted order, nested, with text that is
 * not ASCII, so that a store that reorders or re-encodes it shows.
 */
function outboxEvent(k: ConversationKey, overrides: Partial<NewOutboxEvent> = {}): NewOutboxEvent {
  const messageId = newId("message");
  return {
    id: newId("event"),
    type: "message.completed",
    accountId: k.accountId,
    agentId: k.agentId,
    createdAt: tick(),
    data: {
      id: messageId,
      agentId: k.agentId,
      userId: k.userId || null,
      roomId: null,
      text: 'Grüße 👋 "quoted"\n',
      usage: { outputTokens: 7, inputTokens: 11, totalTokens: 18 },
      latencyMs: 42,
    },
    ...overrides,
  };
}

/** A page request: 20 newest first unless told otherwise. */
function page(overrides: Partial<PageRequest> = {}): PageRequest {
  return { limit: 20, before: null, after: null, order: "desc", ...overrides };
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
      const conversationId = turns[0]!.conversationId;
      expect(conversationId).toMatch(/^conv_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(turns).toEqual([
        {
          ...k,
          id: ex.user.id,
          conversationId,
          role: "user",
          text: "hello",
          model: null,
          provider: null,
          inputTokens: 0,
          outputTokens: 0,
          latencyMs: 0,
          finishReason: null,
          toolCalls: [],
          citations: [],
          background: false,
          fallback: false,
          createdAt: ex.user.createdAt,
        },
        {
          ...k,
          id: ex.reply.id,
          conversationId,
          role: "assistant",
          text: "hi there",
          model: "gpt-test",
          provider: "openai",
          inputTokens: 11,
          outputTokens: 7,
          latencyMs: 42,
          finishReason: "stop",
          toolCalls: [],
          citations: [],
          background: false,
          fallback: false,
          createdAt: ex.reply.createdAt,
        },
      ]);
    });

    it("keeps a reply's tool calls with their outcomes, as given, in every read of the message", async () => {
      const store = await fresh();
      const k = key({ userId: "u1" });
      const toolCalls = [
        {
          id: "call_1",
          name: "time__now",
          arguments: '{"zone":"Europe/Paris"}',
          ok: true,
          output: '"12:00 ✓"',
        },
        {
          id: "call_2",
          name: "calc__evaluate",
          arguments: '{"expression": ',
          ok: false,
          error: "The arguments are not valid JSON.",
        },
      ];
      const ex = exchange(k, "what time is it?", "noon");
      ex.reply.toolCalls = toolCalls;
      expect(await store.saveExchange(ex, completedCall(k, { id: ex.reply.id }))).toBe(true);
      expect((await store.getMessage("acct_A", "agt_A", ex.reply.id))?.toolCalls).toEqual(toolCalls);
      expect((await store.getMessage("acct_A", "agt_A", ex.user.id))?.toolCalls).toEqual([]);
      const listed = await store.listMessages("acct_A", "agt_A", {}, page());
      expect(listed.items.map((m) => m.toolCalls)).toEqual([toolCalls, []]);
      const { turns } = await store.listTurns(k, { limit: 10, cursor: null });
      expect(turns[1]!.toolCalls).toEqual(toolCalls);
      const exported = await store.exportUser("acct_A", "u1", null, 10);
      expect(exported.turns[1]!.toolCalls).toEqual(toolCalls);
      // The prompt's history is the turns' text only.
      expect(await store.recentTurns(k, ALL)).toEqual([
        { role: "user", text: "what time is it?" },
        { role: "assistant", text: "noon" },
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
        exchanges.map((ex) => store.saveExchange(ex, completedCall(k, { id: ex.reply.id }))),
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
      const failed = completedCall(k, {
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
      await store.recordCall(completedCall(gone, { outcome: "failed", errorCode: "MODEL_ERROR" }));
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
      expect(await store.saveExchange(late, completedCall(gone, { id: late.reply.id }))).toBe(false);
      expect(await store.recordCall(completedCall(gone))).toBe(false);
      expect(await history(store, gone)).toEqual([]);
      expect(await store.listCalls("acct_A", "agt_gone")).toEqual([]);

      expect(await history(store, kept)).toEqual(["q", "a"]);
      expect((await store.listCalls("acct_A", "agt_kept")).length).toBe(1);
      expect(
        (await store.listConversations("acct_A", "agt_gone", {}, page())).items,
        "a purged agent's conversations",
      ).toEqual([]);
    });

    describe("conversation queues", () => {
      const soon = () => new Date(Date.now() + 60_000).toISOString();
      const now = () => new Date().toISOString();
      /** A place joined by process `holder`; its owner token is `holder/id` (one attempt per process here). */
      const place = (id: string, holder = "p1", k = key(), expiresAt = soon()) => ({
        id,
        key: k,
        holder,
        owner: `${holder}/${id}`,
        expiresAt,
        createdAt: now(),
      });

      it("admits one place of a conversation at a time, in the order they joined, others apart", async () => {
        const store = await fresh();
        // A place joined into an empty line is admitted by the join.
        expect(await store.joinConversation(place("m1"), "enqueue", now())).toBe("admitted");
        expect(await store.joinConversation(place("m2", "p2"), "enqueue", now())).toBe("waiting");
        expect(await store.joinConversation(place("m3"), "enqueue", now())).toBe("waiting");
        expect(
          await store.joinConversation(place("x1", "p1", key({ userId: "other" })), "enqueue", now()),
        ).toBe("admitted");
        expect(await store.admitTurn("m2", now())).toBe("waiting");
        expect(await store.admitTurn("m1", now())).toBe("admitted");
        expect(await store.admitTurn("x1", now())).toBe("admitted");
        expect(await store.admitTurn("m3", now())).toBe("waiting");
        // Leaving needs the owner: another's leave does not free the place.
        await store.leaveConversation("m1", "p2/m1");
        expect(await store.admitTurn("m2", now())).toBe("waiting");
        await store.leaveConversation("m1", "p1/m1");
        expect(await store.admitTurn("m3", now())).toBe("waiting");
        expect(await store.admitTurn("m2", now())).toBe("admitted");
        await store.leaveConversation("m2", "p2/m2");
        expect(await store.admitTurn("m3", now())).toBe("admitted");
        expect(await store.admitTurn("gone", now())).toBe("gone");
      });

      it("rejects a place while the line is not empty; passes over places whose lease expired", async () => {
        const store = await fresh();
        await store.joinConversation(place("m1"), "enqueue", now());
        expect(await store.joinConversation(place("m2"), "reject", now())).toBe("refused");
        expect(await store.admitTurn("m2", now())).toBe("gone");
        // A process that died: its place expired.
        await store.joinConversation(place("dead", "p9", key({ roomId: "r" }), now()), "enqueue", now());
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect(await store.joinConversation(place("m3", "p1", key({ roomId: "r" })), "reject", now())).toBe(
          "admitted",
        );
        expect(await store.admitTurn("m3", now())).toBe("admitted");
      });

      it("marks the places before an interrupting one, renews its holder's places, and keeps a place joined again", async () => {
        const store = await fresh();
        await store.joinConversation(place("m1", "p1"), "enqueue", now());
        await store.joinConversation(place("m2", "p2"), "enqueue", now());
        expect(await store.admitTurn("m1", now())).toBe("admitted");
        expect(await store.joinConversation(place("m3", "p2"), "interrupt", now())).toBe("waiting");
        expect(await store.renewQueue("p1", ["m1"], soon())).toEqual([{ id: "m1", interrupted: true }]);
        const renewed = await store.renewQueue("p2", ["m2", "m3", "m1"], soon());
        expect(renewed.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
          { id: "m2", interrupted: true },
          { id: "m3", interrupted: false },
        ]);
        // A run taken over joins again under its id: same place, new holder, once the store has it the run's.
        const takeover = { ...place("m1", "p3"), takeover: true };
        expect(await store.joinConversation(takeover, "enqueue", now())).toBe("admitted");
        expect(await store.renewQueue("p3", ["m1"], soon()), "p3 does not hold m1's run").toEqual([]);
        await store.startRun(
          pendingRun({ id: "m1", userId: "u1", lease: { holder: "p3", expiresAt: soon() }, input: "{}" }),
        );
        expect(await store.joinConversation(takeover, "enqueue", now())).toBe("admitted");
        expect(await store.admitTurn("m1", now())).toBe("admitted");
        expect(await store.renewQueue("p3", ["m1"], soon())).toEqual([{ id: "m1", interrupted: true }]);
        await store.leaveConversation("m1", "p1/m1");
        expect(await store.admitTurn("m1", now()), "left by its former owner").toBe("admitted");
        await store.leaveConversation("m1", "p3/m1");
        expect(await store.admitTurn("m1", now())).toBe("gone");
      });

      it("keeps a message's place for the attempt whose run is recorded; the other leaves nothing", async () => {
        const store = await fresh();
        const leased = (holder: string) =>
          pendingRun({ id: "m1", userId: "u1", lease: { holder, expiresAt: soon() }, input: "{}" });
        // Two processes start one message: the first to join has the place, until the other records the run.
        expect(await store.joinConversation(place("m1", "p1"), "enqueue", now())).toBe("admitted");
        expect(await store.joinConversation(place("m1", "p2"), "enqueue", now())).toBe("admitted");
        expect(await store.renewQueue("p2", ["m1"], soon())).toEqual([]);
        await store.startRun(leased("p2"), "p2/m1");
        await expect(store.startRun(leased("p1"), "p1/m1")).rejects.toThrow();
        await store.leaveConversation("m1", "p1/m1");
        expect(await store.renewQueue("p1", ["m1"], soon())).toEqual([]);
        expect(await store.renewQueue("p2", ["m1"], soon())).toEqual([{ id: "m1", interrupted: false }]);
        // Another attempt coming once the run is recorded neither takes the place nor leaves it.
        expect(await store.joinConversation(place("m1", "p3"), "enqueue", now())).toBe("admitted");
        await store.leaveConversation("m1", "p3/m1");
        expect(await store.admitTurn("m1", now())).toBe("admitted");
        expect(await store.renewQueue("p2", ["m1"], soon())).toEqual([{ id: "m1", interrupted: false }]);
        await store.leaveConversation("m1", "p2/m1");
        expect(await store.admitTurn("m1", now())).toBe("gone");
      });

      it("leaves the line with the exchange it stores, by the place's owner only, and not for a purged agent", async () => {
        const store = await fresh();
        const k = key({ userId: "u1" });
        const first = exchange(k, "q1", "a1");
        const second = exchange(k, "q2", "a2");
        expect(await store.joinConversation(place(first.reply.id, "p1", k), "enqueue", now())).toBe(
          "admitted",
        );
        expect(await store.joinConversation(place(second.reply.id, "p2", k), "enqueue", now())).toBe(
          "waiting",
        );
        // Another attempt's owner token leaves nothing, though the exchange is stored.
        const foreign = { ...first, leaves: { id: first.reply.id, owner: `p2/${first.reply.id}` } };
        expect(await store.saveExchange(foreign, completedCall(k, { id: first.reply.id }))).toBe(true);
        expect(await store.admitTurn(second.reply.id, now())).toBe("waiting");
        // Its owner's exchange leaves it in the same transaction: the next message goes, the reply stored before it.
        const retried = {
          ...exchange(k, "q1 again", "a1 again"),
          leaves: { id: first.reply.id, owner: `p1/${first.reply.id}` },
        };
        expect(await store.saveExchange(retried, completedCall(k, { id: retried.reply.id }))).toBe(true);
        expect(await store.admitTurn(first.reply.id, now())).toBe("gone");
        expect(await store.admitTurn(second.reply.id, now())).toBe("admitted");
        expect(await history(store, k)).toEqual(["q1", "a1", "q1 again", "a1 again"]);
        // An exchange its agent's purge refuses stores nothing, and leaves the place to `leaveConversation`.
        await store.purgeAgent(k.accountId, k.agentId);
        const late = { ...second, leaves: { id: second.reply.id, owner: `p2/${second.reply.id}` } };
        expect(await store.saveExchange(late, completedCall(k, { id: second.reply.id }))).toBe(false);
        expect(await store.admitTurn(second.reply.id, now())).toBe("admitted");
      });
    });

    describe("outbox", () => {
      it("writes an exchange's and a failed call's events with them, oldest first, their data as written", async () => {
        const store = await fresh();
        const k = key({ userId: "u1" });
        const ex = exchange(k, "q", "a");
        const completed = outboxEvent(k);
        expect(await store.saveExchange(ex, completedCall(k, { id: ex.reply.id }), [completed])).toBe(true);
        const failed = outboxEvent(k, {
          type: "message.failed",
          data: { agentId: k.agentId, messageId: newId("message"), code: "MODEL_ERROR", message: "rejected" },
        });
        expect(
          await store.recordCall(completedCall(k, { outcome: "failed", errorCode: "MODEL_ERROR" }), [failed]),
        ).toBe(true);
        // Calls without events write none.
        await storeExchange(store, k, "q2", "a2");
        await store.recordCall(completedCall(k, { outcome: "cancelled" }));

        const pending = await store.pendingEvents(10);
        expect(pending.map(({ seq: _seq, ...event }) => event)).toEqual([completed, failed]);
        expect(pending[0]!.seq).toBeLessThan(pending[1]!.seq);
        // Member order and characters kept: the bytes receivers get are the bytes written.
        expect(pending.map((event) => JSON.stringify(event.data))).toEqual([
          JSON.stringify(completed.data),
          JSON.stringify(failed.data),
        ]);
      });

      it("writes no event when the exchange is not stored, and stores no exchange whose event cannot be written", async () => {
        const store = await fresh();
        const k = key({ userId: "u1" });
        const first = await storeExchange(store, k, "q1", "a1");

        // The reply's id is taken: the exchange fails, and its event goes with it.
        const clash = exchange(k, "q2", "a2");
        clash.reply.id = first.reply.id;
        await expect(store.saveExchange(clash, completedCall(k), [outboxEvent(k)])).rejects.toBeDefined();
        expect(await store.pendingEvents(10)).toEqual([]);

        // The event's id is taken: the event fails, and the exchange and its call go with it.
        const written = outboxEvent(k);
        await store.recordCall(completedCall(k, { outcome: "failed" }), [written]);
        const calls = (await store.listCalls("acct_A", "agt_A")).length;
        const late = exchange(k, "q3", "a3");
        await expect(
          store.saveExchange(late, completedCall(k, { id: late.reply.id }), [
            outboxEvent(k, { id: written.id }),
          ]),
        ).rejects.toBeDefined();
        await expect(
          store.recordCall(completedCall(k, { outcome: "failed" }), [outboxEvent(k, { id: written.id })]),
        ).rejects.toBeDefined();
        expect(await history(store, k)).toEqual(["q1", "a1"]);
        expect(await store.listCalls("acct_A", "agt_A")).toHaveLength(calls);
        expect((await store.pendingEvents(10)).map((event) => event.id)).toEqual([written.id]);
      });

      it("removes published events, passing over those already gone, and reads at most the limit", async () => {
        const store = await fresh();
        const k = key();
        const events = [outboxEvent(k), outboxEvent(k), outboxEvent(k)];
        for (const event of events) await store.recordCall(completedCall(k, { outcome: "failed" }), [event]);
        const [a, b, c] = await store.pendingEvents(10);
        expect((await store.pendingEvents(2)).map((event) => event.id)).toEqual([a!.id, b!.id]);
        await store.removeEvents([a!.seq]);
        await store.removeEvents([]);
        expect((await store.pendingEvents(10)).map((event) => event.id)).toEqual([b!.id, c!.id]);
        await store.removeEvents([a!.seq, b!.seq, c!.seq]);
        expect(await store.pendingEvents(10)).toEqual([]);
      });

      it("purges an agent's waiting events, and writes none for it afterwards", async () => {
        const store = await fresh();
        const gone = key({ agentId: "agt_gone" });
        const kept = key({ agentId: "agt_kept" });
        const ex = exchange(gone, "q", "a");
        await store.saveExchange(ex, completedCall(gone, { id: ex.reply.id }), [outboxEvent(gone)]);
        const keptEvent = outboxEvent(kept);
        await store.recordCall(completedCall(kept, { outcome: "failed" }), [keptEvent]);
        await store.recordCall(
          completedCall(key({ accountId: "acct_B", agentId: "agt_gone" }), { outcome: "failed" }),
          [outboxEvent(key({ accountId: "acct_B", agentId: "agt_gone" }))],
        );

        await store.purgeAgent("acct_A", "agt_gone");
        expect((await store.pendingEvents(10)).map((event) => [event.accountId, event.agentId])).toEqual([
          ["acct_A", "agt_kept"],
          ["acct_B", "agt_gone"],
        ]);

        // A reply that completes, or a call that fails, after the purge: nothing stored, nothing emitted.
        const late = exchange(gone, "late", "reply");
        expect(
          await store.saveExchange(late, completedCall(gone, { id: late.reply.id }), [outboxEvent(gone)]),
        ).toBe(false);
        expect(await store.recordCall(completedCall(gone, { outcome: "failed" }), [outboxEvent(gone)])).toBe(
          false,
        );
        expect((await store.pendingEvents(10)).map((event) => event.agentId)).toEqual([
          "agt_kept",
          "agt_gone",
        ]);
        expect((await store.pendingEvents(10))[0]!.id).toBe(keptEvent.id);
      });
    });

    it("gives each conversation one id for its life, and lists an agent's by latest activity", async () => {
      const store = await fresh();
      const a = key({ userId: "u1", roomId: "r1" });
      const b = key({ userId: "u2", roomId: "r1" });
      const first = await storeExchange(store, a, "a1", "a1'");
      await storeExchange(store, b, "b1", "b1'");
      const last = await storeExchange(store, a, "a2", "a2'");
      await storeExchange(store, key({ agentId: "agt_other", userId: "u1", roomId: "r1" }), "x", "y");

      const { items, hasMore } = await store.listConversations("acct_A", "agt_A", {}, page());
      expect(hasMore).toBe(false);
      expect(items.map((c) => c.userId)).toEqual(["u1", "u2"]);
      expect(items[0]).toEqual({
        ...a,
        id: expect.stringMatching(/^conv_/),
        messageCount: 4,
        createdAt: first.user.createdAt,
        lastMessageAt: last.reply.createdAt,
      });
      const messages = await store.listMessages("acct_A", "agt_A", { userId: "u1", roomId: "r1" }, page());
      expect(new Set(messages.items.map((m) => m.conversationId))).toEqual(new Set([items[0]!.id]));

      expect((await store.listConversations("acct_A", "agt_A", { userId: "u2" }, page())).items).toHaveLength(
        1,
      );
      expect((await store.listConversations("acct_A", "agt_A", { roomId: "r1" }, page())).items).toHaveLength(
        2,
      );
      expect((await store.listConversations("acct_A", "agt_A", { roomId: "r2" }, page())).items).toEqual([]);
      expect((await store.listConversations("acct_B", "agt_A", {}, page())).items).toEqual([]);
    });

    it("pages conversations with cursors either way, and refuses another agent's conversation as a cursor", async () => {
      const store = await fresh();
      for (let i = 0; i < 5; i++) await storeExchange(store, key({ userId: `u${i}` }), `q${i}`, `a${i}`);
      const newest = await store.listConversations("acct_A", "agt_A", {}, page({ limit: 2 }));
      expect(newest.items.map((c) => c.userId)).toEqual(["u4", "u3"]);
      expect(newest.hasMore).toBe(true);
      const next = await store.listConversations(
        "acct_A",
        "agt_A",
        {},
        page({ limit: 2, before: newest.items[1]!.id }),
      );
      expect(next.items.map((c) => c.userId)).toEqual(["u2", "u1"]);
      const oldest = await store.listConversations("acct_A", "agt_A", {}, page({ limit: 10, order: "asc" }));
      expect(oldest.items.map((c) => c.userId)).toEqual(["u0", "u1", "u2", "u3", "u4"]);
      const above = await store.listConversations(
        "acct_A",
        "agt_A",
        {},
        page({ limit: 2, after: oldest.items[0]!.id, order: "desc" }),
      );
      expect(above.items.map((c) => c.userId)).toEqual(["u2", "u1"]);
      expect(above.hasMore).toBe(true);

      await storeExchange(store, key({ agentId: "agt_B", userId: "z" }), "q", "a");
      const foreign = (await store.listConversations("acct_A", "agt_B", {}, page())).items[0]!.id;
      await expect(
        store.listConversations("acct_A", "agt_A", {}, page({ before: foreign })),
      ).rejects.toMatchObject({ code: "INVALID_REQUEST" });
      await expect(
        store.listConversations("acct_A", "agt_A", {}, page({ after: "conv_01JAAAAAAAAAAAAAAAAAAAAAAA" })),
      ).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    });

    it("pages one conversation by its cursor either way while the agent's other conversations are newer", async () => {
      const store = await fresh();
      const mine = key({ userId: "u1", roomId: "r1" });
      for (let n = 1; n <= 5; n++) await storeExchange(store, mine, `q${n}`, `a${n}`);
      for (let n = 1; n <= 30; n++) await storeExchange(store, key({ userId: `other${n}` }), "x", "y");
      const conversationId = (await store.listMessages("acct_A", "agt_A", { userId: "u1" }, page())).items[0]!
        .conversationId;
      const walk = async (order: "asc" | "desc") => {
        const seen: string[] = [];
        let cursor: string | null = null;
        for (;;) {
          const p = page({
            limit: 4,
            order,
            ...(cursor === null ? {} : order === "desc" ? { before: cursor } : { after: cursor }),
          });
          const result = await store.listMessages("acct_A", "agt_A", { conversationId }, p);
          seen.push(...result.items.map((m) => m.text));
          if (!result.hasMore) return seen;
          cursor = result.items.at(-1)!.id;
        }
      };
      const oldestFirst = ["q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4", "q5", "a5"];
      expect(await walk("asc")).toEqual(oldestFirst);
      expect(await walk("desc")).toEqual([...oldestFirst].reverse());
    });

    it("lists an agent's messages, both roles, filtered as asked, paged by cursor in either order", async () => {
      const store = await fresh();
      const texts: string[] = [];
      const k = (userId: string, roomId: string) => key({ userId, roomId });
      for (const [userId, roomId, n] of [
        ["u1", "r1", 1],
        ["u1", "r2", 2],
        ["u2", "r1", 3],
        ["u1", "r1", 4],
      ] as const) {
        await storeExchange(store, k(userId, roomId), `q${n}`, `a${n}`);
        texts.push(`q${n}`, `a${n}`);
      }
      await storeExchange(
        store,
        key({ agentId: "agt_other", userId: "u1", roomId: "r1" }),
        "other",
        "other'",
      );

      const all = await store.listMessages("acct_A", "agt_A", {}, page({ limit: 100 }));
      expect(all.items.map((m) => m.text)).toEqual([...texts].reverse());
      expect(all.items.map((m) => m.role).slice(0, 2)).toEqual(["assistant", "user"]);
      const text = async (filter: Record<string, string>, p = page({ limit: 100, order: "asc" })) =>
        (await store.listMessages("acct_A", "agt_A", filter, p)).items.map((m) => m.text);
      expect(await text({ userId: "u1" })).toEqual(["q1", "a1", "q2", "a2", "q4", "a4"]);
      expect(await text({ roomId: "r1" })).toEqual(["q1", "a1", "q3", "a3", "q4", "a4"]);
      expect(await text({ userId: "u1", roomId: "r1" })).toEqual(["q1", "a1", "q4", "a4"]);
      const conversationId = all.items.find((m) => m.text === "q4")!.conversationId;
      expect(await text({ conversationId })).toEqual(["q1", "a1", "q4", "a4"]);

      // Pages of three, newest first, following each page's last id with `before`.
      const seen: string[] = [];
      let before: string | null = null;
      for (;;) {
        const next = await store.listMessages("acct_A", "agt_A", {}, page({ limit: 3, before }));
        seen.push(...next.items.map((m) => m.text));
        if (!next.hasMore) break;
        before = next.items.at(-1)!.id;
      }
      expect(seen).toEqual([...texts].reverse());
      // Oldest first with `after`.
      const ascending: string[] = [];
      let after: string | null = null;
      for (;;) {
        const next = await store.listMessages("acct_A", "agt_A", {}, page({ limit: 3, after, order: "asc" }));
        ascending.push(...next.items.map((m) => m.text));
        if (!next.hasMore) break;
        after = next.items.at(-1)!.id;
      }
      expect(ascending).toEqual(texts);
      // `before` in ascending order: the items nearest below the cursor, presented oldest first.
      const cursor = all.items.find((m) => m.text === "q3")!.id;
      expect(await text({}, page({ limit: 2, before: cursor, order: "asc" }))).toEqual(["q2", "a2"]);
      expect(await text({}, page({ limit: 2, after: cursor, order: "desc" }))).toEqual(["q4", "a3"]);

      const otherAgent = (await store.listMessages("acct_A", "agt_other", {}, page())).items[0]!;
      await expect(
        store.listMessages("acct_A", "agt_A", {}, page({ before: otherAgent.id })),
      ).rejects.toMatchObject({ code: "INVALID_REQUEST" });
      await expect(
        store.listMessages("acct_A", "agt_A", { conversationId: otherAgent.conversationId }, page()),
      ).rejects.toMatchObject({ code: "CONVERSATION_NOT_FOUND" });
      expect((await store.listMessages("acct_B", "agt_A", {}, page())).items).toEqual([]);
    });

    it("keeps each message's public JSON with its turn: the text its row presents, in every page of the list", async () => {
      const store = await fresh();
      const k = key({ userId: "u1", roomId: "r1" });
      const stored = exchangesOfEveryKind(k);
      for (const ex of stored)
        expect(await store.saveExchange(ex, completedCall(ex.key, { id: ex.reply.id }))).toBe(true);
      await storeExchange(store, key({ agentId: "agt_other" }), "other agent", "not listed");
      const pages = [
        page({ limit: 100 }),
        page({ limit: 100, order: "asc" }),
        page({ limit: 5 }),
        page({ limit: 3, order: "asc" }),
      ];
      for (const p of pages) {
        for (const filter of [{}, { userId: "u1" }, { roomId: "" }]) {
          const records = await store.listMessages("acct_A", "agt_A", filter, p);
          const texts = await store.listMessageTexts("acct_A", "agt_A", filter, p);
          expect(texts).toEqual({ items: records.items.map(storedMessageJson), hasMore: records.hasMore });
        }
      }
      const all = await store.listMessageTexts("acct_A", "agt_A", {}, page({ limit: 100, order: "asc" }));
      expect(all.items).toHaveLength(2 * stored.length);
      const messages = all.items.map((text) => JSON.parse(text) as Record<string, unknown>);
      expect(messages.map((m) => m.id)).toEqual(stored.flatMap((ex) => [ex.user.id, ex.reply.id]));
      const tools = stored[1]!;
      const conversationId = messages[2]!.conversationId;
      expect(Object.keys(messages[0]!)).toEqual([
        "id",
        "agentId",
        "conversationId",
        "userId",
        "roomId",
        "role",
        "text",
        "createdAt",
      ]);
      expect(messages[0]).toMatchObject({ userId: null, roomId: null, role: "user", text: "hello" });
      expect(all.items[3]).toBe(
        JSON.stringify({
          id: tools.reply.id,
          agentId: "agt_A",
          conversationId,
          userId: "u1",
          roomId: "r1",
          role: "assistant",
          text: "noon, and 4",
          model: "gpt-test",
          modelProvider: "openai",
          finishReason: "stop",
          usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
          latencyMs: 42,
          createdAt: tools.reply.createdAt,
          toolCalls: [
            {
              id: "call_1",
              name: "time__now",
              arguments: { zone: "Europe/Paris" },
              ok: true,
              output: "12:00 ✓",
            },
            {
              id: "call_2",
              name: "calc__evaluate",
              arguments: '{"expression": ',
              ok: false,
              error: "Not JSON.",
            },
            { id: "call_3", name: "calc__evaluate", arguments: "", ok: true, output: "" },
            {
              id: "call_4",
              name: "web__fetch",
              arguments: { url: "https://a.test" },
              ok: true,
              output: "not json",
            },
          ],
        }),
      );
      expect(messages[5]).toMatchObject({
        citations: [
          { documentId: "doc_01JAAAAAAAAAAAAAAAAAAAAAAA", chunk: 3, score: 1 },
          { documentId: "doc_01JBBBBBBBBBBBBBBBBBBBBBBB", chunk: 0, score: 0.1 + 0.2 },
        ],
      });
      expect(messages[7]).toMatchObject({ finishReason: null });
      expect(messages[9]).toMatchObject({ roomId: null, text: "done in the background" });
      // The lone surrogate as the store gives it back (one or more U+FFFD, by driver), the rest as written.
      expect(messages[10]!.text).toBe((await store.getMessage("acct_A", "agt_A", stored[5]!.user.id))!.text);
      expect(String(messages[10]!.text).replace(/\ufffd+/, "\ufffd")).toBe(
        stored[5]!.user.text.replace("\ud800", "\ufffd"),
      );
      expect(messages[11]!.text).toBe(stored[5]!.reply.text);
      // A cursor of another agent and another agent's conversation are refused as for the records.
      const otherAgent = (await store.listMessages("acct_A", "agt_other", {}, page())).items[0]!;
      await expect(
        store.listMessageTexts("acct_A", "agt_A", {}, page({ before: otherAgent.id })),
      ).rejects.toMatchObject({ code: "INVALID_REQUEST" });
      await expect(
        store.listMessageTexts("acct_A", "agt_A", { conversationId: otherAgent.conversationId }, page()),
      ).rejects.toMatchObject({ code: "CONVERSATION_NOT_FOUND" });
    });

    it("reads one message of the agent, and nothing of another agent's or account's", async () => {
      const store = await fresh();
      const ex = await storeExchange(store, key({ userId: "u1" }), "q", "a");
      const message = await store.getMessage("acct_A", "agt_A", ex.reply.id);
      expect(message).toMatchObject({ id: ex.reply.id, role: "assistant", text: "a", finishReason: "stop" });
      expect(await store.getMessage("acct_A", "agt_B", ex.reply.id)).toBeNull();
      expect(await store.getMessage("acct_B", "agt_A", ex.reply.id)).toBeNull();
      expect(await store.getMessage("acct_A", "agt_A", "msg_01JAAAAAAAAAAAAAAAAAAAAAAA")).toBeNull();
    });

    it("remembers that a reply was a background message's, and whether a fallback wrote it", async () => {
      const store = await fresh();
      const ex = exchange(key({ userId: "u1" }), "q", "a");
      ex.reply.background = true;
      ex.reply.fallback = true;
      expect(await store.saveExchange(ex, completedCall(ex.key, { id: ex.reply.id }))).toBe(true);
      expect(await store.getMessage("acct_A", "agt_A", ex.reply.id)).toMatchObject({
        background: true,
        fallback: true,
      });
      expect(await store.getMessage("acct_A", "agt_A", ex.user.id)).toMatchObject({
        background: false,
        fallback: false,
      });
      const plain = await storeExchange(store, key({ userId: "u1" }), "q2", "a2");
      expect(await store.getMessage("acct_A", "agt_A", plain.reply.id)).toMatchObject({
        background: false,
        fallback: false,
      });
      const listed = (await store.listMessages("acct_A", "agt_A", {}, page())).items;
      expect(listed.filter((turn) => turn.background).map((turn) => turn.id)).toEqual([ex.reply.id]);
    });

    it("deletes one conversation with its messages, from every read and every later prompt", async () => {
      const store = await fresh();
      const gone = key({ userId: "u1" });
      const kept = key({ userId: "u2" });
      await storeExchange(store, gone, "q1", "a1");
      await storeExchange(store, gone, "q2", "a2");
      await storeExchange(store, kept, "q", "a");
      expect(await history(store, gone)).toHaveLength(4);
      const id = (await store.listConversations("acct_A", "agt_A", { userId: "u1" }, page())).items[0]!.id;

      expect(await store.deleteConversation("acct_A", "agt_B", id)).toBeNull();
      expect(await store.deleteConversation("acct_B", "agt_A", id)).toBeNull();
      expect(await store.deleteConversation("acct_A", "agt_A", id)).toBe(4);
      expect(await history(store, gone)).toEqual([]);
      expect((await store.listMessages("acct_A", "agt_A", {}, page())).items.map((m) => m.text)).toEqual([
        "a",
        "q",
      ]);
      expect(await store.deleteConversation("acct_A", "agt_A", id)).toBeNull();
      // The next exchange of the same user and room starts a new conversation.
      await storeExchange(store, gone, "q3", "a3");
      const again = (await store.listConversations("acct_A", "agt_A", { userId: "u1" }, page())).items[0]!;
      expect(again.id).not.toBe(id);
      expect(again.messageCount).toBe(2);
    });

    it("exports a user's messages across every agent of the account, oldest first, page after page", async () => {
      const store = await fresh();
      const expected: string[] = [];
      for (let i = 0; i < 7; i++) {
        await storeExchange(
          store,
          key({ agentId: i % 2 ? "agt_A" : "agt_B", userId: "u1", roomId: `r${i % 3}` }),
          `q${i}`,
          `a${i}`,
        );
        expected.push(`q${i}`, `a${i}`);
      }
      await storeExchange(store, key({ userId: "u2" }), "not u1", "not u1'");
      await storeExchange(
        store,
        key({ accountId: "acct_B", userId: "u1" }),
        "other account",
        "other account'",
      );

      const exported: { text: string; agentId: string }[] = [];
      let cursor: string | null = null;
      let reads = 0;
      do {
        const next = await store.exportUser("acct_A", "u1", cursor, 4);
        expect(next.turns.length).toBeLessThanOrEqual(4);
        exported.push(...next.turns.map((t) => ({ text: t.text, agentId: t.agentId })));
        cursor = next.next;
        reads += 1;
      } while (cursor !== null);
      expect(exported.map((t) => t.text)).toEqual(expected);
      expect(new Set(exported.map((t) => t.agentId))).toEqual(new Set(["agt_A", "agt_B"]));
      expect(reads).toBe(4);
      expect(await store.exportUser("acct_A", "nobody", null, 4)).toEqual({ turns: [], next: null });
    });

    it("erases a user everywhere in the account in one go, keeps their calls unattributed, and is idempotent", async () => {
      const store = await fresh();
      const u1a = key({ agentId: "agt_A", userId: "u1", roomId: "r1" });
      const u1b = key({ agentId: "agt_B", userId: "u1" });
      await storeExchange(store, u1a, "q1", "a1");
      await storeExchange(store, u1b, "q2", "a2");
      await storeExchange(store, key({ userId: "u2" }), "keep", "keep'");
      await storeExchange(store, key({ accountId: "acct_B", userId: "u1" }), "other", "other'");
      await store.recordCall(completedCall(u1a, { outcome: "failed", errorCode: "MODEL_ERROR" }));
      // Replies still waiting for the webhooks relay: the user's go with the rest of their words.
      const waiting = [
        outboxEvent(u1a),
        outboxEvent(key({ userId: "u2" })),
        outboxEvent(key({ accountId: "acct_B", userId: "u1" })),
      ];
      const held = exchange(u1b, "q3", "a3");
      expect(await store.saveExchange(held, completedCall(u1b, { id: held.reply.id }), waiting)).toBe(true);

      expect(await store.eraseUser("acct_A", "u1")).toBe(6);
      expect((await store.pendingEvents(10)).map((event) => event.id)).toEqual([
        waiting[1]!.id,
        waiting[2]!.id,
      ]);
      expect(await history(store, u1a)).toEqual([]);
      expect(await history(store, u1b)).toEqual([]);
      expect((await store.exportUser("acct_A", "u1", null, 100)).turns).toEqual([]);
      expect((await store.listConversations("acct_A", "agt_A", { userId: "u1" }, page())).items).toEqual([]);
      const calls = await store.listCalls("acct_A", "agt_A");
      expect(calls).toHaveLength(3);
      expect(calls.filter((c) => c.userId === "u1")).toEqual([]);
      expect(await history(store, key({ userId: "u2" }))).toEqual(["keep", "keep'"]);
      expect((await store.exportUser("acct_B", "u1", null, 100)).turns).toHaveLength(2);
      expect(await store.eraseUser("acct_A", "u1")).toBe(0);
    });

    usageContract(fresh);
    runsContract(fresh);
    keysContract(fresh);
    fireStartsContract(fresh);
  });
}

/** A send as the rollups see it: its call record, stored with its exchange when it completed. */
async function send(store: ConversationStore, record: CallRecord): Promise<void> {
  if (record.outcome === "completed") {
    const ex = exchange(record, "q", "a");
    expect(await store.saveExchange(ex, { ...record, id: ex.reply.id })).toBe(true);
  } else {
    expect(await store.recordCall(record)).toBe(true);
  }
}

/** A call at a given time; completed unless told otherwise. */
function sendAt(createdAt: string, overrides: Partial<CallRecord> = {}): CallRecord {
  return completedCall(key(), { createdAt, latencyMs: 100, firstTokenMs: 40, ...overrides });
}

function failedAt(createdAt: string, overrides: Partial<CallRecord> = {}): CallRecord {
  return sendAt(createdAt, {
    outcome: "failed",
    errorCode: "MODEL_ERROR",
    errorMessage: "The model refused.",
    inputTokens: 0,
    outputTokens: 0,
    firstTokenMs: null,
    ...overrides,
  });
}

/** The percentile a sketch approximates: the value at rank floor(q (n - 1)) of the sorted values. */
function exactPercentile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))]!;
}

function expectWithinAccuracy(actual: number | null, exact: number | null, what: string): void {
  if (exact === null) {
    expect(actual, what).toBeNull();
    return;
  }
  expect(actual, what).not.toBeNull();
  // A hair over the bound for floating point at bin edges.
  expect(Math.abs(actual! - exact), `${what}: ${actual} against ${exact}`).toBeLessThanOrEqual(
    exact * PERCENTILE_RELATIVE_ACCURACY * (1 + 1e-9),
  );
}

interface ExpectedGroup {
  keys: Partial<Record<UsageDimension, string>>;
  messages: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  latencies: number[];
  firstTokens: number[];
}

const DIMENSION_OF: Record<UsageDimension, (c: CallRecord) => string> = {
  agentId: (c) => c.agentId,
  userId: (c) => c.userId,
  model: (c) => c.model ?? "",
  apiKeyId: (c) => c.apiKeyId ?? "",
};

/** The figures of the calls, grouped, worked out from the records themselves. */
function groupCalls(calls: readonly CallRecord[], groupBy: readonly UsageDimension[]): ExpectedGroup[] {
  const groups = new Map<string, ExpectedGroup>();
  for (const c of calls) {
    const keys: Partial<Record<UsageDimension, string>> = {};
    for (const dimension of groupBy) keys[dimension] = DIMENSION_OF[dimension](c);
    const id = JSON.stringify(keys);
    let group = groups.get(id);
    if (!group) {
      group = {
        keys,
        messages: 0,
        errors: 0,
        inputTokens: 0,
        outputTokens: 0,
        latencies: [],
        firstTokens: [],
      };
      groups.set(id, group);
    }
    group.messages += 1;
    if (c.outcome === "failed") group.errors += 1;
    group.inputTokens += c.inputTokens;
    group.outputTokens += c.outputTokens;
    if (c.outcome === "completed") {
      group.latencies.push(c.latencyMs);
      group.firstTokens.push(c.firstTokenMs ?? c.latencyMs);
    }
  }
  return [...groups.values()];
}

function keysOf(group: UsageGroup): Partial<Record<UsageDimension, string>> {
  const { figures: _figures, ...keys } = group;
  return keys;
}

/** Asserts that the answer's groups are exactly those of the calls: counts equal, percentiles within 1 %. */
function expectGroups(
  actual: readonly UsageGroup[],
  calls: readonly CallRecord[],
  groupBy: readonly UsageDimension[],
  what: string,
): void {
  const expected = groupCalls(calls, groupBy);
  if (groupBy.length === 0 && expected.length === 0) {
    expected.push({
      keys: {},
      messages: 0,
      errors: 0,
      inputTokens: 0,
      outputTokens: 0,
      latencies: [],
      firstTokens: [],
    });
  }
  const byKeys = new Map(expected.map((group) => [JSON.stringify(group.keys), group]));
  expect(actual.map((group) => JSON.stringify(keysOf(group))).sort(), `${what}: the groups`).toEqual(
    [...byKeys.keys()].sort(),
  );
  for (const group of actual) {
    const id = JSON.stringify(keysOf(group));
    const want = byKeys.get(id)!;
    const { figures } = group;
    expect(
      [figures.messages, figures.errors, figures.inputTokens, figures.outputTokens],
      `${what} ${id}: messages, errors, tokens`,
    ).toEqual([want.messages, want.errors, want.inputTokens, want.outputTokens]);
    for (const q of [0.5, 0.95] as const) {
      const name = q === 0.5 ? "p50" : "p95";
      expectWithinAccuracy(
        figures.latencyMs[name],
        exactPercentile(want.latencies, q),
        `${what} ${id} latency ${name}`,
      );
      expectWithinAccuracy(
        figures.timeToFirstTokenMs[name],
        exactPercentile(want.firstTokens, q),
        `${what} ${id} time to first token ${name}`,
      );
    }
  }
}

/** Asserts a whole answer against the calls: every bucket of the range and the totals. */
function expectReport(
  report: UsageReport,
  calls: readonly CallRecord[],
  request: UsageRequest,
  what: string,
): void {
  const groupBy = (request.groupBy ?? []) as UsageDimension[];
  const chosen = calls.filter(
    (c) =>
      c.accountId === request.accountId &&
      (request.agentId === undefined || c.agentId === request.agentId) &&
      (request.userId === undefined || c.userId === request.userId) &&
      c.createdAt >= report.from &&
      c.createdAt < report.to,
  );
  for (const bucket of report.buckets) {
    const inBucket = chosen.filter((c) => c.createdAt >= bucket.start && c.createdAt < bucket.end);
    expectGroups(bucket.groups, inBucket, groupBy, `${what}, bucket ${bucket.start}`);
  }
  expectGroups(report.totals, chosen, groupBy, `${what}, totals`);
}

/** A small deterministic generator, so the data sets are the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

/** Calls spread over agents, users, models, keys, outcomes and hours of two days. */
function mixedCalls(count: number, seed: number): CallRecord[] {
  const next = random(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const start = Date.parse("2026-03-10T20:00:00.000Z");
  return Array.from({ length: count }, () => {
    const at = new Date(start + Math.floor(next() * 8 * 3_600_000)).toISOString();
    const agentId = pick(["agt_A", "agt_B", "agt_C"]);
    const userId = pick(["u1", "u2", ""]);
    const model = pick(["gpt-a", "gpt-b"]);
    const apiKeyId = pick(["key_1", "key_2", null]);
    const outcome = pick(["completed", "completed", "completed", "failed", "cancelled"] as const);
    const latencyMs = Math.round(20 + next() ** 3 * 5000);
    const k = key({ agentId, userId });
    if (outcome === "completed") {
      return completedCall(k, {
        createdAt: at,
        model,
        apiKeyId,
        latencyMs,
        firstTokenMs: Math.round(latencyMs * next()),
        inputTokens: Math.floor(next() * 100),
        outputTokens: Math.floor(next() * 50),
      });
    }
    return completedCall(k, {
      createdAt: at,
      model,
      apiKeyId,
      outcome,
      errorCode: outcome === "failed" ? "AGENT_UNAVAILABLE" : null,
      errorMessage: outcome === "failed" ? "The provider is overloaded." : null,
      latencyMs,
      firstTokenMs: null,
      inputTokens: 0,
      outputTokens: 0,
    });
  });
}

async function invalidField(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe("INVALID_REQUEST");
  return (error as AppError).details?.[0]?.field;
}

function usageContract(fresh: () => Promise<ConversationStore>): void {
  describe("usage", () => {
    const hourRange = { from: new Date("2026-03-10T10:00:00Z"), to: new Date("2026-03-10T12:00:00Z") };

    it("counts every send by hour and by day: failed ones as errors, cancelled ones not; percentiles of completed sends", async () => {
      const store = await fresh();
      const calls = [
        sendAt("2026-03-10T10:15:00.000Z", {
          latencyMs: 100,
          firstTokenMs: 40,
          inputTokens: 10,
          outputTokens: 5,
        }),
        sendAt("2026-03-10T10:45:00.000Z", {
          latencyMs: 300,
          firstTokenMs: 55,
          inputTokens: 12,
          outputTokens: 6,
        }),
        failedAt("2026-03-10T11:05:00.000Z", { latencyMs: 20 }),
        sendAt("2026-03-10T11:10:00.000Z", {
          outcome: "cancelled",
          latencyMs: 900,
          firstTokenMs: 30,
          inputTokens: 0,
          outputTokens: 0,
        }),
        sendAt("2026-03-11T01:00:00.000Z", {
          latencyMs: 0,
          firstTokenMs: 0,
          inputTokens: 3,
          outputTokens: 0,
        }),
        sendAt("2026-03-10T10:30:00.000Z", { accountId: "acct_B" }),
      ];
      for (const c of calls) await send(store, c);

      const hours = await store.getUsage({ accountId: "acct_A", granularity: "hour", ...hourRange });
      expect(hours.from).toBe("2026-03-10T10:00:00.000Z");
      expect(hours.to).toBe("2026-03-10T12:00:00.000Z");
      expect(hours.granularity).toBe("hour");
      expect(hours.buckets.map((b) => [b.start, b.end])).toEqual([
        ["2026-03-10T10:00:00.000Z", "2026-03-10T11:00:00.000Z"],
        ["2026-03-10T11:00:00.000Z", "2026-03-10T12:00:00.000Z"],
      ]);
      expect(hours.buckets[0]!.groups).toEqual([
        {
          figures: {
            messages: 2,
            errors: 0,
            inputTokens: 22,
            outputTokens: 11,
            latencyMs: { p50: expect.closeTo(100, 0), p95: expect.closeTo(100, 0) },
            timeToFirstTokenMs: { p50: expect.closeTo(40, 0), p95: expect.closeTo(40, 0) },
          },
        },
      ]);
      // A failed and a cancelled send: two messages, one error, no percentiles.
      expect(hours.buckets[1]!.groups).toEqual([
        {
          figures: {
            messages: 2,
            errors: 1,
            inputTokens: 0,
            outputTokens: 0,
            latencyMs: { p50: null, p95: null },
            timeToFirstTokenMs: { p50: null, p95: null },
          },
        },
      ]);
      expect(hours.totals[0]!.figures).toMatchObject({
        messages: 4,
        errors: 1,
        inputTokens: 22,
        outputTokens: 11,
      });
      expectReport(hours, calls, { accountId: "acct_A", granularity: "hour" }, "hours");

      const days = await store.getUsage({
        accountId: "acct_A",
        granularity: "day",
        from: new Date("2026-03-10T00:00:00Z"),
        to: new Date("2026-03-12T00:00:00Z"),
      });
      expect(days.buckets.map((b) => b.groups[0]!.figures.messages)).toEqual([4, 1]);
      // A reply in under a millisecond counts as 0 ms.
      expect(days.buckets[1]!.groups[0]!.figures.latencyMs).toEqual({ p50: 0, p95: 0 });
      expectReport(days, calls, { accountId: "acct_A", granularity: "day" }, "days");
      // Day is the default granularity.
      const byDefault = await store.getUsage({
        accountId: "acct_A",
        from: new Date("2026-03-10T00:00:00Z"),
        to: new Date("2026-03-12T00:00:00Z"),
      });
      expect(byDefault).toEqual(days);
    });

    it("has every bucket of the range, zero-filled, from rounded down and to up; to may lie in the future", async () => {
      const store = await fresh();
      await send(store, sendAt("2026-03-10T10:15:00.000Z"));
      const hours = await store.getUsage({
        accountId: "acct_A",
        granularity: "hour",
        from: new Date("2026-03-10T09:30:00Z"),
        to: new Date("2026-03-10T12:00:00.001Z"),
      });
      expect(hours.from).toBe("2026-03-10T09:00:00.000Z");
      expect(hours.to).toBe("2026-03-10T13:00:00.000Z");
      expect(hours.buckets.map((b) => b.groups[0]!.figures.messages)).toEqual([0, 1, 0, 0]);
      expect(hours.buckets[0]!.groups).toEqual([
        {
          figures: {
            messages: 0,
            errors: 0,
            inputTokens: 0,
            outputTokens: 0,
            latencyMs: { p50: null, p95: null },
            timeToFirstTokenMs: { p50: null, p95: null },
          },
        },
      ]);
      // Grouped, a bucket without sends has no groups.
      const grouped = await store.getUsage({
        accountId: "acct_A",
        granularity: "hour",
        from: new Date("2026-03-10T09:30:00Z"),
        to: new Date("2026-03-10T12:00:00Z"),
        groupBy: ["model"],
      });
      expect(grouped.buckets.map((b) => b.groups.length)).toEqual([0, 1, 0]);
      expect(grouped.totals.map((g) => [g.model, g.figures.messages])).toEqual([["gpt-test", 1]]);

      const now = new Date();
      const ahead = await store.getUsage({
        accountId: "acct_A",
        granularity: "day",
        from: new Date(now.getTime() - 86_400_000),
        to: new Date(now.getTime() + 3 * 86_400_000),
      });
      expect(ahead.buckets).toHaveLength(5);
      expect(Date.parse(ahead.to)).toBeGreaterThan(now.getTime());

      // Neither end given: the 7 days up to now.
      const at = new Date("2026-03-17T10:15:00Z");
      const week = await store.getUsage({ accountId: "acct_A", granularity: "hour", now: at });
      expect(week.from).toBe("2026-03-10T10:00:00.000Z");
      expect(week.to).toBe("2026-03-17T11:00:00.000Z");
      expect(week.buckets).toHaveLength(7 * 24 + 1);
      expect(week.totals[0]!.figures.messages).toBe(1);
      const days = await store.getUsage({ accountId: "acct_A", now: at });
      expect([days.granularity, days.from, days.to, days.buckets.length]).toEqual([
        "day",
        "2026-03-10T00:00:00.000Z",
        "2026-03-18T00:00:00.000Z",
        8,
      ]);
    });

    it("groups by every dimension and combination, filters by agent and user, and totals as it groups", async () => {
      const store = await fresh();
      const calls = mixedCalls(300, 11);
      for (const c of calls) await send(store, c);
      await send(store, sendAt("2026-03-10T22:00:00.000Z", { accountId: "acct_B" }));
      const groupings: UsageDimension[][] = [
        [],
        ["agentId"],
        ["userId"],
        ["model"],
        ["apiKeyId"],
        ["agentId", "model"],
        ["userId", "apiKeyId"],
        ["agentId", "userId", "model", "apiKeyId"],
      ];
      const filters: Pick<UsageRequest, "agentId" | "userId">[] = [
        {},
        { agentId: "agt_B" },
        { userId: "u1" },
        { userId: "" },
        { agentId: "agt_A", userId: "u2" },
        { agentId: "agt_unknown" },
      ];
      for (const granularity of ["hour", "day"] as const) {
        for (const groupBy of groupings) {
          for (const filter of filters) {
            const request: UsageRequest = {
              accountId: "acct_A",
              granularity,
              from: new Date("2026-03-10T19:00:00Z"),
              to: new Date("2026-03-11T05:00:00Z"),
              groupBy,
              ...filter,
            };
            const report = await store.getUsage(request);
            expectReport(report, calls, request, `${granularity} by [${groupBy}] ${JSON.stringify(filter)}`);
          }
        }
      }
      // The order of groupBy does not matter, nor does repeating a dimension.
      const range = { from: new Date("2026-03-10T00:00:00Z"), to: new Date("2026-03-12T00:00:00Z") };
      expect(
        await store.getUsage({ accountId: "acct_A", ...range, groupBy: ["model", "agentId", "model"] }),
      ).toEqual(await store.getUsage({ accountId: "acct_A", ...range, groupBy: ["agentId", "model"] }));
    });

    it("answers percentiles within 1 % of the exact percentiles of the recorded values", async () => {
      const store = await fresh();
      const next = random(5);
      const calls: CallRecord[] = [];
      for (let i = 0; i < 400; i++) {
        // Heavy-tailed, from under a millisecond to a minute.
        const latencyMs = Math.round(Math.exp(next() * 11) - 1);
        calls.push(
          completedCall(key({ agentId: i % 3 === 0 ? "agt_A" : "agt_B", userId: `u${i % 4}` }), {
            createdAt: new Date(Date.parse("2026-03-10T08:00:00Z") + i * 97_000).toISOString(),
            latencyMs,
            firstTokenMs: Math.round(latencyMs * next() * next()),
          }),
        );
      }
      for (const c of calls) await send(store, c);
      for (const request of [
        {
          accountId: "acct_A",
          granularity: "hour",
          from: new Date("2026-03-10T08:00:00Z"),
          to: new Date("2026-03-10T20:00:00Z"),
        },
        {
          accountId: "acct_A",
          granularity: "day",
          from: new Date("2026-03-10T00:00:00Z"),
          to: new Date("2026-03-11T00:00:00Z"),
        },
        {
          accountId: "acct_A",
          granularity: "day",
          from: new Date("2026-03-10T00:00:00Z"),
          to: new Date("2026-03-11T00:00:00Z"),
          groupBy: ["agentId", "userId"],
        },
      ] satisfies UsageRequest[]) {
        const report = await store.getUsage(request);
        expectReport(report, calls, request, `${request.granularity} ${request.groupBy ?? ""}`);
      }
    });

    it("keeps an erased user's counts, unattributed, in every bucket, and erases nobody else's", async () => {
      const store = await fresh();
      const calls = mixedCalls(200, 23);
      for (const c of calls) await send(store, c);
      const range = {
        accountId: "acct_A",
        from: new Date("2026-03-10T19:00:00Z"),
        to: new Date("2026-03-11T05:00:00Z"),
      };
      const before = await store.getUsage({ ...range, granularity: "hour" });

      await store.eraseUser("acct_A", "u1");
      const erased = calls.map((c) => (c.userId === "u1" ? { ...c, userId: "" } : c));
      for (const granularity of ["hour", "day"] as const) {
        for (const groupBy of [
          ["userId"],
          ["agentId", "userId", "model", "apiKeyId"],
        ] as UsageDimension[][]) {
          const request = { ...range, granularity, groupBy };
          const report = await store.getUsage(request);
          expectReport(report, erased, request, `${granularity} by [${groupBy}] after erasing u1`);
          expect(report.totals.some((g) => g.userId === "u1")).toBe(false);
        }
      }
      expect(
        (await store.getUsage({ ...range, userId: "u1", granularity: "hour" })).totals[0]!.figures.messages,
      ).toBe(0);
      // Ungrouped, nothing changed.
      expect(await store.getUsage({ ...range, granularity: "hour" })).toEqual(before);
      // Erasing again changes nothing.
      const once = await store.getUsage({ ...range, granularity: "day", groupBy: ["userId"] });
      await store.eraseUser("acct_A", "u1");
      expect(await store.getUsage({ ...range, granularity: "day", groupBy: ["userId"] })).toEqual(once);
    });

    it("purges an agent's usage from every level, the account's figures becoming exactly those of the others", async () => {
      const store = await fresh();
      const reference = await fresh();
      const calls = mixedCalls(200, 37);
      // Hours where only the purged agent sent.
      calls.push(
        sendAt("2026-03-11T06:30:00.000Z", { agentId: "agt_A" }),
        failedAt("2026-03-11T06:40:00.000Z", { agentId: "agt_A" }),
      );
      for (const c of calls) await send(store, c);
      const kept = calls.filter((c) => c.agentId !== "agt_A");
      for (const c of kept) await send(reference, c);

      await store.purgeAgent("acct_A", "agt_A");
      const range = {
        accountId: "acct_A",
        from: new Date("2026-03-10T19:00:00Z"),
        to: new Date("2026-03-11T07:00:00Z"),
      };
      for (const granularity of ["hour", "day"] as const) {
        for (const groupBy of [[], ["agentId"], ["userId"], ["model", "apiKeyId"]] as UsageDimension[][]) {
          for (const filter of [{}, { agentId: "agt_A" }, { userId: "u2" }]) {
            const request = { ...range, granularity, groupBy, ...filter };
            const report = await store.getUsage(request);
            expect(report, `${granularity} by [${groupBy}] ${JSON.stringify(filter)}`).toEqual(
              await reference.getUsage(request),
            );
            expectReport(report, kept, request, `${granularity} by [${groupBy}] after the purge`);
          }
        }
      }
    });

    it("records many calls in one go as recordCall records each, leaving out a purged agent's", async () => {
      const store = await fresh();
      const reference = await fresh();
      await store.purgeAgent("acct_A", "agt_C");
      const calls = mixedCalls(150, 53);
      await store.recordCalls(calls);
      const kept = calls.filter((c) => c.agentId !== "agt_C");
      for (const c of kept) expect(await reference.recordCall(c)).toBe(true);

      for (const agentId of ["agt_A", "agt_B", "agt_C"]) {
        expect(await store.listCalls("acct_A", agentId)).toEqual(
          await reference.listCalls("acct_A", agentId),
        );
      }
      expect(await store.listCalls("acct_A", "agt_C")).toEqual([]);
      const range = {
        accountId: "acct_A",
        from: new Date("2026-03-10T19:00:00Z"),
        to: new Date("2026-03-11T05:00:00Z"),
      };
      for (const granularity of ["hour", "day"] as const) {
        for (const groupBy of [[], ["agentId", "userId", "model", "apiKeyId"]] as UsageDimension[][]) {
          const request = { ...range, granularity, groupBy };
          const report = await store.getUsage(request);
          expect(report).toEqual(await reference.getUsage(request));
          expectReport(report, kept, request, `${granularity} by [${groupBy}], recorded in one go`);
        }
      }
      await store.recordCalls([]);
    });

    it("refuses an empty range, too many buckets and unknown dimensions, naming the field", async () => {
      const store = await fresh();
      const at = (iso: string) => new Date(iso);
      const usage = (request: Omit<UsageRequest, "accountId">) =>
        store.getUsage({ accountId: "acct_A", ...request });
      expect(
        await invalidField(usage({ from: at("2026-03-10T10:00:00Z"), to: at("2026-03-10T10:00:00Z") })),
      ).toBe("to");
      expect(
        await invalidField(usage({ from: at("2026-03-10T10:00:00Z"), to: at("2026-03-09T10:00:00Z") })),
      ).toBe("to");
      // 31 days of hours, 400 of days, and not one more.
      expect(
        (
          await usage({
            granularity: "hour",
            from: at("2026-01-01T00:00:00Z"),
            to: at("2026-02-01T00:00:00Z"),
          })
        ).buckets,
      ).toHaveLength(744);
      expect(
        await invalidField(
          usage({
            granularity: "hour",
            from: at("2026-01-01T00:00:00Z"),
            to: at("2026-02-01T00:00:00.001Z"),
          }),
        ),
      ).toBe("to");
      expect(
        (
          await usage({
            granularity: "day",
            from: at("2026-01-01T00:00:00Z"),
            to: at("2027-02-05T00:00:00Z"),
          })
        ).buckets,
      ).toHaveLength(400);
      expect(
        await invalidField(
          usage({ granularity: "day", from: at("2026-01-01T00:00:00Z"), to: at("2027-02-06T00:00:00Z") }),
        ),
      ).toBe("to");
      // The limit is on the range asked: the last 31 days from a time within an hour are 745 hours once rounded.
      expect(
        (
          await usage({
            granularity: "hour",
            from: at("2026-01-01T00:30:00Z"),
            to: at("2026-02-01T00:30:00Z"),
          })
        ).buckets,
      ).toHaveLength(745);
      expect(await invalidField(usage({ groupBy: ["agentId", "roomId"] }))).toBe("groupBy");
      expect(await invalidField(usage({ granularity: "week" as "day" }))).toBe("granularity");
      expect(await invalidField(usage({ from: new Date(Number.NaN) }))).toBe("from");
    });
  });
}

function pendingRun(overrides: Partial<RunRecord> = {}): RunRecord {
  const createdAt = tick();
  return {
    id: newId("message"),
    accountId: "acct_A",
    agentId: "agt_A",
    userId: "u1",
    roomId: null,
    background: true,
    logged: true,
    idempotencyKey: null,
    status: "pending",
    errorCode: null,
    errorMessage: null,
    result: null,
    createdAt,
    deadlineAt: new Date(Date.parse(createdAt) + 60_000).toISOString(),
    endedAt: null,
    expiresAt: null,
    keptUntil: null,
    ...overrides,
  };
}

/** A completed run's end, with `overrides`. */
function completedEnd(overrides: Partial<RunEnd> = {}): RunEnd {
  return {
    status: "completed",
    errorCode: null,
    errorMessage: null,
    result: "{}",
    endedAt: tick(),
    expiresAt: tick(),
    keptUntil: tick(),
    ...overrides,
  };
}

function runEvents(from: number, count: number): RunEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    seq: from + i,
    type: "delta" as const,
    data: JSON.stringify({ text: `Grüße 👋 ${from + i}` }),
  }));
}

function runsContract(fresh: () => Promise<ConversationStore>): void {
  describe("message runs", () => {
    it("keeps a run's state and its numbered events, read after any number, scoped to its agent", async () => {
      const store = await fresh();
      const run = pendingRun();
      await store.startRun(run);
      expect(await store.getRun("acct_A", "agt_A", run.id)).toEqual(run);
      expect(await store.getRun("acct_B", "agt_A", run.id)).toBeNull();
      expect(await store.getRun("acct_A", "agt_B", run.id)).toBeNull();
      await store.appendRunEvents(run.id, [{ seq: 1, type: "started", data: "{}" }]);
      await store.appendRunEvents(run.id, runEvents(2, 4));
      expect(await store.runEvents(run.id, 0, 100)).toEqual([
        { seq: 1, type: "started", data: "{}" },
        ...runEvents(2, 4),
      ]);
      expect(await store.runEvents(run.id, 3, 100)).toEqual(runEvents(4, 2));
      expect(await store.runEvents(run.id, 1, 2)).toEqual(runEvents(2, 2));
      expect(await store.runEvents(run.id, 5, 100)).toEqual([]);
      const end = completedEnd({ result: '{"text":"done"}' });
      const completed = { seq: 6, type: "completed" as const, data: '{"text":"done"}' };
      expect(await store.endRun(run.id, [completed], end)).toBe(true);
      expect(await store.getRun("acct_A", "agt_A", run.id)).toEqual({ ...run, ...end });
      expect((await store.runEvents(run.id, 5, 100)).map((e) => e.type)).toEqual(["completed"]);
      // Ended once: a second end (an abandoned run's sweep racing its end) writes nothing.
      const failed = { seq: 7, type: "failed" as const, data: "{}" };
      const again = { ...end, status: "failed" as const, errorCode: "AGENT_UNAVAILABLE", errorMessage: "x" };
      expect(await store.endRun(run.id, [failed], again)).toBe(false);
      expect((await store.getRun("acct_A", "agt_A", run.id))?.status).toBe("completed");
      expect(await store.runEvents(run.id, 6, 100)).toEqual([]);
    });

    it("writes the starts, events and ends of many runs in order in one batch", async () => {
      const store = await fresh();
      const first = pendingRun({ background: false });
      const second = pendingRun();
      const end = completedEnd();
      await store.writeRuns([
        { kind: "start", run: first },
        { kind: "start", run: second },
        { kind: "events", runId: first.id, events: runEvents(1, 2) },
        { kind: "events", runId: second.id, events: runEvents(1, 1) },
        { kind: "end", runId: first.id, events: runEvents(3, 1), end },
      ]);
      expect(await store.getRun("acct_A", "agt_A", first.id)).toEqual({ ...first, ...end });
      expect(await store.runEvents(first.id, 0, 10)).toEqual(runEvents(1, 3));
      expect(await store.getRun("acct_A", "agt_A", second.id)).toEqual(second);
      await store.writeRuns([
        { kind: "events", runId: second.id, events: runEvents(2, 1) },
        // An end of a run already ended writes nothing, its events neither.
        { kind: "end", runId: first.id, events: runEvents(4, 1), end: { ...end, status: "failed" } },
      ]);
      expect(await store.runEvents(second.id, 0, 10)).toEqual(runEvents(1, 2));
      expect(await store.runEvents(first.id, 0, 10)).toEqual(runEvents(1, 3));
      expect((await store.getRun("acct_A", "agt_A", first.id))?.status).toBe("completed");
      await store.writeRuns([]);
    });

    it("renews only its holder's leases, and lets one claim only take a run whose lease expired", async () => {
      const store = await fresh();
      const input = JSON.stringify({ text: "work" });
      const held = pendingRun({ lease: { holder: "p1", expiresAt: "2026-06-01T00:00:10.000Z" }, input });
      const other = pendingRun({ lease: { holder: "p2", expiresAt: "2026-06-01T00:00:10.000Z" }, input });
      const unleased = pendingRun({ deadlineAt: "2026-01-01T00:00:00.000Z" });
      for (const run of [held, other, unleased]) await store.startRun(run);
      expect(await store.getRun("acct_A", "agt_A", held.id)).toEqual(held);
      expect(await store.getRun("acct_A", "agt_A", unleased.id)).toEqual(unleased);
      // p1 renews its own lease, not p2's.
      const renewed = await store.renewLeases("p1", [held.id, other.id], "2026-06-01T00:00:20.000Z");
      expect(renewed).toEqual([held.id]);
      expect(await store.renewLeases("p1", [], "2026-06-01T00:00:20.000Z")).toEqual([]);
      expect(await store.expiredLeases("2026-06-01T00:00:15.000Z", 10)).toEqual([
        { id: other.id, accountId: "acct_A", agentId: "agt_A" },
      ]);
      // Not expired yet: nobody takes it.
      const claim = (holder: string, now: string) => ({
        holder,
        now,
        expiresAt: "2026-06-01T00:01:00.000Z",
        deadlineAt: "2026-06-01T00:05:00.000Z",
      });
      expect(await store.claimRun(held.id, claim("p3", "2026-06-01T00:00:15.000Z"))).toBeNull();
      // Two claims at once of the expired one: one gets it.
      const claims = await Promise.all([
        store.claimRun(other.id, claim("p3", "2026-06-01T00:00:15.000Z")),
        store.claimRun(other.id, claim("p4", "2026-06-01T00:00:15.000Z")),
      ]);
      const won = claims.filter((claimed) => claimed !== null);
      expect(won).toHaveLength(1);
      expect(won[0]).toEqual({
        ...other,
        lease: { holder: won[0]!.lease!.holder, expiresAt: "2026-06-01T00:01:00.000Z" },
        deadlineAt: "2026-06-01T00:05:00.000Z",
        takeovers: 1,
      });
      expect(await store.expiredLeases("2026-06-01T00:00:15.000Z", 10)).toEqual([]);
      // The former holder's renewal fails: it lost the run.
      expect(await store.renewLeases("p2", [other.id], "2026-06-01T00:00:30.000Z")).toEqual([]);
      // Nor can it end the run: its taker does.
      expect(await store.endRun(other.id, runEvents(1, 1), completedEnd({ holder: "p2" }))).toBe(false);
      expect(await store.runEvents(other.id, 0, 10)).toEqual([]);
      // An ended run is neither renewed nor taken.
      expect(await store.endRun(held.id, [], completedEnd({ holder: "p1" }))).toBe(true);
      expect(await store.renewLeases("p1", [held.id], "2026-06-01T00:00:30.000Z")).toEqual([]);
      expect(await store.expiredLeases("2026-06-02T00:00:00.000Z", 10)).toEqual([
        { id: other.id, accountId: "acct_A", agentId: "agt_A" },
      ]);
      expect(await store.claimRun(held.id, claim("p3", "2026-06-02T00:00:00.000Z"))).toBeNull();
    });

    it("pauses a run for approval with its event, records answers once each, resumes it leased, and finds expired waits", async () => {
      const store = await fresh();
      const streamed = pendingRun({ background: false });
      await store.startRun(streamed);
      const calls = JSON.stringify([{ id: "c1", tool: "bank__transfer", arguments: "{}" }]);
      const pause = {
        pendingToolCalls: calls,
        expiresAt: "2026-06-02T00:00:00.000Z",
        deadlineAt: "2026-06-02T00:00:30.000Z",
        input: JSON.stringify({ text: "work" }),
        // The tokens spent before the pause: counted in usage with it, as tokens alone (no message).
        tokens: sendAt("2026-06-01T00:00:00.000Z", { inputTokens: 7, outputTokens: 3 }),
        events: [
          {
            id: "evt_01JPAUSE00000000000000000",
            type: "message.requires_action" as const,
            accountId: "acct_A",
            agentId: "agt_A",
            createdAt: "2026-06-01T00:00:00.000Z",
            data: { agentId: "agt_A", messageId: streamed.id },
          },
        ],
      };
      const paused = { seq: 2, type: "approval_required" as const, data: "{}" };
      await store.writeRuns([{ kind: "pause", runId: streamed.id, events: [paused], pause }]);
      const read = await store.getRun("acct_A", "agt_A", streamed.id);
      // A paused stream is a background message from then on, held by nobody, resumable from its input.
      expect(read).toEqual({
        ...streamed,
        background: true,
        deadlineAt: pause.deadlineAt,
        input: pause.input,
        approval: { pendingToolCalls: calls, expiresAt: pause.expiresAt },
      });
      expect(await store.runEvents(streamed.id, 0, 10)).toEqual([paused]);
      const usageOfDay = async () =>
        (
          await store.getUsage({
            accountId: "acct_A",
            granularity: "day",
            from: new Date("2026-06-01T00:00:00Z"),
            to: new Date("2026-06-02T00:00:00Z"),
          })
        ).totals[0]!.figures;
      expect(await usageOfDay()).toMatchObject({ messages: 0, errors: 0, inputTokens: 7, outputTokens: 3 });
      // ListRuns tells a paused run apart from one being generated.
      const running = pendingRun();
      await store.startRun(running);
      const listed = async (status: "pending" | "requires_action") =>
        (
          await store.listRuns("acct_A", "agt_A", status, {
            limit: 10,
            before: null,
            after: null,
            order: "desc",
          })
        ).items.map((run) => run.id);
      expect(await listed("requires_action")).toEqual([streamed.id]);
      expect(await listed("pending")).toEqual([running.id]);
      expect((await store.pendingEvents(10)).map((event) => event.type)).toEqual(["message.requires_action"]);
      expect(await store.expiredLeases("2026-06-03T00:00:00.000Z", 10)).toEqual([]);
      expect(await store.expiredApprovals("2026-06-01T12:00:00.000Z", 10)).toEqual([]);
      expect(await store.expiredApprovals("2026-06-02T00:00:01.000Z", 10)).toEqual([
        {
          id: streamed.id,
          background: true,
          accountId: "acct_A",
          agentId: "agt_A",
          userId: "u1",
          roomId: null,
        },
      ]);

      // Two answers read the same state: one only is recorded.
      const first = '{"c1":{"approve":true}}';
      const answers = await Promise.all([
        store.decideRun("acct_A", "agt_A", streamed.id, { expected: null, decisions: first, resume: null }),
        store.decideRun("acct_A", "agt_A", streamed.id, { expected: null, decisions: "{}", resume: null }),
      ]);
      expect(answers.filter((answer) => answer !== null)).toHaveLength(1);
      const kept = (await store.getRun("acct_A", "agt_A", streamed.id))!.decisions!;
      expect(
        await store.decideRun("acct_B", "agt_A", streamed.id, {
          expected: kept,
          decisions: first,
          resume: null,
        }),
      ).toBeNull();
      const resume = {
        holder: "p1",
        expiresAt: "2026-06-01T00:01:00.000Z",
        deadlineAt: "2026-06-01T00:05:00.000Z",
      };
      const resumed = await store.decideRun("acct_A", "agt_A", streamed.id, {
        expected: kept,
        decisions: first,
        resume,
      });
      expect(resumed).toEqual({
        ...read,
        approval: undefined,
        decisions: first,
        lease: { holder: "p1", expiresAt: resume.expiresAt },
        deadlineAt: resume.deadlineAt,
      });
      // Resumed: no longer paused, so neither answered again nor expired.
      expect(
        await store.decideRun("acct_A", "agt_A", streamed.id, { expected: first, decisions: first, resume }),
      ).toBeNull();
      expect(await store.expiredApprovals("2026-06-03T00:00:00.000Z", 10)).toEqual([]);
      // A pause by a process that does not hold the lease writes nothing.
      await store.writeRuns([
        {
          kind: "pause",
          runId: streamed.id,
          events: [{ ...paused, seq: 3 }],
          pause: { ...pause, holder: "p2" },
        },
      ]);
      expect((await store.getRun("acct_A", "agt_A", streamed.id))?.approval).toBeUndefined();
      expect(await store.runEvents(streamed.id, 2, 10)).toEqual([]);
      // Nor counts its tokens.
      expect(await usageOfDay()).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    });

    it("writes an end's message events only with the update that ends the run", async () => {
      const store = await fresh();
      const run = pendingRun();
      await store.startRun(run);
      const failed = {
        ...completedEnd({
          status: "failed",
          errorCode: "APPROVAL_EXPIRED",
          errorMessage: "expired",
          result: null,
        }),
        events: [
          {
            id: "evt_01JEXPIRED000000000000000",
            type: "message.failed" as const,
            accountId: "acct_A",
            agentId: "agt_A",
            createdAt: "2026-06-02T00:00:00.000Z",
            data: { agentId: "agt_A", messageId: run.id },
          },
        ],
      };
      const ends = await Promise.all([store.endRun(run.id, [], failed), store.endRun(run.id, [], failed)]);
      expect(ends.filter(Boolean)).toHaveLength(1);
      expect(
        await store.endRun(run.id, [], { ...failed, events: [{ ...failed.events[0]!, id: "evt_01JAGAIN" }] }),
      ).toBe(false);
      expect((await store.pendingEvents(10)).map((event) => [event.type, event.id])).toEqual([
        ["message.failed", "evt_01JEXPIRED000000000000000"],
      ]);
    });

    it("finds pending runs past their deadline, and removes expired runs with their events in batches", async () => {
      const store = await fresh();
      const late = pendingRun({ deadlineAt: "2026-01-01T00:00:00.000Z" });
      const onTime = pendingRun({ deadlineAt: "2999-01-01T00:00:00.000Z" });
      await store.startRun(late);
      await store.startRun(onTime);
      expect(await store.abandonedRuns("2026-06-01T00:00:00.000Z", 10)).toEqual([
        { id: late.id, background: true },
      ]);
      const ended = (expiresAt: string, keptUntil = expiresAt) => ({
        status: "failed" as const,
        errorCode: "AGENT_UNAVAILABLE",
        errorMessage: "The message was interrupted.",
        result: null,
        endedAt: "2026-01-01T00:00:00.000Z",
        expiresAt,
        keptUntil,
      });
      const expired = [pendingRun(), pendingRun(), pendingRun()];
      for (const run of expired) {
        await store.startRun(run);
        await store.appendRunEvents(run.id, runEvents(1, 3));
        await store.endRun(run.id, [], ended("2026-02-01T00:00:00.000Z"));
      }
      expect(await store.endRun(late.id, [], ended("2999-01-01T00:00:00.000Z"))).toBe(true);
      expect(await store.abandonedRuns("2026-06-01T00:00:00.000Z", 10)).toEqual([]);
      expect(await store.removeExpiredRuns("2026-06-01T00:00:00.000Z", 2)).toBe(2);
      expect(await store.removeExpiredRuns("2026-06-01T00:00:00.000Z", 2)).toBe(1);
      expect(await store.removeExpiredRuns("2026-06-01T00:00:00.000Z", 2)).toBe(0);
      for (const run of expired) {
        expect(await store.getRun("acct_A", "agt_A", run.id)).toBeNull();
        expect(await store.runEvents(run.id, 0, 100)).toEqual([]);
      }
      expect((await store.getRun("acct_A", "agt_A", late.id))?.status).toBe("failed");
      expect((await store.getRun("acct_A", "agt_A", onTime.id))?.status).toBe("pending");
    });

    it("finds the newest pending run of an account with an Idempotency-Key, not one past its deadline or ended", async () => {
      const store = await fresh();
      const HASH = "a".repeat(64);
      const NOW = "2026-06-01T00:00:00.000Z";
      const keyed = (overrides: Partial<RunRecord> = {}) =>
        pendingRun({
          idempotencyKey: { hash: HASH, request: "f".repeat(64) },
          deadlineAt: "2999-01-01T00:00:00.000Z",
          ...overrides,
        });
      const older = keyed();
      const newer = keyed({ background: false, logged: false });
      const late = keyed({ deadlineAt: "2026-01-01T00:00:00.000Z" });
      const otherAccount = keyed({ accountId: "acct_B" });
      const otherKey = keyed({ idempotencyKey: { hash: "b".repeat(64), request: "f".repeat(64) } });
      for (const run of [older, newer, late, otherAccount, otherKey]) await store.startRun(run);
      expect(await store.keyedRun("acct_A", HASH, NOW)).toEqual(newer);
      expect(await store.keyedRun("acct_B", HASH, NOW)).toEqual(otherAccount);
      expect(await store.keyedRun("acct_A", "c".repeat(64), NOW)).toBeNull();
      const end = completedEnd({
        expiresAt: "2999-01-01T00:00:00.000Z",
        keptUntil: "2999-01-01T00:00:00.000Z",
      });
      expect(await store.endRun(newer.id, [], end)).toBe(true);
      expect(await store.keyedRun("acct_A", HASH, NOW)).toEqual(older);
      expect(await store.endRun(older.id, [], { ...end, status: "failed" })).toBe(true);
      // Only the one past its deadline is left pending: abandoned, not being generated.
      expect(await store.keyedRun("acct_A", HASH, NOW)).toBeNull();
      // The key is read back with the run as given.
      expect((await store.getRun("acct_A", "agt_A", late.id))?.idempotencyKey).toEqual({
        hash: HASH,
        request: "f".repeat(64),
      });
    });

    it("removes the events of an expired run kept longer, then the run once it is no longer kept", async () => {
      const store = await fresh();
      const kept = [pendingRun(), pendingRun(), pendingRun()];
      const end = {
        status: "failed" as const,
        errorCode: "MODEL_ERROR",
        errorMessage: "The model refused.",
        result: null,
        endedAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2026-01-01T01:00:00.000Z",
        keptUntil: "2026-01-02T00:00:00.000Z",
      };
      for (const run of kept) {
        await store.startRun(run);
        await store.appendRunEvents(run.id, runEvents(1, 3));
        expect(await store.endRun(run.id, [], end)).toBe(true);
      }
      // Before either time: nothing goes.
      expect(await store.removeExpiredRuns("2026-01-01T00:30:00.000Z", 10)).toBe(0);
      // Past the events' time: the events go in batches, the records stay as they were.
      expect(await store.removeExpiredRuns("2026-01-01T12:00:00.000Z", 2)).toBe(2);
      expect(await store.removeExpiredRuns("2026-01-01T12:00:00.000Z", 2)).toBe(1);
      expect(await store.removeExpiredRuns("2026-01-01T12:00:00.000Z", 2)).toBe(0);
      for (const run of kept) {
        expect(await store.runEvents(run.id, 0, 100)).toEqual([]);
        expect(await store.getRun("acct_A", "agt_A", run.id)).toEqual({ ...run, ...end });
      }
      // Past the record's time: the records go.
      expect(await store.removeExpiredRuns("2026-01-02T12:00:00.000Z", 10)).toBe(3);
      for (const run of kept) expect(await store.getRun("acct_A", "agt_A", run.id)).toBeNull();
    });

    it("forgets an agent's runs when it is purged, a user's when the user is erased, a conversation's with it", async () => {
      const store = await fresh();
      const purged = pendingRun({ agentId: "agt_P" });
      const erased = pendingRun({ userId: "u_gone" });
      const kept = pendingRun({ userId: "u_kept" });
      // The conversation of u_conv in room r1; the same user's other room, and another agent's, stay.
      const dropped = pendingRun({ userId: "u_conv", roomId: "r1" });
      const otherRoom = pendingRun({ userId: "u_conv", roomId: null });
      const otherAgent = pendingRun({ agentId: "agt_B", userId: "u_conv", roomId: "r1" });
      for (const run of [purged, erased, kept, dropped, otherRoom, otherAgent]) {
        await store.startRun(run);
        await store.appendRunEvents(run.id, runEvents(1, 2));
      }
      await storeExchange(store, key({ userId: "u_conv", roomId: "r1" }), "q", "a");
      const conversation = (await store.listConversations("acct_A", "agt_A", { userId: "u_conv" }, page()))
        .items[0]!.id;
      // Not the agent's conversation: nothing goes.
      expect(await store.deleteConversation("acct_A", "agt_B", conversation)).toBeNull();
      expect(await store.getRun("acct_A", "agt_A", dropped.id)).toEqual(dropped);
      expect(await store.deleteConversation("acct_A", "agt_A", conversation)).toBe(2);
      expect(await store.getRun("acct_A", "agt_A", dropped.id)).toBeNull();
      expect(await store.runEvents(dropped.id, 0, 10)).toEqual([]);
      expect(await store.getRun("acct_A", "agt_A", otherRoom.id)).toEqual(otherRoom);
      expect(await store.getRun("acct_A", "agt_B", otherAgent.id)).toEqual(otherAgent);
      await store.purgeAgent("acct_A", "agt_P");
      await store.eraseUser("acct_A", "u_gone");
      expect(await store.getRun("acct_A", "agt_P", purged.id)).toBeNull();
      expect(await store.runEvents(purged.id, 0, 10)).toEqual([]);
      expect(await store.getRun("acct_A", "agt_A", erased.id)).toBeNull();
      expect(await store.runEvents(erased.id, 0, 10)).toEqual([]);
      expect(await store.getRun("acct_A", "agt_A", kept.id)).toEqual(kept);
      expect(await store.runEvents(kept.id, 0, 10)).toHaveLength(2);
      // A run purged while it streams: its later events are dropped, and the batch they are in still commits.
      await store.writeRuns([
        { kind: "events", runId: purged.id, events: runEvents(3, 1) },
        { kind: "events", runId: kept.id, events: runEvents(3, 1) },
      ]);
      expect(await store.runEvents(purged.id, 0, 10)).toEqual([]);
      expect(await store.runEvents(kept.id, 0, 10)).toHaveLength(3);
    });

    it("lists an agent's logged runs by status, newest first, a cursor page at a time; the kill switch's as cancelled", async () => {
      const store = await fresh();
      const page = (limit: number, more: Partial<PageRequest> = {}): PageRequest => ({
        limit,
        before: null,
        after: null,
        order: "desc",
        ...more,
      });
      const [done, failed, killed, running] = [pendingRun(), pendingRun(), pendingRun(), pendingRun()];
      const keyed = pendingRun({ logged: false, background: false });
      const otherAgent = pendingRun({ agentId: "agt_B" });
      for (const run of [done, failed, killed, running, keyed, otherAgent]) await store.startRun(run);
      await store.endRun(done.id, [], completedEnd());
      const failure = {
        ...completedEnd(),
        status: "failed" as const,
        errorCode: "MODEL_ERROR",
        errorMessage: "no",
      };
      await store.endRun(failed.id, [], failure);
      // `running` is the agent's other pending run, ended by the kill switch after `killed`'s check below.
      const ids = (runs: { items: RunRecord[] }) => runs.items.map((run) => run.id);
      expect(ids(await store.listRuns("acct_A", "agt_A", null, page(10)))).toEqual([
        running.id,
        killed.id,
        failed.id,
        done.id,
      ]);
      const stop = { ...failure, errorCode: "AGENT_UNAVAILABLE", errorMessage: "stopped" };
      expect((await store.cancelAgentRuns("acct_A", "agt_A", stop)).sort()).toEqual(
        [killed.id, running.id].sort(),
      );
      const cancelled = await store.listRuns("acct_A", "agt_A", "cancelled", page(10));
      expect(ids(cancelled)).toEqual([running.id, killed.id]);
      expect(cancelled.items[0]).toMatchObject({
        status: "failed",
        cancelled: true,
        errorCode: "AGENT_UNAVAILABLE",
      });
      expect(ids(await store.listRuns("acct_A", "agt_A", "failed", page(10)))).toEqual([failed.id]);
      expect(ids(await store.listRuns("acct_A", "agt_A", "completed", page(10)))).toEqual([done.id]);
      expect(ids(await store.listRuns("acct_A", "agt_A", "pending", page(10)))).toEqual([]);
      expect(ids(await store.listRuns("acct_A", "agt_B", "pending", page(10)))).toEqual([otherAgent.id]);
      // The process generating a stream finds it ended, and stops it.
      expect((await store.endedRunsAmong([killed.id, otherAgent.id, newId("message")])).sort()).toEqual([
        killed.id,
      ]);
      expect(await store.endedRunsAmong([])).toEqual([]);
      // A run the kill switch ended gets no more events from the process that generated it.
      await store.writeRuns([{ kind: "events", runId: killed.id, events: runEvents(1, 2) }]);
      expect(await store.runEvents(killed.id, 0, 10)).toEqual([]);

      const first = await store.listRuns("acct_A", "agt_A", null, page(3));
      expect(ids(first)).toEqual([running.id, killed.id, failed.id]);
      expect(first.hasMore).toBe(true);
      const second = await store.listRuns("acct_A", "agt_A", null, page(3, { before: failed.id }));
      expect(ids(second)).toEqual([done.id]);
      expect(second.hasMore).toBe(false);
      const newer = await store.listRuns("acct_A", "agt_A", null, page(2, { after: done.id, order: "asc" }));
      expect(ids(newer)).toEqual([failed.id, killed.id]);
      expect(newer.hasMore).toBe(true);
      await expect(
        store.listRuns("acct_A", "agt_A", null, page(3, { before: otherAgent.id })),
      ).rejects.toThrow(/cursor/);
    });
  });
}

function keysContract(fresh: () => Promise<ConversationStore>): void {
  describe("idempotency keys of exchanges", () => {
    const HASH = "a".repeat(64);
    const OTHER = "b".repeat(64);
    const keyed = (
      k: ConversationKey,
      hash: string,
      expiresAt = "2999-01-01T00:00:00.000Z",
      fallback = false,
    ): NewExchange => ({
      ...exchange(k, "question", "answer"),
      idempotencyKey: { hash, fallback, expiresAt },
    });
    const save = async (store: ConversationStore, ex: NewExchange) =>
      expect(await store.saveExchange(ex, completedCall(ex.key, { id: ex.reply.id }))).toBe(true);
    const NOW = "2026-06-01T00:00:00.000Z";

    it("keeps an exchange's key with it, per account, until it expires", async () => {
      const store = await fresh();
      const first = keyed(key(), HASH, "2999-01-01T00:00:00.000Z", true);
      await save(store, first);
      expect(await store.keyedExchange("acct_A", HASH, NOW)).toEqual({
        agentId: "agt_A",
        messageId: first.user.id,
        replyId: first.reply.id,
        fallback: true,
      });
      expect(await store.keyedExchange("acct_B", HASH, NOW)).toBeNull();
      expect(await store.keyedExchange("acct_A", OTHER, NOW)).toBeNull();
      expect(await store.keyedExchange("acct_A", HASH, "2999-01-01T00:00:00.000Z")).toBeNull();
      // Another account's exchange with the same key has its own.
      const other = keyed(key({ accountId: "acct_B" }), HASH);
      await save(store, other);
      expect((await store.keyedExchange("acct_B", HASH, NOW))?.replyId).toBe(other.reply.id);
      expect((await store.keyedExchange("acct_A", HASH, NOW))?.replyId).toBe(first.reply.id);
    });

    it("leaves a key held by an exchange to it, and passes an expired one to the next exchange", async () => {
      const store = await fresh();
      const first = keyed(key(), HASH, "2026-03-01T00:00:00.000Z");
      await save(store, first);
      // Stored too (a duplicate answered elsewhere meanwhile), without the key.
      await save(store, keyed(key(), HASH));
      expect((await store.keyedExchange("acct_A", HASH, "2026-02-01T00:00:00.000Z"))?.replyId).toBe(
        first.reply.id,
      );
      clock = Math.max(clock, Date.parse("2026-03-02T00:00:00.000Z"));
      const later = keyed(key(), HASH);
      await save(store, later);
      expect((await store.keyedExchange("acct_A", HASH, NOW))?.replyId).toBe(later.reply.id);
    });

    it("removes expired keys in batches, and the keys of a purged agent, an erased user, a deleted conversation", async () => {
      const store = await fresh();
      for (let i = 0; i < 3; i += 1) {
        await save(store, keyed(key(), String(i).repeat(64), "2026-05-01T00:00:00.000Z"));
      }
      const lasting = keyed(key(), HASH);
      await save(store, lasting);
      expect(await store.removeExpiredKeys(NOW, 2)).toBe(2);
      expect(await store.removeExpiredKeys(NOW, 2)).toBe(1);
      expect(await store.removeExpiredKeys(NOW, 2)).toBe(0);
      expect((await store.keyedExchange("acct_A", HASH, NOW))?.replyId).toBe(lasting.reply.id);

      const purged = keyed(key({ agentId: "agt_P" }), "c".repeat(64));
      const erased = keyed(key({ userId: "u_gone" }), "d".repeat(64));
      const otherAccount = keyed(key({ accountId: "acct_B", userId: "u_gone" }), "d".repeat(64));
      const dropped = keyed(key({ userId: "u_conv" }), "e".repeat(64));
      for (const ex of [purged, erased, otherAccount, dropped]) await save(store, ex);
      await store.purgeAgent("acct_A", "agt_P");
      await store.eraseUser("acct_A", "u_gone");
      const conversation = (await store.getMessage("acct_A", "agt_A", dropped.reply.id))!.conversationId;
      expect(await store.deleteConversation("acct_A", "agt_A", conversation)).toBe(2);
      expect(await store.keyedExchange("acct_A", "c".repeat(64), NOW)).toBeNull();
      expect(await store.keyedExchange("acct_A", "d".repeat(64), NOW)).toBeNull();
      expect(await store.keyedExchange("acct_A", "e".repeat(64), NOW)).toBeNull();
      expect((await store.keyedExchange("acct_B", "d".repeat(64), NOW))?.replyId).toBe(otherAccount.reply.id);
      expect((await store.keyedExchange("acct_A", HASH, NOW))?.replyId).toBe(lasting.reply.id);
    });
  });
}

function fireStartsContract(fresh: () => Promise<ConversationStore>): void {
  describe("starts of schedule fires", () => {
    const at = (minutes: number) =>
      new Date(Date.parse("2026-06-01T09:00:00.000Z") + minutes * 60_000).toISOString();
    const schedule = (nextFireAt: string) => ({
      id: newId("schedule"),
      accountId: "acct_A",
      agentId: "agt_A",
      cron: "* * * * *",
      timezone: "UTC",
      text: "tick",
      userId: null,
      roomId: null,
      enabled: true,
      nextFireAt,
      skippedFires: 0,
      lastFire: null,
      createdAt: at(-60),
      updatedAt: at(-60),
    });
    const claim = (scheduleId: string, scheduledAt: string, startBy: string | null) => {
      const ids = { message: newId("message"), reply: newId("message") };
      return {
        ids,
        claim: {
          scheduleId,
          scheduledAt,
          nextFireAt: new Date(Date.parse(scheduledAt) + 60_000).toISOString(),
          skipped: 0,
          fire: {
            scheduledAt,
            firedAt: scheduledAt,
            messageId: startBy ? ids.reply : null,
            userMessageId: startBy ? ids.message : null,
            startBy,
            error: startBy ? null : { code: "AGENT_INACTIVE", message: "inactive" },
          },
        },
      };
    };

    it("lists a claimed fire not started by its time, lets one caller take it over, and forgets it once settled", async () => {
      const store = await fresh();
      const created = await store.schedules.createSchedule(schedule(at(0)));
      const { ids, claim: first } = claim(created.id, at(0), at(1));
      expect(await store.schedules.claimFire(first)).toBe(true);
      // Before its time to start, it is its claimer's.
      expect(await store.schedules.unstartedFires(at(0.5), 10)).toEqual([]);
      const [late] = await store.schedules.unstartedFires(at(1), 10);
      expect(late).toEqual({
        scheduleId: created.id,
        scheduledAt: at(0),
        accountId: "acct_A",
        agentId: "agt_A",
        userMessageId: ids.message,
        messageId: ids.reply,
        startBy: at(1),
      });
      // Two processes that read it take it over: one does.
      const taken = await Promise.all([
        store.schedules.reclaimFire(late!, at(2)),
        store.schedules.reclaimFire(late!, at(3)),
      ]);
      expect(taken.filter(Boolean)).toHaveLength(1);
      expect(await store.schedules.unstartedFires(at(1.5), 10)).toEqual([]);
      const [again] = await store.schedules.unstartedFires(at(5), 10);
      expect(again!.startBy).toBe(taken[0] ? at(2) : at(3));
      await store.schedules.settleFire(created.id, at(0), null);
      expect(await store.schedules.unstartedFires(at(60), 10)).toEqual([]);
      expect(await store.schedules.reclaimFire(again!, at(9))).toBe(false);
      expect((await store.schedules.getSchedule("acct_A", "agt_A", created.id))!.lastFire).toMatchObject({
        messageId: ids.reply,
        error: null,
      });
    });

    it("a fire that sends no message is never unstarted; one settled with an error says so as the last fire", async () => {
      const store = await fresh();
      const created = await store.schedules.createSchedule(schedule(at(0)));
      expect(await store.schedules.claimFire(claim(created.id, at(0), null).claim)).toBe(true);
      expect(await store.schedules.unstartedFires(at(60), 10)).toEqual([]);
      const { claim: second } = claim(created.id, at(1), at(2));
      expect(await store.schedules.claimFire(second)).toBe(true);
      const error = { code: "CONVERSATION_BUSY", message: "busy" };
      await store.schedules.settleFire(created.id, at(1), error);
      expect(await store.schedules.unstartedFires(at(60), 10)).toEqual([]);
      expect((await store.schedules.getSchedule("acct_A", "agt_A", created.id))!.lastFire).toMatchObject({
        scheduledAt: at(1),
        error,
      });
      // An error of an earlier fire does not overwrite the last one's.
      await store.schedules.settleFire(created.id, at(0), { code: "X", message: "earlier" });
      expect((await store.schedules.getSchedule("acct_A", "agt_A", created.id))!.lastFire!.error).toEqual(
        error,
      );
    });
  });
}
