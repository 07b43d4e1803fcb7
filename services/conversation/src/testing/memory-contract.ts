import { afterEach, describe, expect, it } from "vitest";
import { unitVector } from "../embeddings.js";
import { newMemory } from "../memories.js";
import type { ConversationStore, MemoryOwner, MemoryVector, NewMemory, PageRequest } from "../store/types.js";

const owner = (overrides: Partial<MemoryOwner> = {}): MemoryOwner => ({
  accountId: "acct_A",
  agentId: "agt_A",
  userId: "u1",
  ...overrides,
});

function memory(text: string, source: string | null = null): NewMemory {
  return newMemory(text, source)!;
}

const vector = (values: number[], model = "embed-1"): MemoryVector => ({ model, vector: unitVector(values) });

const newest = (limit = 20): PageRequest => ({ limit, before: null, after: null, order: "desc" });

/** What every ConversationStore does with memories (memories of users, docs/api/memories.md). */
export function memoryStoreContract(name: string, open: () => Promise<ConversationStore>): void {
  describe(`${name} store: memories`, () => {
    const opened: ConversationStore[] = [];
    async function store(): Promise<ConversationStore> {
      const s = await open();
      opened.push(s);
      return s;
    }
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    it("stores memories, answers one already known instead of a second, and lists them newest first", async () => {
      const s = await store();
      const [first] = await s.addMemories(owner(), [memory("The user likes green tea.", "msg_1")], 100);
      expect(first).toMatchObject({
        created: true,
        memory: { text: "The user likes green tea.", userId: "u1" },
      });
      expect(first!.memory.sourceMessageId).toBe("msg_1");
      const again = await s.addMemories(
        owner(),
        [memory("the user LIKES green tea"), memory("The user owns a bicycle.")],
        100,
      );
      expect(again.map((entry) => entry.created)).toEqual([false, true]);
      expect(again[0]!.memory.id).toBe(first!.memory.id);
      const page = await s.listMemories("acct_A", "agt_A", { userId: "u1" }, newest());
      expect(page.items.map((m) => m.text)).toEqual([
        "The user owns a bicycle.",
        "The user likes green tea.",
      ]);
      expect(page.hasMore).toBe(false);
    });

    it("keeps at most the limit per user, evicting the oldest", async () => {
      const s = await store();
      for (const text of ["fact one", "fact two", "fact three"])
        await s.addMemories(owner(), [memory(text)], 2);
      await s.addMemories(owner({ userId: "u2" }), [memory("fact of another user")], 2);
      const page = await s.listMemories("acct_A", "agt_A", { userId: "u1" }, newest());
      expect(page.items.map((m) => m.text)).toEqual(["fact three", "fact two"]);
      // Another user's count is their own.
      expect((await s.listMemories("acct_A", "agt_A", { userId: "u2" }, newest())).items).toHaveLength(1);
      // A limit smaller than one call adds keeps the newest; what went is not answered as stored.
      const stored = await s.addMemories(owner({ userId: "u3" }), [memory("a b"), memory("c d")], 1);
      expect(stored.map((entry) => entry.memory.text)).toEqual(["c d"]);
    });

    it("searches by full text, ranks the most relevant first, and never crosses users, agents or accounts", async () => {
      const s = await store();
      await s.addMemories(
        owner(),
        [
          memory("The user's favourite colour is teal."),
          memory("The user has a dog called Biscuit."),
          memory("The user works as a nurse."),
        ],
        100,
      );
      await s.addMemories(owner({ userId: "u2" }), [memory("The user's favourite colour is red.")], 100);
      await s.addMemories(owner({ agentId: "agt_B" }), [memory("The user's favourite colour is blue.")], 100);
      await s.addMemories(
        owner({ accountId: "acct_B" }),
        [memory("The user's favourite colour is pink.")],
        100,
      );

      const recalled = await s.relevantMemories(
        owner(),
        "What is my favourite colour, and my dog's name?",
        2,
      );
      expect(recalled.map((m) => m.text).sort()).toEqual([
        "The user has a dog called Biscuit.",
        "The user's favourite colour is teal.",
      ]);
      expect(await s.relevantMemories(owner(), "quantum chromodynamics", 5)).toEqual([]);
      expect(await s.relevantMemories(owner(), "?!", 5)).toEqual([]);
      // Stemmed: "colours" finds "colour".
      expect((await s.relevantMemories(owner({ userId: "u2" }), "colours", 5)).map((m) => m.text)).toEqual([
        "The user's favourite colour is red.",
      ]);

      const listed = await s.listMemories("acct_A", "agt_A", { query: "favourite colour" }, newest());
      expect(listed.items.map((m) => m.text).sort()).toEqual([
        "The user's favourite colour is red.",
        "The user's favourite colour is teal.",
      ]);
      // Every word must match.
      const both = await s.listMemories("acct_A", "agt_A", { userId: "u1", query: "dog nurse" }, newest());
      expect(both.items).toEqual([]);
    });

    it("pages by cursor in either order and refuses a cursor that is not one of the agent's memories", async () => {
      const s = await store();
      for (let i = 0; i < 5; i++) await s.addMemories(owner(), [memory(`fact ${i}`)], 100);
      const first = await s.listMemories("acct_A", "agt_A", {}, newest(2));
      expect(first.items.map((m) => m.text)).toEqual(["fact 4", "fact 3"]);
      expect(first.hasMore).toBe(true);
      const next = await s.listMemories(
        "acct_A",
        "agt_A",
        {},
        { limit: 2, before: first.items[1]!.id, after: null, order: "desc" },
      );
      expect(next.items.map((m) => m.text)).toEqual(["fact 2", "fact 1"]);
      const ascending = await s.listMemories("acct_A", "agt_A", {}, { ...newest(3), order: "asc" });
      expect(ascending.items.map((m) => m.text)).toEqual(["fact 0", "fact 1", "fact 2"]);
      await expect(
        s.listMemories(
          "acct_A",
          "agt_B",
          {},
          { limit: 2, before: first.items[0]!.id, after: null, order: "desc" },
        ),
      ).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    });

    it("deletes one memory of the agent only", async () => {
      const s = await store();
      const [stored] = await s.addMemories(owner(), [memory("The user is left-handed.")], 100);
      const id = stored!.memory.id;
      expect(await s.deleteMemory("acct_A", "agt_B", id)).toBe(false);
      expect(await s.deleteMemory("acct_B", "agt_A", id)).toBe(false);
      expect(await s.deleteMemory("acct_A", "agt_A", id)).toBe(true);
      expect(await s.deleteMemory("acct_A", "agt_A", id)).toBe(false);
      expect(await s.relevantMemories(owner(), "left-handed", 5)).toEqual([]);
      // The same text may be learnt again once deleted.
      expect((await s.addMemories(owner(), [memory("The user is left-handed.")], 100))[0]!.created).toBe(
        true,
      );
    });

    it("exports a user's memories of every agent of the account in pages, and erases them with the user", async () => {
      const s = await store();
      await s.addMemories(owner(), [memory("fact a"), memory("fact b")], 100);
      await s.addMemories(owner({ agentId: "agt_B" }), [memory("fact c")], 100);
      await s.addMemories(owner({ accountId: "acct_B" }), [memory("fact of another account")], 100);
      await s.addMemories(owner({ userId: "u2" }), [memory("fact of another user")], 100);

      const first = await s.exportUserMemories("acct_A", "u1", null, 2);
      expect(first.memories.map((m) => m.text)).toEqual(["fact a", "fact b"]);
      const rest = await s.exportUserMemories("acct_A", "u1", first.next, 2);
      expect(rest.memories.map((m) => m.text)).toEqual(["fact c"]);
      expect(rest.next).toBeNull();

      await s.eraseUser("acct_A", "u1");
      expect((await s.exportUserMemories("acct_A", "u1", null, 10)).memories).toEqual([]);
      expect(await s.relevantMemories(owner(), "fact", 5)).toEqual([]);
      expect((await s.exportUserMemories("acct_B", "u1", null, 10)).memories).toHaveLength(1);
      expect((await s.exportUserMemories("acct_A", "u2", null, 10)).memories).toHaveLength(1);
    });

    it("purges an agent's memories with the agent and stores none for it afterwards", async () => {
      const s = await store();
      await s.addMemories(owner(), [memory("fact a")], 100);
      await s.addMemories(owner({ agentId: "agt_B" }), [memory("fact b")], 100);
      await s.purgeAgent("acct_A", "agt_A");
      expect((await s.listMemories("acct_A", "agt_A", {}, newest())).items).toEqual([]);
      expect(await s.addMemories(owner(), [memory("fact late")], 100)).toEqual([]);
      expect((await s.listMemories("acct_A", "agt_B", {}, newest())).items).toHaveLength(1);
    });

    it("adds the tokens of a call made for a turn to the usage without counting a message", async () => {
      const s = await store();
      const at = new Date().toISOString();
      await s.recordTokens({
        accountId: "acct_A",
        agentId: "agt_A",
        userId: "u1",
        roomId: "",
        id: "msg_x",
        requestId: null,
        apiKeyId: null,
        provider: "openai",
        model: "gpt-test",
        stream: false,
        outcome: "completed",
        errorCode: null,
        errorMessage: null,
        latencyMs: 5,
        firstTokenMs: null,
        inputTokens: 40,
        outputTokens: 8,
        createdAt: at,
      });
      const report = await s.getUsage({ accountId: "acct_A", groupBy: ["userId"] });
      expect(report.totals).toEqual([
        expect.objectContaining({
          userId: "u1",
          figures: expect.objectContaining({ messages: 0, errors: 0, inputTokens: 40, outputTokens: 8 }),
        }),
      ]);
      expect(await s.listCalls("acct_A", "agt_A")).toEqual([]);
    });

    it("ranks by vector besides full text where the store searches vectors, full text alone elsewhere", async () => {
      const s = await store();
      const stored = await s.addMemories(
        owner(),
        [
          memory("The user has a golden retriever named Biscuit."),
          memory("The user likes jazz records."),
          memory("The user called the bank about a loan."),
        ],
        100,
      );
      const [dog, jazz, bank] = stored.map((entry) => entry.memory);
      await s.saveMemoryVectors(owner(), [
        { memoryId: dog!.id, vector: vector([1, 0, 0]) },
        { memoryId: jazz!.id, vector: vector([0, 1, 0]) },
        { memoryId: bank!.id, vector: vector([0, 0, 1]) },
      ]);
      // Another user's memory near the query: never recalled for this user, nor can a vector be put on it.
      const [theirs] = await s.addMemories(owner({ userId: "u2" }), [memory("The user walks a puppy.")], 100);
      await s.saveMemoryVectors(owner({ userId: "u2" }), [
        { memoryId: theirs!.memory.id, vector: vector([1, 0, 0]) },
      ]);
      await s.saveMemoryVectors(owner(), [{ memoryId: theirs!.memory.id, vector: vector([1, 0, 0]) }]);

      // A paraphrase sharing no word with the memory, but one ("called") with another.
      const text = "What is my puppy called?";
      const query = vector([0.9, 0.1, 0.05]);
      const byText = await s.relevantMemories(owner(), text, 5);
      expect(byText.map((m) => m.text)).toEqual(["The user called the bank about a loan."]);
      const hybrid = await s.relevantMemories(owner(), text, 2, query);
      if (await s.searchesVectors()) {
        // Nearest by meaning first; the full-text match holds its place by both rankings.
        expect(hybrid.map((m) => m.text)).toEqual([
          "The user called the bank about a loan.",
          "The user has a golden retriever named Biscuit.",
        ]);
        // A vector of another model is not compared.
        const otherModel = await s.relevantMemories(owner(), text, 5, vector([1, 0, 0], "embed-2"));
        expect(otherModel.map((m) => m.text)).toEqual(["The user called the bank about a loan."]);
        // With no word to search by, vectors alone rank.
        const meaning = await s.relevantMemories(owner(), "the", 1, vector([0, 1, 0.1]));
        expect(meaning.map((m) => m.text)).toEqual(["The user likes jazz records."]);
        // A memory deleted takes its vector with it.
        await s.deleteMemory("acct_A", "agt_A", dog!.id);
        const after = await s.relevantMemories(owner(), text, 5, query);
        expect(after.map((m) => m.id)).not.toContain(dog!.id);
      } else {
        expect(hybrid).toEqual(byText);
      }
      const theirsRecalled = await s.relevantMemories(owner({ userId: "u2" }), text, 5, query);
      expect(theirsRecalled.every((m) => m.userId === "u2")).toBe(true);
    });
  });
}
