import { keyInDataDir } from "@agentry/config";
import { buildConnectors } from "@agentry/connectors";
import { buildConversation, registryAgents } from "@agentry/conversation";
import { buildGateway, createSpendMeter, type Gateway } from "@agentry/gateway";
import type { Logger } from "@agentry/logging";
import { Metrics, rpcInterceptors } from "@agentry/observability";
import { createGuardedFetch } from "@agentry/outbound";
import { publishWith } from "@agentry/outbox";
import { Catalogue, type Plugin } from "@agentry/plugin-kit";
import { builtinPlugins } from "@agentry/plugins";
import {
  AgentService,
  BudgetService,
  ConversationService,
  PluginService,
  WebhookService,
} from "@agentry/proto";
import { buildRegistry } from "@agentry/registry";
import { createInProcessTransport, remoteService, servedInterceptors } from "@agentry/rpc";
import { buildWebhooks } from "@agentry/webhooks";
import { createClient, type Transport } from "@connectrpc/connect";
import type { ServerConfig } from "./config.js";

export interface Server extends Gateway {
  /** The process's metrics (embedded services included) when METRICS_PORT is set; `main` serves them. */
  metrics?: Metrics;
}

/**
 * The all-in-one composition root. Each service whose URL is not configured (REGISTRY_URL, CONVERSATION_URL,
 * WEBHOOKS_URL, CONNECTORS_URL) runs inside this process and is called through the in-process transport (no sockets, no
 * encoding); with a URL, the same clients speak HTTP/2 to the service elsewhere. An embedded webhooks service
 * delivers from this process too, until SIGTERM (`drain`). The embedded registry and conversation service publish
 * their events to the webhooks service this process uses, embedded or not. `installed.plugins` are the plugins
 * whose tools agents' turns may call (the built-in ones by default).
 */
export async function composeServer(
  config: ServerConfig,
  logger: Logger,
  installed: { plugins?: readonly Plugin[]; now?: () => number } = {},
): Promise<Server> {
  const { gateway: gatewayConfig } = config;
  const closers: (() => Promise<void>)[] = [];
  const drains: ((graceMs: number) => Promise<void>)[] = [];
  const dependencies: Record<string, () => Promise<boolean>> = {};
  const metrics = gatewayConfig.METRICS_PORT === undefined ? undefined : new Metrics();
  const calls = rpcInterceptors("client", metrics);
  const served = rpcInterceptors("server", metrics);
  // What the gateway validates agents' plugins against and the conversation service runs tools of: one catalogue.
  const catalogue = new Catalogue(installed.plugins ?? builtinPlugins);

  let webhooksTransport: Transport;
  if (config.webhooks) {
    const webhooks = await buildWebhooks({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      logger: logger.child({ component: "webhooks" }),
      allowPrivateNetworks: config.webhooks.ALLOW_PRIVATE_NETWORKS,
      retryScheduleMs: config.webhooks.WEBHOOK_RETRY_SCHEDULE,
      // One machine: endpoint secrets are sealed even when no key is set, with one generated into DATA_DIR.
      secretsKey: keyInDataDir({
        value: config.webhooks.WEBHOOK_SECRETS_KEY,
        dataDir: config.dataDir,
        file: "webhook-secrets.key",
        onGenerated: (path) =>
          logger.warn(
            { path },
            "WEBHOOK_SECRETS_KEY is not set: webhook endpoint secrets are sealed with a key generated into " +
              "DATA_DIR; back it up with the database, or set WEBHOOK_SECRETS_KEY to it",
          ),
      }),
      leaseMs: config.webhooks.WEBHOOK_LEASE_MS,
      concurrency: config.webhooks.WEBHOOK_CONCURRENCY,
      logRetentionDays: config.webhooks.WEBHOOK_LOG_RETENTION_DAYS,
      auditRetentionDays: config.webhooks.AUDIT_RETENTION_DAYS,
    });
    closers.push(() => webhooks.close());
    drains.push((graceMs) => webhooks.stopDeliveries(graceMs));
    webhooksTransport = createInProcessTransport(webhooks.routes, {
      serverInterceptors: servedInterceptors(logger, served),
      clientInterceptors: calls,
    });
    dependencies.webhooks = webhooks.ready;
    // A registry or conversation service elsewhere publishes to its own WEBHOOKS_URL; nothing can reach a
    // webhooks service embedded here.
    const elsewhere = (["REGISTRY_URL", "CONVERSATION_URL"] as const).filter((name) => gatewayConfig[name]);
    if (elsewhere.length > 0) {
      logger.warn(
        `${elsewhere.join(" and ")} ${elsewhere.length > 1 ? "are" : "is"} set but WEBHOOKS_URL is not: the ` +
          "embedded webhooks service gets no events from services elsewhere; " +
          "set WEBHOOKS_URL to the webhooks service they publish to",
      );
    }
  } else {
    const remote = remoteService({
      url: gatewayConfig.WEBHOOKS_URL!,
      name: "webhooks service",
      logger,
      interceptors: calls,
    });
    webhooksTransport = remote.transport;
    dependencies.webhooks = remote.ready;
  }
  const webhooksClient = createClient(WebhookService, webhooksTransport);

  // The registry is composed after the conversation service (it purges conversations through it); the
  // conversation service's PluginService client reaches it through this, once it is there.
  let registryTransport: Transport | undefined;
  const laterRegistry: Transport = {
    unary: (...args) => registryTransport!.unary(...args),
    stream: (...args) => registryTransport!.stream(...args),
  };

  // One meter for the gateway's sends and the conversation service's own model calls (platform turns, schedule
  // fires, memory extraction): in memory, one instance is what makes a budget exact across both.
  const spend = createSpendMeter(gatewayConfig, logger, installed.now);
  closers.push(() => spend.close());

  let conversationTransport: Transport;
  if (config.conversation) {
    const conversation = await buildConversation({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      logger: logger.child({ component: "conversation" }),
      providers: config.conversation.providers,
      ...(config.conversation.embeddings ? { embeddings: config.conversation.embeddings } : {}),
      contextTokenBudget: config.conversation.contextTokenBudget,
      streamRetentionMs: config.conversation.streamRetentionMs,
      runLeases: config.conversation.runLeases,
      scheduleScanMs: config.conversation.scheduleScanMs,
      agents: registryAgents(createClient(AgentService, laterRegistry)),
      approvalTimeoutMs: config.conversation.approvalTimeoutMs,
      auditRetentionDays: config.conversation.auditRetentionDays,
      budgets: {
        meter: spend.meter,
        prices: gatewayConfig.PRICES,
        budgets: createClient(BudgetService, laterRegistry),
        agents: createClient(AgentService, laterRegistry),
        webhooks: webhooksClient,
        cacheTtlMs: gatewayConfig.AUTH_CACHE_TTL_MS,
        estimateTokens: gatewayConfig.BUDGET_ESTIMATE_TOKENS,
        rpcTimeoutMs: gatewayConfig.RPC_TIMEOUT_MS,
        ...(installed.now ? { now: installed.now } : {}),
      },
      ...(metrics ? { metrics } : {}),
      webhooks: { publish: publishWith(webhooksClient, { timeoutMs: gatewayConfig.RPC_TIMEOUT_MS }) },
      plugins: {
        catalogue,
        service: createClient(PluginService, laterRegistry),
        fetch: createGuardedFetch({ allowPrivateNetworks: config.conversation.allowPrivateNetworks }).fetch,
      },
    });
    closers.push(() => conversation.close());
    conversationTransport = createInProcessTransport(conversation.routes, {
      serverInterceptors: servedInterceptors(logger, served),
      clientInterceptors: calls,
    });
    dependencies.conversation = conversation.ready;
  } else {
    const remote = remoteService({
      url: gatewayConfig.CONVERSATION_URL!,
      name: "conversation service",
      logger,
      interceptors: calls,
    });
    conversationTransport = remote.transport;
    dependencies.conversation = remote.ready;
  }

  if (gatewayConfig.REGISTRY_URL) {
    const remote = remoteService({
      url: gatewayConfig.REGISTRY_URL,
      name: "registry",
      logger,
      interceptors: calls,
    });
    registryTransport = remote.transport;
    dependencies.registry = remote.ready;
  } else {
    const conversations = createClient(ConversationService, conversationTransport);
    const registry = await buildRegistry({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      logger: logger.child({ component: "registry" }),
      secretsKey: keyInDataDir({
        value: config.secretsKey,
        dataDir: config.dataDir,
        file: "secrets.key",
        onGenerated: (path) =>
          logger.warn(
            { path },
            "SECRETS_KEY is not set: agent secrets are sealed with a key generated into DATA_DIR; back it up " +
              "with the database, or set SECRETS_KEY to it",
          ),
      }),
      ...(config.auditRetentionDays !== undefined ? { auditRetentionDays: config.auditRetentionDays } : {}),
      purgeAgent: async (accountId, agentId) => {
        await conversations.purgeAgent({ accountId, agentId }, { timeoutMs: gatewayConfig.RPC_TIMEOUT_MS });
      },
      webhooks: {
        publish: publishWith(webhooksClient, { timeoutMs: gatewayConfig.RPC_TIMEOUT_MS }),
        publicBaseUrl: gatewayConfig.PUBLIC_BASE_URL,
      },
    });
    closers.push(() => registry.close());
    registryTransport = createInProcessTransport(registry.routes, {
      serverInterceptors: servedInterceptors(logger, served),
      clientInterceptors: calls,
    });
    dependencies.registry = registry.ready;
  }

  let connectorsTransport: Transport | undefined;
  if (config.connectors) {
    // Platform connectors (Telegram, Slack) read agents from the registry and send turns to the conversation service,
    // embedded or not, as the gateway does.
    const connectors = await buildConnectors({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      logger: logger.child({ component: "connectors" }),
      registry: registryTransport!,
      conversation: conversationTransport,
      telegramApiUrl: config.connectors.TELEGRAM_API_URL,
      slackApiUrl: config.connectors.SLACK_API_URL,
      discordApiUrl: config.connectors.DISCORD_API_URL,
      discordGatewayUrl: config.connectors.DISCORD_GATEWAY_URL,
      publicBaseUrl: gatewayConfig.PUBLIC_BASE_URL,
      syncIntervalMs: config.connectors.CONNECTORS_SYNC_INTERVAL_MS,
      leaseMs: config.connectors.CONNECTORS_LEASE_MS,
      rpcTimeoutMs: gatewayConfig.RPC_TIMEOUT_MS,
      metrics,
    });
    // Stopped before the services it calls close; a drain stops it first, so no new turn starts.
    closers.push(() => connectors.close());
    drains.push(() => connectors.close());
    dependencies.connectors = connectors.ready;
    connectorsTransport = createInProcessTransport(connectors.routes, {
      serverInterceptors: servedInterceptors(logger, served),
      clientInterceptors: calls,
    });
  } else if (gatewayConfig.CONNECTORS_URL) {
    const remote = remoteService({
      url: gatewayConfig.CONNECTORS_URL,
      name: "connectors service",
      logger,
      interceptors: calls,
    });
    connectorsTransport = remote.transport;
    dependencies.connectors = remote.ready;
  }

  const gateway = buildGateway({
    config: gatewayConfig,
    logger,
    transports: {
      registry: registryTransport,
      conversation: conversationTransport,
      webhooks: webhooksTransport,
      ...(connectorsTransport ? { connectors: connectorsTransport } : {}),
    },
    dependencies,
    catalogue,
    ...(metrics ? { metrics } : {}),
    ...(installed.now ? { now: installed.now } : {}),
    meter: spend.meter,
  });
  return {
    ...gateway,
    ...(metrics ? { metrics } : {}),
    drain: async (graceMs) => {
      await Promise.all(drains.map((drain) => drain(graceMs)));
    },
    // The gateway first (its last batch of key uses goes to the registry), then the registry, then the
    // conversation service (which the registry's outbox calls), then the webhooks service, which both publish to.
    close: async () => {
      await gateway.close();
      for (const close of closers.reverse()) await close();
    },
  };
}
