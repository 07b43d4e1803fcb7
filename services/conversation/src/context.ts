import type { BudgetLedger } from "@agentry/budgets";
import type { Logger } from "@agentry/logging";
import type { IdempotentSends } from "./idempotent-sends.js";
import type { MemoryLearning } from "./memory-learning.js";
import type { MemoryVectors } from "./memory-vectors.js";
import type { MessageRuns } from "./message-runs.js";
import type { ProviderSet } from "./providers/resolve.js";
import type { ConversationStore } from "./store/types.js";
import type { PluginRuntime } from "./tools.js";

export interface ConversationLimits {
  /** CONTEXT_TOKEN_BUDGET: estimated tokens of history sent with each message. */
  contextTokenBudget: number;
  /** PROVIDER_TIMEOUT_MS: the whole provider call. */
  timeoutMs: number;
  /** PROVIDER_FIRST_TOKEN_TIMEOUT_MS: until the first text of a streamed reply. */
  firstTokenTimeoutMs: number;
  /**
   * The whole turn, its tool calls included, from the message's arrival; the caller's RPC deadline, when
   * sooner, bounds it too.
   */
  turnTimeoutMs: number;
}

/** What generating one message uses (service.ts), and the runs that carry it (message-runs.ts). */
export interface TurnContext {
  store: ConversationStore;
  providers: ProviderSet;
  logger: Logger;
  limits: ConversationLimits;
  /** The installed plugins and the registry's PluginService; unset, agents' plugins offer no tools. */
  plugins?: PluginRuntime;
  /**
   * Set when a webhooks service takes the message events: sends then write them to the outbox, and `written` is
   * told after each commit that wrote one, so the relay publishes it at once. Unset, sends write no events.
   */
  events?: { written(): void };
  /** Memory extraction after turns; unset, no memories are learnt (they are still recalled). */
  memories?: MemoryLearning;
  /** Memories' vectors and the recall that uses them; unset, recall is by full text and no vectors are made. */
  memoryVectors?: MemoryVectors;
  /**
   * Spend budgets for the model calls that pass no gateway (messages with `enforceBudgets`, memory extraction);
   * unset, only the gateways enforce budgets.
   */
  budgets?: BudgetLedger;
}

/** Everything the handlers use, built once by `buildConversation`; handlers reach for nothing else. */
export interface ConversationContext extends TurnContext {
  /** The event logs of streamed and background messages. */
  runs: MessageRuns;
  /** Messages sent with an Idempotency-Key, answered once. */
  sends: IdempotentSends;
}
