import { join } from "node:path";
import {
  CHUNKS_CONSIDERED,
  EXTRACTION_PROMPT,
  extractionMessage,
  KNOWN_MEMORIES_SHOWN,
  MEMORIES_RECALLED,
  newDocument,
  newMemory,
  openSqliteConversationStore,
} from "@agentry/conversation";
import { type FakeEmbeddingsServer, startFakeEmbeddings } from "@agentry/conversation/testing";
import { type Bench, log, median, percentile } from "../bench.js";

export interface Timing {
  p50: number;
  p99: number;
}

export interface MemoryRecallResult {
  memories: number;
  turns: number;
  extractions: number;
  dimensions: number;
  seedSeconds: number;
  /** Recall by full text alone (no embeddings provider). */
  fullText: Timing;
  /** Recall fusing full text and vectors, the message's vector already made. */
  hybrid: Timing;
  /** The embeddings call for the message, to the fake server on loopback. */
  embedding: Timing;
  /** What an extraction does in the store per turn: the known memories recalled, the new ones stored. */
  extractionStore: Timing;
  /** The extraction call's prompt, in characters, and tokens at four characters a token. */
  extractionPromptChars: number;
  /** Chunks of the agent's documents searched per turn. */
  chunks: number;
  /** Document retrieval by full text alone. */
  chunksFullText: Timing;
  /** Document retrieval fusing full text and the chunks' vectors. */
  chunksHybrid: Timing;
}

const VERBS = [
  "likes",
  "owns",
  "visited",
  "collects",
  "studies",
  "avoids",
  "repairs",
  "paints",
  "grows",
  "sells",
];
const THINGS = [
  "old bicycles",
  "green tea",
  "jazz records",
  "mountain maps",
  "sourdough bread",
  "vintage cameras",
  "board games",
  "wool sweaters",
  "electric guitars",
  "orchids",
  "spicy noodles",
  "sailing boats",
  "chess sets",
  "running shoes",
  "poetry books",
  "ceramic bowls",
  "model trains",
  "garden tools",
  "rare coins",
  "leather boots",
  "herbal soaps",
  "video games",
  "silver rings",
  "road atlases",
  "kites",
];
const PLACES = [
  "in Lisbon",
  "near Oslo",
  "at the market",
  "every spring",
  "with a sister",
  "for work",
  "on weekends",
  "in the attic",
  "since school",
  "after dinner",
  "in Kyoto",
  "by the river",
  "from Peru",
  "at night",
  "for a club",
  "with friends",
  "in winter",
  "in Toronto",
  "on holiday",
  "at the office",
];
const QUESTIONS = [
  (thing: string, place: string) => `Can you suggest something about ${thing} ${place}?`,
  (thing: string) => `I was thinking about ${thing} again, any ideas for this weekend?`,
  (_thing: string, place: string) => `What should I plan ${place} this year?`,
  () => "Good morning! How are you today?",
];

/**
 * Recall per turn over a user's memories on SQLite, in the benchmark's process against the store itself (what a
 * turn adds before its provider call): full text alone, and fused with vectors of the fake embeddings server (a
 * hashed bag of words, 256 dimensions; a hosted model's take the same time per dimension). Also what an
 * extraction costs a turn besides the model call: the store's work and the size of its prompt.
 */
export async function memoryRecall(
  bench: Bench,
  memories = 10_000,
  turns = 1_000,
  extractions = 200,
  chunks = 1_000,
): Promise<MemoryRecallResult> {
  const dataDir = join(bench.dir, "memory-recall");
  const store = openSqliteConversationStore({ dataDir });
  const embeddings = await startFakeEmbeddings({ dimensions: 256 });
  const owner = { accountId: "acct_bench", agentId: "agt_bench", userId: "reader" };
  const model = "fake-embed";
  try {
    const started = performance.now();
    const texts = factTexts(memories);
    for (let i = 0; i < texts.length; i += 500) {
      const batch = texts.slice(i, i + 500).map((text) => newMemory(text, "msg_bench")!);
      const stored = await store.addMemories(owner, batch, memories);
      await store.saveMemoryVectors(
        owner,
        stored.map(({ memory }) => ({
          memoryId: memory.id,
          vector: vectorOf(embeddings, model, memory.text),
        })),
      );
    }
    // Another user of the same agent with as many: recall must not pay for them.
    const other = { ...owner, userId: "neighbour" };
    for (let i = 0; i < texts.length; i += 500) {
      const batch = texts.slice(i, i + 500).map((text) => newMemory(`${text} too`, "msg_bench")!);
      await store.addMemories(other, batch, memories);
    }
    const seedSeconds = (performance.now() - started) / 1000;
    log(`stored ${memories} memories for each of two users in ${seedSeconds.toFixed(1)} s`);

    const messages = Array.from({ length: turns }, (_, i) => {
      const question = QUESTIONS[i % QUESTIONS.length]!;
      return question(THINGS[(i * 7) % THINGS.length]!, PLACES[(i * 3) % PLACES.length]!);
    });
    const time = async (
      run: (message: string, i: number) => Promise<unknown>,
      count = turns,
    ): Promise<Timing> => {
      for (const [i, message] of messages.slice(0, 50).entries()) await run(message, i);
      const samples: number[] = [];
      for (const [i, message] of messages.slice(0, count).entries()) {
        const start = performance.now();
        await run(message, i);
        samples.push(performance.now() - start);
      }
      return { p50: median(samples), p99: percentile(samples, 99) };
    };

    log(`recalling ${MEMORIES_RECALLED} of ${memories} memories, ${turns} turns, full text ...`);
    const fullText = await time((message) => store.relevantMemories(owner, message, MEMORIES_RECALLED));
    const queries = messages.map((message) => vectorOf(embeddings, model, message));
    log("... fused with vectors ...");
    const hybrid = await time((message, i) =>
      store.relevantMemories(owner, message, MEMORIES_RECALLED, queries[i]),
    );
    const { createOpenAIEmbedder } = await import("@agentry/conversation");
    const embedder = createOpenAIEmbedder({ model, baseURL: embeddings.baseURL, timeoutMs: 5_000 });
    log("... the message's embedding call ...");
    const embedding = await time((message) => embedder.embed([message], AbortSignal.timeout(5_000)));

    log("extraction's work in the store per turn ...");
    let promptChars = 0;
    let n = 0;
    const extractionStore = await time(async (message) => {
      const reply = "Here is an idea: start small, and keep notes of what you enjoy most.";
      const known = await store.relevantMemories(owner, `${message}\n${reply}`, KNOWN_MEMORIES_SHOWN);
      promptChars = EXTRACTION_PROMPT.length + extractionMessage(known, message, reply).length;
      const fact = newMemory(`The user asked about plan number ${n++}.`, "msg_bench")!;
      const stored = await store.addMemories(owner, [fact], memories);
      await store.saveMemoryVectors(
        owner,
        stored.map(({ memory }) => ({
          memoryId: memory.id,
          vector: vectorOf(embeddings, model, memory.text),
        })),
      );
    }, extractions);
    log(`${chunks} document chunks for the agent, retrieval per turn ...`);
    const chunkTexts = factTexts(chunks * 3);
    for (let i = 0; i < chunks; i++) {
      // One chunk per document, of three facts: a chunk as long as a short paragraph.
      const text = chunkTexts.slice(i * 3, i * 3 + 3).join(" ");
      const document = newDocument(
        { title: `Notes ${i}`, type: "text/plain", sizeBytes: text.length, source: "" },
        text,
      );
      const stored = await store.addDocument(owner.accountId, owner.agentId, document);
      await store.saveChunkVectors(owner.accountId, owner.agentId, [
        { documentId: stored!.id, chunk: 0, vector: vectorOf(embeddings, model, text) },
      ]);
    }
    const chunksFullText = await time((message) =>
      store.relevantChunks(owner.accountId, owner.agentId, message, CHUNKS_CONSIDERED),
    );
    const chunksHybrid = await time((message, i) =>
      store.relevantChunks(owner.accountId, owner.agentId, message, CHUNKS_CONSIDERED, queries[i]),
    );
    return {
      chunks,
      chunksFullText,
      chunksHybrid,
      memories,
      turns,
      extractions,
      dimensions: embeddings.dimensions,
      seedSeconds,
      fullText,
      hybrid,
      embedding,
      extractionStore,
      extractionPromptChars: promptChars,
    };
  } finally {
    await store.close();
    await embeddings.close();
  }
}

function vectorOf(embeddings: FakeEmbeddingsServer, model: string, text: string) {
  return { model, vector: Float32Array.from(embeddings.vector(text)) };
}

/** `count` distinct facts from the word lists, in a fixed order. */
function factTexts(count: number): string[] {
  const texts: string[] = [];
  for (let i = 0; texts.length < count; i++) {
    const verb = VERBS[i % VERBS.length]!;
    const thing = THINGS[Math.floor(i / VERBS.length) % THINGS.length]!;
    const place = PLACES[Math.floor(i / (VERBS.length * THINGS.length)) % PLACES.length]!;
    const round = Math.floor(i / (VERBS.length * THINGS.length * PLACES.length));
    texts.push(`The user ${verb} ${thing} ${place}${round > 0 ? ` (note ${round})` : ""}.`);
  }
  return texts;
}
