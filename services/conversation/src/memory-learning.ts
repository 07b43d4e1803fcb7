import type { BudgetLedger, Charge } from "@agentry/budgets";
import { asAppError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import {
  EXTRACTION_MAX_TOKENS,
  EXTRACTION_PROMPT,
  extractionMessage,
  KNOWN_MEMORIES_SHOWN,
  newFacts,
  parseFacts,
} from "./memories.js";
import type { MemoryVectors } from "./memory-vectors.js";
import type { ModelProvider } from "./providers/types.js";
import type { CallRecord, ConversationStore, MemoryOwner } from "./store/types.js";

/** One answered turn to learn from. */
export interface LearnFrom {
  owner: MemoryOwner;
  /** The model that answered the turn, which is asked. */
  provider: ModelProvider;
  model: string;
  /** The user's message: its id is the memories' source. */
  messageId: string;
  userText: string;
  replyText: string;
  /** The agent's `settings.memoryLimit`. */
  limit: number;
  /** For the usage of the extraction call. */
  apiKeyId: string | null;
  requestId: string | null;
}

/**
 * Memory extraction after a turn (docs/api/memories.md, "Extraction"): the agent's model is asked, in the
 * background, for the durable facts the exchange told about the user, and the new ones are stored. It never
 * delays or fails the turn: every failure is logged and forgotten. Its tokens count in the usage of the agent and
 * user (not as a message).
 */
export class MemoryLearning {
  private readonly pending = new Set<Promise<void>>();
  private readonly aborts = new AbortController();

  constructor(
    private readonly store: ConversationStore,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    /** Where the memories learnt get their vectors, and the known ones are recalled through. */
    private readonly vectors?: MemoryVectors,
    /** The agent's and the account's spend budgets, which an extraction reserves against like a message. */
    private readonly budgets?: BudgetLedger,
  ) {}

  /**
   * Starts learning from a turn and returns at once. Not with the local model: on the machine that serves it, an
   * extraction would hold the model the next replies wait for.
   */
  learn(turn: LearnFrom): void {
    if (this.aborts.signal.aborted || turn.provider.name === "local") return;
    const job = this.extract(turn)
      .catch((error: unknown) => {
        this.logger.warn(
          { agentId: turn.owner.agentId, err: error instanceof Error ? error.message : String(error) },
          "memory extraction failed",
        );
      })
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  /** Resolves once every extraction started so far has ended. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Abandons the extractions under way and waits for them to end. */
  async close(): Promise<void> {
    this.aborts.abort();
    await this.idle();
  }

  /** The extraction's charge; false when a budget of the agent or the account is spent (it is then skipped). */
  private async admit(turn: LearnFrom): Promise<Charge | null | false> {
    if (!this.budgets) return null;
    try {
      // Reserves nothing, so an extraction never holds back a message: it runs while the budgets have room.
      return await this.budgets.admit(
        { accountId: turn.owner.accountId, agentId: turn.owner.agentId, apiKeyId: "" },
        { sideCall: true },
      );
    } catch (error) {
      if (asAppError(error).code !== "BUDGET_EXCEEDED") throw error;
      this.logger.info({ agentId: turn.owner.agentId }, "memory extraction skipped: a budget is spent");
      return false;
    }
  }

  private async extract(turn: LearnFrom): Promise<void> {
    const { owner } = turn;
    const exchange = `${turn.userText}\n${turn.replyText}`;
    const known = await (this.vectors?.relevant(owner, exchange, KNOWN_MEMORIES_SHOWN) ??
      this.store.relevantMemories(owner, exchange, KNOWN_MEMORIES_SHOWN));
    const charge = await this.admit(turn);
    if (charge === false) return;
    const started = performance.now();
    const signal = AbortSignal.any([this.aborts.signal, AbortSignal.timeout(this.timeoutMs)]);
    let answer: Awaited<ReturnType<ModelProvider["complete"]>>;
    try {
      answer = await turn.provider.complete(
        {
          model: turn.model,
          system: EXTRACTION_PROMPT,
          messages: [{ role: "user", text: extractionMessage(known, turn.userText, turn.replyText) }],
          maxTokens: EXTRACTION_MAX_TOKENS,
          temperature: 0,
        },
        signal,
      );
    } catch (error) {
      await charge?.release();
      throw error;
    }
    await charge?.settle({ model: answer.model, ...answer.usage });
    if (answer.usage.inputTokens + answer.usage.outputTokens > 0) {
      await this.store.recordTokens(extractionCall(turn, answer.model, answer.usage, started));
    }
    const memories = newFacts(parseFacts(answer.text), known, turn.messageId);
    if (memories.length === 0) return;
    const stored = await this.store.addMemories(owner, memories, turn.limit);
    this.vectors?.index(
      owner,
      stored.filter((entry) => entry.created).map((entry) => entry.memory),
    );
    this.logger.debug(
      { agentId: owner.agentId, learnt: stored.filter((entry) => entry.created).length },
      "memories learnt",
    );
  }
}

/** The usage of an extraction, as the call record whose tokens `recordTokens` adds to the rollups. */
function extractionCall(
  turn: LearnFrom,
  model: string,
  usage: { inputTokens: number; outputTokens: number },
  started: number,
): CallRecord {
  return {
    accountId: turn.owner.accountId,
    agentId: turn.owner.agentId,
    userId: turn.owner.userId,
    roomId: "",
    id: turn.messageId,
    requestId: turn.requestId,
    apiKeyId: turn.apiKeyId,
    provider: turn.provider.name,
    model,
    stream: false,
    outcome: "completed",
    errorCode: null,
    errorMessage: null,
    latencyMs: Math.round(performance.now() - started),
    firstTokenMs: null,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    createdAt: new Date().toISOString(),
  };
}
