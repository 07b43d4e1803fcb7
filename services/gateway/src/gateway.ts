import { BudgetLedger } from "@agentry/budgets";
import {
  createMemoryLimiter,
  createRedisLimiter,
  type Limiter,
  MemorySpendMeter,
  RedisSpendMeter,
  type SpendMeter,
} from "@agentry/limits";
import { type Logger, OutageLog } from "@agentry/logging";
import type { Metrics } from "@agentry/observability";
import type { Catalogue } from "@agentry/plugin-kit";
import {
  AccountService,
  AgentService,
  BudgetService,
  ConnectorService,
  ConversationService,
  IdempotencyService,
  PluginService,
  WebhookService,
} from "@agentry/proto";
import type { DependencyState } from "@agentry/rpc";
import { createClient, type Transport } from "@connectrpc/connect";
import type Koa from "koa";
import { buildApp } from "./app.js";
import type { GatewayConfig } from "./config.js";
import type { GatewayContext, GatewayState } from "./context.js";
import { Authenticator } from "./http/auth.js";
import { budgetsMiddleware } from "./http/budgets.js";
import { ConsoleSessions } from "./http/console-session.js";
import { KeyUsageRecorder } from "./http/key-usage.js";
import { concurrencyMiddleware, limitsMiddleware } from "./http/limits.js";
import { observedLimiter } from "./http/observe.js";
import { ProviderCatalog } from "./providers.js";
import { serverStreamingFn } from "./server-streaming.js";
import { RedisTaskStore } from "./standard/a2a-tasks.js";

/**
 * How long the conversation service's providers are trusted before it is asked again. They change only when it
 * restarts with another configuration; a rollout that changes them is seen within this time.
 */
const PROVIDER_CATALOG_TTL_MS = 30_000;
/** With no answer yet, how long agent writes skip the check instead of waiting on a service that is down. */
const PROVIDER_CATALOG_RETRY_MS = 1_000;

export interface GatewayOptions {
  config: GatewayConfig;
  logger: Logger;
  /** Where each service's RPCs go: h2c to other processes, or in process. */
  transports: { registry: Transport; conversation: Transport; webhooks: Transport; connectors?: Transport };
  /** Whether each service the gateway calls answers, as `/readyz` reports it (the limiter's store is added). */
  dependencies: Record<string, () => Promise<boolean>>;
  /** The installed plugins, built by the composition root from `builtinPlugins`. */
  catalogue: Catalogue;
  /** The process's metrics, when METRICS_PORT is set. */
  metrics?: Metrics;
  /** The clock budgets' periods follow (epoch milliseconds); tests move it across a period's end. */
  now?: () => number;
  /**
   * The meter budgets count on, when the process shares one with its conversation service (`createSpendMeter`);
   * unset, the limiter's Redis with REDIS_URL, else one of the gateway's own memory.
   */
  meter?: SpendMeter;
}

export interface Gateway {
  app: Koa<GatewayState>;
  context: GatewayContext;
  /**
   * Work the process does besides answering requests (an embedded webhooks service's deliveries), told on
   * SIGTERM to finish within `graceMs` while requests drain, before `close`.
   */
  drain?(graceMs: number): Promise<void>;
  /** Writes the last batch of key uses and closes the limiter; the services it calls are closed by their owner. */
  close(): Promise<void>;
}

/**
 * A budgets' meter for a process whose conversation service calls models beside its gateway: on REDIS_URL's Redis
 * (the same counters as every gateway's), else in memory, to give both the gateway and the conversation service,
 * so that one count is exact in the process.
 */
export function createSpendMeter(
  config: { REDIS_URL?: string | undefined },
  logger: Logger,
  now?: () => number,
): { meter: SpendMeter; close(): Promise<void> } {
  if (!config.REDIS_URL) return { meter: new MemorySpendMeter(now), close: async () => undefined };
  const redis = createRedisLimiter({ url: config.REDIS_URL, availability: new OutageLog(logger, "redis") });
  return { meter: new RedisSpendMeter(redis), close: () => redis.close() };
}

/** The REST gateway over the services it calls: its limiter, its RPC clients, its key cache, its Koa app. */
export function buildGateway(options: GatewayOptions): Gateway {
  const { config, logger, metrics } = options;
  const { registry, conversation, webhooks } = options.transports;
  const redisLimiter = config.REDIS_URL
    ? createRedisLimiter({ url: config.REDIS_URL, availability: new OutageLog(logger, "redis") })
    : undefined;
  const backend: Limiter = redisLimiter ?? createMemoryLimiter();
  // Budgets count on the limiter's Redis when there is one, so they are exact across gateways.
  const meter =
    options.meter ?? (redisLimiter ? new RedisSpendMeter(redisLimiter) : new MemorySpendMeter(options.now));
  const a2aTasks = config.REDIS_URL
    ? new RedisTaskStore({ url: config.REDIS_URL, availability: new OutageLog(logger, "redis") })
    : undefined;
  const limiter = metrics ? observedLimiter(backend, metrics) : backend;
  const dependencies: Record<string, () => Promise<boolean>> = {
    ...options.dependencies,
    ...(config.REDIS_URL ? { redis: async () => backend.available() } : {}),
  };

  const accounts = createClient(AccountService, registry);
  const keyUsage = new KeyUsageRecorder(accounts, logger, config.KEY_USAGE_FLUSH_MS);
  const conversations = {
    ...createClient(ConversationService, conversation),
    streamMessage: serverStreamingFn(conversation, ConversationService.method.streamMessage),
    exportUser: serverStreamingFn(conversation, ConversationService.method.exportUser),
  };
  const providers = new ProviderCatalog({
    load: async () => {
      const listed = await conversations.listProviders({}, { timeoutMs: config.RPC_TIMEOUT_MS });
      return {
        providers: listed.providers.map(({ name, defaultModel, models }) => ({ name, defaultModel, models })),
        defaultProvider: listed.defaultProvider,
      };
    },
    ttlMs: PROVIDER_CATALOG_TTL_MS,
    retryMs: PROVIDER_CATALOG_RETRY_MS,
    logger,
  });
  const agents = createClient(AgentService, registry);
  const webhookClient = createClient(WebhookService, webhooks);
  const budgets = createClient(BudgetService, registry);
  const ledger = new BudgetLedger({
    meter,
    prices: config.PRICES,
    budgets,
    agents,
    conversations,
    webhooks: webhookClient,
    logger,
    cacheTtlMs: config.AUTH_CACHE_TTL_MS,
    estimateTokens: config.BUDGET_ESTIMATE_TOKENS,
    rpcTimeoutMs: config.RPC_TIMEOUT_MS,
    ...(options.now ? { now: options.now } : {}),
  });
  const context: GatewayContext = {
    config,
    logger,
    agents,
    budgets,
    ledger,
    prices: config.PRICES,
    accounts,
    idempotency: createClient(IdempotencyService, registry),
    conversations,
    webhooks: webhookClient,
    ...(options.transports.connectors
      ? { connectors: createClient(ConnectorService, options.transports.connectors) }
      : {}),
    plugins: createClient(PluginService, registry),
    catalogue: options.catalogue,
    providers,
    auth: new Authenticator(accounts, config.AUTH_CACHE_TTL_MS),
    sessions: new ConsoleSessions(
      accounts,
      { idleMs: config.CONSOLE_SESSION_IDLE_MS, absoluteMs: config.CONSOLE_SESSION_MAX_MS },
      config.AUTH_CACHE_TTL_MS,
    ),
    keyUsage,
    ...(metrics ? { metrics } : {}),
    ...(a2aTasks ? { a2aTasks } : {}),
    dependencies: async () => {
      const states = await Promise.all(
        Object.entries(dependencies).map(
          async ([name, check]): Promise<[string, DependencyState]> => [
            name,
            (await check().catch(() => false)) ? "up" : "down",
          ],
        ),
      );
      return Object.fromEntries(states);
    },
    draining: false,
  };
  const limitOptions = { limiter, logger, leaseMs: config.CONCURRENCY_LEASE_MS };
  const slots = concurrencyMiddleware(limitOptions);
  const spend = budgetsMiddleware(ledger);
  return {
    app: buildApp(context, {
      limits: limitsMiddleware(limitOptions),
      // Budgets after the concurrency slot: a request it refuses reserves nothing.
      admission: (route) => {
        const slot = slots(route);
        const budgeted = spend(route);
        if (!slot || !budgeted) return slot ?? budgeted;
        return (ctx, next) => slot(ctx, () => budgeted(ctx, next));
      },
    }),
    context,
    async close() {
      await limiter.close();
      await a2aTasks?.close();
      await keyUsage.close();
    },
  };
}
