import type { Logger } from "@agentry/logging";
import type { Embedder } from "./embeddings.js";
import type { ConversationStore, MemoryOwner, MemoryRecord, MemoryVector } from "./store/types.js";

/** Chunks embedded per embeddings call: a 10 MiB document has some 10,000. */
const CHUNKS_PER_CALL = 64;

/**
 * Memories' and document chunks' vectors (docs/api/memories.md, "Recall"): computed in the background once memories are stored,
 * never delaying or failing the write, and the recall that fuses full-text and vector rankings when an
 * embedding provider is configured and the store searches vectors. Without either, recall is by full text, as
 * it is for a message whose vector cannot be had in time.
 */
export class MemoryVectors {
  private readonly pending = new Set<Promise<void>>();
  private readonly aborts = new AbortController();
  /** Whether the store ranks by vector; asked once. */
  private searches: Promise<boolean> | undefined;

  constructor(
    private readonly store: ConversationStore,
    private readonly embedder: Embedder | undefined,
    private readonly logger: Logger,
  ) {}

  /** Says at start what recall will use, so that an operator sees a missing extension before wondering. */
  async describe(): Promise<void> {
    if (!this.embedder) return;
    if (await this.searchesVectors()) {
      this.logger.info({ model: this.embedder.model }, "memories are recalled by full text and embeddings");
    } else {
      this.logger.warn(
        { model: this.embedder.model },
        "the store cannot search vectors (sqlite-vec did not load, or pgvector is not installed in the database): " +
          "memories are recalled by full text alone",
      );
    }
  }

  /** Starts computing the vectors of memories just stored and returns at once; a failure is logged, no more. */
  index(owner: MemoryOwner, memories: readonly Pick<MemoryRecord, "id" | "text">[]): void {
    const embedder = this.embedder;
    if (!embedder || memories.length === 0 || this.aborts.signal.aborted) return;
    const job = this.save(embedder, owner, memories)
      .catch((error: unknown) => {
        this.logger.warn(
          { agentId: owner.agentId, err: error instanceof Error ? error.message : String(error) },
          "memory embeddings failed: those memories are recalled by full text",
        );
      })
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  /**
   * Starts computing the vectors of a document's chunks (`chunks[i]` is chunk i) and returns at once, as `index`
   * does for memories; a failure leaves those chunks to full-text search.
   */
  indexChunks(accountId: string, agentId: string, documentId: string, chunks: readonly string[]): void {
    const embedder = this.embedder;
    if (!embedder || chunks.length === 0 || this.aborts.signal.aborted) return;
    const job = (async () => {
      for (let start = 0; start < chunks.length; start += CHUNKS_PER_CALL) {
        const batch = chunks.slice(start, start + CHUNKS_PER_CALL);
        const vectors = await embedder.embed(batch, this.aborts.signal);
        await this.store.saveChunkVectors(
          accountId,
          agentId,
          batch.map((_, i) => ({
            documentId,
            chunk: start + i,
            vector: { model: embedder.model, vector: vectors[i]! },
          })),
        );
      }
    })()
      .catch((error: unknown) => {
        this.logger.warn(
          { agentId, documentId, err: error instanceof Error ? error.message : String(error) },
          "document embeddings failed: its chunks are found by full text",
        );
      })
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  /**
   * The user's memories most relevant to `text`, at most `limit`: full text and vectors fused when both can be
   * had, else full text alone.
   */
  async relevant(owner: MemoryOwner, text: string, limit: number): Promise<MemoryRecord[]> {
    const query = await this.queryVector(owner, text);
    return this.store.relevantMemories(owner, text, limit, query);
  }

  /** Resolves once every embedding started so far has ended. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Abandons the embeddings under way and waits for them to end. */
  async close(): Promise<void> {
    this.aborts.abort();
    await this.idle();
  }

  private searchesVectors(): Promise<boolean> {
    this.searches ??= this.store.searchesVectors();
    return this.searches;
  }

  /** The vector of a message, or undefined without a provider, a store searching vectors, or in time. */
  async queryVector(owner: MemoryOwner, text: string): Promise<MemoryVector | undefined> {
    const embedder = this.embedder;
    if (!embedder || text.trim() === "" || !(await this.searchesVectors())) return undefined;
    try {
      const [vector] = await embedder.embed([text], this.aborts.signal);
      return vector ? { model: embedder.model, vector } : undefined;
    } catch (error) {
      this.logger.warn(
        { agentId: owner.agentId, err: error instanceof Error ? error.message : String(error) },
        "the message's embedding failed: memories and documents are searched by full text",
      );
      return undefined;
    }
  }

  private async save(
    embedder: Embedder,
    owner: MemoryOwner,
    memories: readonly Pick<MemoryRecord, "id" | "text">[],
  ): Promise<void> {
    const vectors = await embedder.embed(
      memories.map((memory) => memory.text),
      this.aborts.signal,
    );
    await this.store.saveMemoryVectors(
      owner,
      memories.map((memory, i) => ({
        memoryId: memory.id,
        vector: { model: embedder.model, vector: vectors[i]! },
      })),
    );
  }
}
