import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { afterEach, describe, expect, it } from "vitest";
import { newDocument } from "../documents.js";
import { unitVector } from "../embeddings.js";
import type { ConversationStore, NewDocument, PageRequest } from "../store/types.js";

const page = (limit = 20, order: "asc" | "desc" = "desc"): PageRequest => ({
  limit,
  before: null,
  after: null,
  order,
});

function document(text: string, title = "", source = ""): NewDocument {
  return newDocument({ title, type: "text/plain", sizeBytes: text.length, source }, text);
}

/** What every ConversationStore does with knowledge documents (docs/api/documents.md). */
export function documentStoreContract(name: string, open: () => Promise<ConversationStore>): void {
  describe(`${name} store: documents`, () => {
    const opened: ConversationStore[] = [];
    async function store(): Promise<ConversationStore> {
      const s = await open();
      opened.push(s);
      return s;
    }
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    it("stores a document with its chunks, lists it in pages, and reads it by id", async () => {
      const s = await store();
      const first = await s.addDocument("acct_A", "agt_A", document("Kettles boil water.", "Kettles"));
      const long = `${"The harbour master keeps the tide tables. ".repeat(60)}`.trim();
      const second = await s.addDocument("acct_A", "agt_A", document(long, "", "docs/harbour.md"));
      expect(first).toMatchObject({ title: "Kettles", chunkCount: 1, contentType: "text/plain", source: "" });
      expect(second!.chunkCount).toBeGreaterThan(1);
      expect(second!.title).toBe(long.slice(0, 200));
      const newest = await s.listDocuments("acct_A", "agt_A", page(1));
      expect(newest.items.map((d) => d.id)).toEqual([second!.id]);
      expect(newest.hasMore).toBe(true);
      const older = await s.listDocuments("acct_A", "agt_A", { ...page(1), before: second!.id });
      expect(older.items.map((d) => d.id)).toEqual([first!.id]);
      expect(older.hasMore).toBe(false);
      const ascending = await s.listDocuments("acct_A", "agt_A", page(20, "asc"));
      expect(ascending.items.map((d) => d.id)).toEqual([first!.id, second!.id]);
      expect(await s.getDocument("acct_A", "agt_A", first!.id)).toEqual(first);
      expect(await s.documentSources("acct_A", "agt_A")).toEqual(["docs/harbour.md"]);
      // Another agent's or account's cursor is not one of this list's.
      await expect(
        s.listDocuments("acct_A", "agt_B", { ...page(), before: first!.id }),
      ).rejects.toBeInstanceOf(AppError);
    });

    it("finds the chunks that match a message, best first, within one agent of one account", async () => {
      const s = await store();
      const tide = await s.addDocument(
        "acct_A",
        "agt_A",
        document("The lighthouse keeper records the tide at dawn and dusk.", "Tides"),
      );
      await s.addDocument("acct_A", "agt_A", document("Bread needs flour, water, salt and yeast.", "Bread"));
      await s.addDocument("acct_A", "agt_B", document("Another agent's lighthouse keeper.", "Other"));
      await s.addDocument("acct_B", "agt_A", document("Another account's lighthouse keeper.", "Other"));
      const matches = await s.relevantChunks(
        "acct_A",
        "agt_A",
        "When does the lighthouse keeper record tides?",
        5,
      );
      expect(matches.map((m) => [m.documentId, m.chunk, m.title])).toEqual([[tide!.id, 0, "Tides"]]);
      expect(matches[0]!.text).toContain("records the tide");
      expect(matches[0]!.score).toBeGreaterThan(0);
      expect(await s.relevantChunks("acct_A", "agt_A", "the and of", 5)).toEqual([]);
    });

    it("deletes a document with its chunks, which then match nothing", async () => {
      const s = await store();
      const doc = await s.addDocument("acct_A", "agt_A", document("Skerryvore lighthouse was lit in 1844."));
      expect(await s.relevantChunks("acct_A", "agt_A", "Skerryvore", 5)).toHaveLength(1);
      expect(await s.deleteDocument("acct_A", "agt_B", doc!.id)).toBe(false);
      expect(await s.deleteDocument("acct_A", "agt_A", doc!.id)).toBe(true);
      expect(await s.deleteDocument("acct_A", "agt_A", doc!.id)).toBe(false);
      expect(await s.getDocument("acct_A", "agt_A", doc!.id)).toBeNull();
      expect(await s.relevantChunks("acct_A", "agt_A", "Skerryvore", 5)).toEqual([]);
    });

    it("ranks chunks by vector besides full text where the store searches vectors, within the agent", async () => {
      const s = await store();
      const vector = (values: number[], model = "embed-1") => ({ model, vector: unitVector(values) });
      const tides = await s.addDocument("acct_A", "agt_A", document("High water at the harbour is at noon."));
      const lamp = await s.addDocument("acct_A", "agt_A", document("The Skerryvore lamp burns paraffin."));
      const theirs = await s.addDocument("acct_A", "agt_B", document("The ferry fuel is diesel."));
      await s.saveChunkVectors("acct_A", "agt_A", [
        { documentId: tides!.id, chunk: 0, vector: vector([1, 0, 0]) },
        { documentId: lamp!.id, chunk: 0, vector: vector([0, 1, 0]) },
        // Not a chunk of this agent: dropped.
        { documentId: theirs!.id, chunk: 0, vector: vector([0, 0.9, 0.1]) },
      ]);
      await s.saveChunkVectors("acct_A", "agt_B", [
        { documentId: theirs!.id, chunk: 0, vector: vector([0, 1, 0]) },
      ]);
      // A paraphrase sharing no word with the lamp's chunk.
      const text = "What fuel does the light use?";
      const query = vector([0.1, 1, 0]);
      const byText = await s.relevantChunks("acct_A", "agt_A", text, 5);
      expect(byText).toEqual([]);
      const hybrid = await s.relevantChunks("acct_A", "agt_A", text, 1, query);
      if (await s.searchesVectors()) {
        expect(hybrid.map((m) => m.documentId)).toEqual([lamp!.id]);
        expect(hybrid[0]).toMatchObject({ chunk: 0, text: "The Skerryvore lamp burns paraffin." });
        expect(hybrid[0]!.score).toBeGreaterThan(0);
        // Another model's vectors are not compared; another agent's are never read.
        expect(await s.relevantChunks("acct_A", "agt_A", text, 5, vector([0, 1, 0], "embed-2"))).toEqual([]);
        const other = await s.relevantChunks("acct_A", "agt_B", text, 5, query);
        expect(other.map((m) => m.documentId)).toEqual([theirs!.id]);
        // A document deleted takes its chunks' vectors with it.
        await s.deleteDocument("acct_A", "agt_A", lamp!.id);
        const after = await s.relevantChunks("acct_A", "agt_A", text, 5, query);
        expect(after.map((m) => m.documentId)).toEqual([tides!.id]);
      } else {
        expect(hybrid).toEqual([]);
      }
    });

    it("purging the agent deletes its documents, and stores none for it afterwards", async () => {
      const s = await store();
      await s.addDocument("acct_A", "agt_A", document("Skerryvore lighthouse was lit in 1844."));
      await s.purgeAgent("acct_A", "agt_A");
      expect((await s.listDocuments("acct_A", "agt_A", page())).items).toEqual([]);
      expect(await s.relevantChunks("acct_A", "agt_A", "Skerryvore", 5)).toEqual([]);
      expect(await s.addDocument("acct_A", "agt_A", document("Too late."))).toBeNull();
    });

    it("keeps a reply's citations with its message", async () => {
      const s = await store();
      const key = { accountId: "acct_A", agentId: "agt_A", userId: "u", roomId: "r" };
      const at = new Date().toISOString();
      const reply = newId("message");
      const citations = [{ documentId: "doc_1", chunk: 2, score: 0.5 }];
      await s.saveExchange(
        {
          key,
          user: { id: newId("message"), text: "q", createdAt: at },
          reply: {
            id: reply,
            text: "a",
            model: "m",
            provider: "openai",
            inputTokens: 1,
            outputTokens: 1,
            latencyMs: 1,
            finishReason: "stop",
            createdAt: at,
            citations,
          },
        },
        {
          id: reply,
          requestId: null,
          apiKeyId: null,
          ...key,
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
        [],
      );
      expect((await s.getMessage("acct_A", "agt_A", reply))?.citations).toEqual(citations);
    });
  });
}
