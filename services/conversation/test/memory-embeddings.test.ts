import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIEmbedder } from "../src/embeddings.js";
import { type FakeEmbeddingsServer, type OpenAIChatBody, startFakeEmbeddings } from "../src/testing/index.js";
import { ACCOUNT, agent, type Harness, startHarness } from "./harness.js";

const HEADING = "What you remember about this user from earlier conversations:";
const EMBEDDINGS_KEY = "sk-test-embeddings-0123456789";

let embeddings: FakeEmbeddingsServer;
let h: Harness;
beforeAll(async () => {
  embeddings = await startFakeEmbeddings();
  h = await startHarness({
    embeddings: {
      provider: "openai",
      model: "fake-embed",
      baseURL: embeddings.baseURL,
      apiKey: EMBEDDINGS_KEY,
      timeoutMs: 5_000,
    },
  });
});
afterAll(async () => {
  await h?.close();
  await embeddings?.close();
});

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
    const gus = await promptFor(a.id, "gus", question);
    expect(gus).toContain(`${HEADING}\n- The user has a dog named Biscuit.`);
    expect(gus).not.toContain("Rex");
    expect(embeddings.inputs.at(-1)).toEqual([question]);

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
      const { memories } = await h.client.listMemories({ accountId: ACCOUNT, agentId: a.id, userId: "ivy" });
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
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "I just bought a car!", userId: "jo" });
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
