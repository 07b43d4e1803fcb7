import { BudgetLedger, type BudgetLedgerOptions } from "@agentry/budgets";
import { DEFAULT_AUDIT_RETENTION_DAYS, pruneAuditEvents, repeatEvery } from "@agentry/core";
import type { Logger } from "@agentry/logging";
import { type Metrics, traceMethods } from "@agentry/observability";
import { OutboxRelay, type PublishEvents, publishingConsumer } from "@agentry/outbox";
import { GetUsageRequestSchema } from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { DEFAULT_CONTEXT_TOKEN_BUDGET } from "./config.js";
import type { ConversationContext, TurnContext } from "./context.js";
import { createEmbedder, type EmbeddingsConfig } from "./embeddings.js";
import { publicEvent } from "./events.js";
import { IdempotentSends } from "./idempotent-sends.js";
import { MemoryLearning } from "./memory-learning.js";
import { MemoryVectors } from "./memory-vectors.js";
import { DEFAULT_STREAM_RETENTION_MS, MessageRuns, type RunLeases } from "./message-runs.js";
import { observeProviders } from "./providers/observed.js";
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_PROVIDER_TIMEOUT_MS,
  ProviderSet,
  type ProvidersConfig,
} from "./providers/resolve.js";
import { conversationRoutes, usageReport } from "./routes.js";
import { type AgentDirectory, Scheduler } from "./schedules.js";
import { openConversationStore } from "./store/open.js";
import type { ConversationStore, OutboxEvent } from "./store/types.js";
import type { PluginRuntime } from "./tools.js";

/** How long a whole turn, tool calls included, may take when the caller sets no deadline. */
export const DEFAULT_TURN_TIMEOUT_MS = 120_000;

/** How often audit events past their retention are removed. */
const AUDIT_PRUNE_MS = 60 * 60 * 1000;

export interface BuildConversationOptions {
  /** Directory of the embedded database (`<dataDir>/conversation.db`). */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL) for the store; without it, SQLite in `dataDir`. */
  databaseUrl?: string;
  logger: Logger;
  providers: ProvidersConfig;
  /** CONTEXT_TOKEN_BUDGET; 3000 when unset. */
  contextTokenBudget?: number;
  /** A store to use instead of the embedded one; it is closed with the service. */
  store?: ConversationStore;
  /** Where provider calls, tokens and errors are counted; nothing is counted without it. */
  metrics?: Metrics;
  /**
   * Where message events go for webhooks (`publishWith` of `@agentry/outbox` makes `publish` of a WebhookService
   * client): sends write `message.completed` and `message.failed` to the outbox in their transactions, and a
   * relay publishes them, at least once each. Without it sends write no events, so that nothing piles up for a
   * webhooks service that is not there.
   */
  webhooks?: { publish: PublishEvents };
  /** How often the outbox is read besides right after each event; 1 s when unset. */
  outboxIntervalMs?: number;
  /**
   * The installed plugins (`Catalogue`) and the registry's PluginService (secrets, knowledge search), for the
   * tools agents call during a turn. Without it, agents' plugins offer no tools.
   */
  plugins?: PluginRuntime;
  /** The longest a turn may take, tool calls included, when the caller sets no deadline; 120 s when unset. */
  turnTimeoutMs?: number;
  /** EMBEDDINGS_*: the embedding provider memories are also recalled by; unset, recall is by full text alone. */
  embeddings?: EmbeddingsConfig;
  /** STREAM_RETENTION: how long a message's events are kept after it ends; 1 h when unset. */
  streamRetentionMs?: number;
  /** false: streams keep no event log, so they cannot be resumed (the benchmark's baseline). Default true. */
  keepStreams?: boolean;
  /** Background messages' leases (RUN_LEASE_MS, …); 10 s, renewed every 3 s, looked for every 2 s when unset. */
  runLeases?: Partial<RunLeases>;
  /** TOOL_APPROVAL_TIMEOUT: how long a message paused for tool approval waits before it fails; 24 h when unset. */
  approvalTimeoutMs?: number;
  /** false: background messages hold no lease and are not taken over (the benchmark's baseline). Default true. */
  durableRuns?: boolean;
  /**
   * Where schedules read their agent at fire time (the registry's AgentService). Without it schedules can be
   * written and read, but nothing fires here.
   */
  agents?: AgentDirectory;
  /** SCHEDULE_SCAN_MS: how often due schedules are looked for; 5 s when unset. */
  scheduleScanMs?: number;
  /** AUDIT_RETENTION_DAYS: audit events older than this are removed; 0 keeps them forever (365 by default). */
  auditRetentionDays?: number;
  /**
   * Spend budgets for the model calls that pass no gateway (platform turns, schedule fires, memory extraction):
   * the registry's budgets and agents, where alerts go, and the meter. The meter must be the gateways': their Redis
   * one, or, in one process, the gateway's own instance. Unset, only the gateways enforce budgets.
   */
  budgets?: Omit<BudgetLedgerOptions, "conversations" | "logger">;
}

export interface Conversation {
  /** The ConversationService RPCs, for `connectNodeAdapter({ routes })` or `createRouterTransport(routes)`. */
  routes: (router: ConnectRouter) => void;
  store: ConversationStore;
  /** Memory extraction after turns: `idle()` resolves once those started so far have ended. */
  memories: MemoryLearning;
  /** Memories' vectors, made in the background: `idle()` resolves once those started so far have ended. */
  memoryVectors: MemoryVectors;
  /** Publishes the outbox's message events to the webhooks service; absent without `webhooks`. */
  relay?: OutboxRelay<OutboxEvent>;
  /** Whether the store answers: what readiness reports. */
  ready(): Promise<boolean>;
  /**
   * Cancels the messages still generated here (their logs end as failed), stops the relay (events it has not
   * published wait in the outbox for the next start), closes the store and frees the local model. Stop serving
   * first.
   */
  close(): Promise<void>;
}

/** The composition root: builds the store, the providers and the routes once, as one context. */
export async function buildConversation(options: BuildConversationOptions): Promise<Conversation> {
  const logger = options.logger;
  const store =
    options.store ??
    (await openConversationStore({ dataDir: options.dataDir, databaseUrl: options.databaseUrl, logger }));
  const traced = traceMethods(store, "conversation.store");
  const relay = options.webhooks
    ? new OutboxRelay<OutboxEvent>({
        source: {
          pending: (limit) => traced.pendingEvents(limit),
          delivered: (events) => traced.removeEvents(events.map((event) => event.seq)),
        },
        consumer: publishingConsumer(options.webhooks.publish, publicEvent),
        logger,
        name: "message events",
        ...(options.outboxIntervalMs !== undefined ? { intervalMs: options.outboxIntervalMs } : {}),
      })
    : undefined;
  const timeoutMs = options.providers.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  const memoryVectors = new MemoryVectors(traced, createEmbedder(options.embeddings), logger);
  await memoryVectors.describe();
  // Counters new to the meter start from the usage this store holds, as the gateways' do through GetUsage.
  const budgets = options.budgets
    ? new BudgetLedger({
        ...options.budgets,
        conversations: {
          getUsage: (request) => usageReport(traced, create(GetUsageRequestSchema, request)),
        },
        logger,
      })
    : undefined;
  const memories = new MemoryLearning(traced, logger, timeoutMs, memoryVectors, budgets);
  const turns: TurnContext = {
    store: traced,
    providers: new ProviderSet(options.providers, logger, options.dataDir),
    logger,
    limits: {
      contextTokenBudget: options.contextTokenBudget ?? DEFAULT_CONTEXT_TOKEN_BUDGET,
      timeoutMs,
      firstTokenTimeoutMs: options.providers.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
      turnTimeoutMs: options.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS,
    },
    ...(options.plugins ? { plugins: options.plugins } : {}),
    // The relay publishes a turn's event at once after the commit that wrote it.
    ...(relay ? { events: { written: () => relay.kick() } } : {}),
    memories,
    memoryVectors,
    ...(budgets ? { budgets } : {}),
  };
  // Each layer is handed the one below it: turns (service.ts) ← runs ← keyed sends.
  const runs = new MessageRuns(turns, {
    retentionMs: options.streamRetentionMs ?? DEFAULT_STREAM_RETENTION_MS,
    ...options.runLeases,
    ...(options.approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs: options.approvalTimeoutMs }),
    ...(options.durableRuns === undefined ? {} : { durable: options.durableRuns }),
    ...(options.keepStreams === undefined ? {} : { keepStreams: options.keepStreams }),
  });
  const ctx: ConversationContext = { ...turns, runs, sends: new IdempotentSends(turns.store, runs, logger) };
  ctx.runs.start();
  const scheduler = options.agents
    ? new Scheduler(turns.store, runs, options.agents, logger, {
        ...(options.scheduleScanMs !== undefined ? { scanMs: options.scheduleScanMs } : {}),
        ...(options.runLeases?.leaseMs !== undefined ? { startWithinMs: options.runLeases.leaseMs } : {}),
      })
    : undefined;
  if (scheduler) scheduler.start();
  else logger.info("no agent directory (REGISTRY_URL): schedules are kept but do not fire here");
  ctx.sends.startSweep();
  const auditPruning = repeatEvery(AUDIT_PRUNE_MS, async () => {
    try {
      await pruneAuditEvents(options.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS, (before, limit) =>
        store.pruneAuditEvents(before, limit),
      );
    } catch (error) {
      logger.warn({ err: error }, "could not remove old audit events; trying again later");
    }
  });
  relay?.start();
  observeProviders(ctx.providers, options.metrics);
  if (ctx.providers.localByDefault) {
    logger.info(
      { model: ctx.providers.local?.defaultModel },
      "no hosted model provider is configured: agents without modelProvider use the local model " +
        "(DEFAULT_MODEL_PROVIDER with OPENAI_API_KEY/OPENAI_BASE_URL or ANTHROPIC_API_KEY chooses another)",
    );
  }
  if (options.providers.local?.preload && ctx.providers.local) {
    // A model that cannot be had is reported here and again, as MODEL_ERROR, by each message that needs it.
    await ctx.providers.local.warmUp().catch((error: unknown) => {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, "local model not loaded");
    });
  }
  return {
    routes: conversationRoutes(ctx),
    store,
    memories,
    memoryVectors,
    ...(relay ? { relay } : {}),
    ready: () =>
      store.ping().then(
        () => true,
        () => false,
      ),
    async close() {
      await auditPruning.stop();
      await scheduler?.close();
      await ctx.sends.close();
      await ctx.runs.close();
      await memories.close();
      await memoryVectors.close();
      await relay?.stop();
      await store.close();
      await ctx.providers.close();
    },
  };
}
