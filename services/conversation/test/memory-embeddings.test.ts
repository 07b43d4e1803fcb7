import { openTestDatabase } from "@agentry/testing-pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIEmbedder } from "../src/embeddings.js";
import { openPostgresConversationStore } from "../src/store/postgres.js";
import type { ConversationStore } from "../src/store/types.js";
import { type FakeEmbeddingsServer, type OpenAIChatBody, startFakeEmbeddings } from "../src/testing/index.js";
import { type PlainRole, plainRole } from "./fixtures/plain-role.js";
import { ACCOUNT, agent, type Harness, startHarness } from "./harness.js";

const HEADING = "What you remember about this user from earlier conversations:";
const EMBEDDINGS_KEY = "sk-test-embeddings-0123456789";

let embeddings: FakeEmbeddingsServer;
let h: Harness;
beforeAll(async () => {
  embeddings = await startFakeEmbeddings();
});
afterAll(async () => {
  await embeddings?.close();
});

/** The service with the fake embeddings provider, on SQLite or on a Postgres store. */
async function startEmbeddingHarness(store?: ConversationStore) {
  return startHarness({
    ...(store ? { store } : {}),
    embeddings: {
      provider: "openai",
      model: "fake-embed",
      baseURL: embeddings.baseURL,
      apiKey: EMBEDDINGS_KEY,
      timeoutMs: 5_000,
    },
  });
}

function systemOf(body: OpenAIChatBody): string {
  return String(body.messages?.find((m) => m.role === "system")?.content ?? "");
}

async function remember(agentId: string, userId: string, text: string) {
  const { memory } = await h.client.createMemory({ accountId: ACCOUNT, agentId, userId, text, limit: 0 });
  return memory!;
}

async function promptFor(agentId: string, userId: string, text: string, harness = h): Promise<string> {
  const a = agent({}, agentId);
  await harness.client.sendMessage({ accountId: ACCOUNT, agent: a, text, userId });
  return systemOf(harness.openai.lastRequest.body);
}

describe("on SQLite", () => {
  beforeAll(async () => {
    h = await startEmbeddingHarness();
  });
  afterAll(() => h?.close());
  embeddingSuites();
});

// The Postgres suites share one test server; whether it has pgvector installed decides which of them run.
const postgres = await openTestDatabase();
afterAll(() => postgres.close());
const pgvector = await installedOn(postgres.url);

async function installedOn(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    return rows.rowCount === 1;
  } finally {
    await client.end();
  }
}

// On Postgres, in a database copied from template1, where the server's superuser created pgvector's extension: the
// store ranks by the extension's cosine distance.
if (pgvector) {
  describe("on Postgres with pgvector", () => {
    beforeAll(async () => {
      const url = await postgres.createDatabase({ template: "template1" });
      const store = await openPostgresConversationStore({ connectionString: url, schema: "conversation" });
      expect(await store.searchesVectors()).toBe(true);
      h = await startEmbeddingHarness(store);
    }, 60_000);
    afterAll(() => h?.close());
    embeddingSuites();
  });
} else {
  it("on Postgres: pgvector is not installed on the test server, so no database of it searches vectors", async () => {
    console.warn(
      "pgvector is not installed on the test server: its vector paths were not run (deploy/pgvector.sh)",
    );
    const url = await postgres.createDatabase({ template: "template1" });
    const store = await openPostgresConversationStore({ connectionString: url, schema: "conversation" });
    try {
      expect(await store.searchesVectors()).toBe(false);
    } finally {
      await store.close();
    }
  });
}

// As a role that may not create the extension, on a server with or without it: vectors are still stored, and recall
// is by full text alone.
describe("on Postgres without pgvector", () => {
  let plain: PlainRole;
  beforeAll(async () => {
    plain = await plainRole(postgres.url);
    const store = await openPostgresConversationStore({
      connectionString: await plain.schema("conversation"),
      schema: "conversation",
    });
    expect(await store.searchesVectors()).toBe(false);
    h = await startEmbeddingHarness(store);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await plain?.drop();
  });

  it("stores memories and documents with their vectors, and recalls them by their words only", async () => {
    const a = agent();
    const before = embeddings.inputs.length;
    await remember(a.id, "gus", "The user has a dog named Biscuit.");
    const text = "Ferries may not carry a canine below deck.";
    await h.client.createDocument({
      accountId: ACCOUNT,
      agentId: a.id,
      contentType: "text/plain",
      content: new TextEncoder().encode(text),
      title: "Rules",
      source: "",
    });
    await h.conversation.memoryVectors.idle();
    // Their vectors are kept, ready for when the extension is created.
    expect(embeddings.inputs.slice(before).flat()).toEqual(["The user has a dog named Biscuit.", text]);
    const kept = new pg.Client({ connectionString: postgres.url });
    await kept.connect();
    try {
      const { rows } = await kept.query(
        `SELECT (SELECT count(*) FROM conversation.memory_vectors)::int AS memories,
          (SELECT count(*) FROM conversation.document_chunk_vectors)::int AS chunks`,
      );
      expect(rows).toEqual([{ memories: 1, chunks: 1 }]);
    } finally {
      await kept.end();
    }

    // The paraphrases that vectors find elsewhere are missed, and no question is embedded for nothing.
    const asked = embeddings.inputs.length;
    expect(await promptFor(a.id, "gus", "What do I call my puppy?")).not.toContain(HEADING);
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "Is my puppy allowed?",
    });
    expect(reply!.citations).toEqual([]);
    // Their words still find them.
    expect(await promptFor(a.id, "gus", "What is my dog called?")).toContain(
      `${HEADING}\n- The user has a dog named Biscuit.`,
    );
    const { reply: cited } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "Can a canine ride the ferries?",
    });
    expect(cited!.citations.map((c) => c.chunk)).toEqual([0]);
    await h.conversation.memories.idle();
    expect(embeddings.inputs.slice(asked).flat()).not.toContain("What do I call my puppy?");
  });
});

function embeddingSuites() {
  describe("recall by embeddings", () => {
    it("finds a paraphrase full text misses, for the user only; without a provider full text alone misses it", async () => {
      const a = agent();
      await remember(a.id, "gus", "The user has a dog named Biscuit.");
      await remember(a.id, "gus", "The user plays chess on Sundays.");
      await remember(a.id, "hal", "The user has a dog named Rex.");
      await h.conversation.memoryVectors.idle();
      // The memories' texts went to the embeddings endpoint, as OpenAI's wire format has them.
      expect(embeddings.inputs.flat()).toEqual(
        expect.arrayContaining(["The user has a dog named Biscuit.", "The user plays chess on Sundays."]),
      );

      const question = "What do I call my puppy?";
      const embedded = embeddings.inputs.length;
      const gus = await promptFor(a.id, "gus", question);
      expect(gus).toContain(`${HEADING}\n- The user has a dog named Biscuit.`);
      expect(gus).not.toContain("Rex");
      // The question alone was embedded to recall by (the turn's memory learning may embed the exchange after it).
      expect(embeddings.inputs[embedded]).toEqual([question]);

      // The same question with no embeddings provider: "call" and "puppy" are no word of the memory.
      const plain = await startHarness();
      try {
        await plain.client.createMemory({
          accountId: ACCOUNT,
          agentId: a.id,
          userId: "gus",
          text: "The user has a dog named Biscuit.",
          limit: 0,
        });
        expect(await promptFor(a.id, "gus", question, plain)).not.toContain(HEADING);
      } finally {
        await plain.close();
      }
      await h.conversation.memories.idle();
    });

    it("stores a memory when its embedding fails, and recalls by full text while the provider fails", async () => {
      const a = agent();
      embeddings.failWith(500, true);
      try {
        const memory = await remember(a.id, "ivy", "The user's sister lives in Oslo.");
        expect(memory.text).toBe("The user's sister lives in Oslo.");
        await h.conversation.memoryVectors.idle();
        const { memories } = await h.client.listMemories({
          accountId: ACCOUNT,
          agentId: a.id,
          userId: "ivy",
        });
        expect(memories.map((m) => m.text)).toEqual(["The user's sister lives in Oslo."]);
        // The message's embedding fails too: the turn is answered, with the memory found by its words.
        expect(await promptFor(a.id, "ivy", "Should I visit Oslo in winter?")).toContain(
          "- The user's sister lives in Oslo.",
        );
      } finally {
        embeddings.recover();
      }
      await h.conversation.memories.idle();
    });

    it("gives the memories a turn's extraction learns their vectors", async () => {
      const a = agent();
      h.openai.answerExtraction(["The user owns a red automobile."]);
      await h.client.sendMessage({
        accountId: ACCOUNT,
        agent: a,
        text: "I just bought a car!",
        userId: "jo",
      });
      await h.openai.waitForExtractions(1);
      await h.conversation.memories.idle();
      await h.conversation.memoryVectors.idle();
      expect(embeddings.inputs).toContainEqual(["The user owns a red automobile."]);
      // "vehicle" and "automobile" are one meaning to the fake model, and no word in common.
      expect(await promptFor(a.id, "jo", "Where can I park my vehicle?")).toContain(
        "- The user owns a red automobile.",
      );
      await h.conversation.memories.idle();
    });
  });

  describe("documents by embeddings", () => {
    it("finds a passage full text misses by its chunks' vectors, and cites it; without a provider it is missed", async () => {
      const a = agent();
      const text = "Ferries may not carry a canine below deck.";
      const { document } = await h.client.createDocument({
        accountId: ACCOUNT,
        agentId: a.id,
        contentType: "text/plain",
        content: new TextEncoder().encode(text),
        title: "Rules",
        source: "",
      });
      await h.conversation.memoryVectors.idle();
      expect(embeddings.inputs.flat()).toContain(text);

      // No word in common with the chunk ("puppy" and "canine" mean one thing to the embeddings server).
      const question = "Is my puppy allowed?";
      const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: question });
      expect(systemOf(h.openai.lastRequest.body)).toContain(text);
      expect(reply!.citations.map((c) => [c.documentId, c.chunk, c.score])).toEqual([[document!.id, 0, 1]]);

      const plain = await startHarness();
      try {
        await plain.client.createDocument({
          accountId: ACCOUNT,
          agentId: a.id,
          contentType: "text/plain",
          content: new TextEncoder().encode(text),
          title: "Rules",
          source: "",
        });
        const { reply: missed } = await plain.client.sendMessage({
          accountId: ACCOUNT,
          agent: a,
          text: question,
        });
        expect(systemOf(plain.openai.lastRequest.body)).not.toContain(text);
        expect(missed!.citations).toEqual([]);
      } finally {
        await plain.close();
      }
    });
  });
}

describe("the OpenAI-compatible embeddings client", () => {
  it("sends the key and model, answers unit vectors in input order, and maps a refusal to a provider error", async () => {
    const embedder = createOpenAIEmbedder({
      model: "fake-embed",
      baseURL: embeddings.baseURL,
      apiKey: EMBEDDINGS_KEY,
      timeoutMs: 5_000,
    });
    const [first, second] = await embedder.embed(["a cat", "a dog"], AbortSignal.timeout(5_000));
    const length = (v: Float32Array) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
    expect(length(first!)).toBeCloseTo(1, 5);
    expect(Array.from(second!)).toEqual(embeddings.vector("a dog").map((x) => Math.fround(x)));
    embeddings.failWith(429);
    await expect(embedder.embed(["a cat"], AbortSignal.timeout(5_000))).rejects.toMatchObject({
      code: "AGENT_UNAVAILABLE",
    });
  });
});
