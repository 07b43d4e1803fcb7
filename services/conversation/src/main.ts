import { loadPrices } from "@agentry/budgets";
import { createRedisLimiter, MemorySpendMeter, RedisSpendMeter } from "@agentry/limits";
import { createLogger, OutageLog } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors } from "@agentry/observability";
import { createGuardedFetch } from "@agentry/outbound";
import { publishWith } from "@agentry/outbox";
import { Catalogue } from "@agentry/plugin-kit";
import { builtinPlugins } from "@agentry/plugins";
import {
  AgentService,
  BudgetService,
  PluginService,
  PublishEventsResponseSchema,
  WebhookService,
} from "@agentry/proto";
import { createH2Transport, createRpcServer, exitOnStartFailure, serveUntilSignalled } from "@agentry/rpc";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { buildConversation } from "./build.js";
import { loadConversationConfig } from "./config.js";
import { registryAgents } from "./schedules.js";

/** How long an account's budgets are used before the registry is asked again (as a gateway's AUTH_CACHE_TTL_MS). */
const BUDGETS_CACHE_TTL_MS = 750;

/** The conversation service on its own: `CONVERSATION_PORT` (8082), h2c, stopped gracefully by SIGTERM. */
async function main(): Promise<void> {
  const config = loadConversationConfig();
  const logger = createLogger({ service: "conversation", level: config.logLevel, format: config.logFormat });
  const tracing = await initTracing({ serviceName: "agentry-conversation" });
  const metrics = config.metricsPort === undefined ? undefined : new Metrics();
  const webhooks = config.webhooksUrl
    ? createClient(
        WebhookService,
        createH2Transport({ baseUrl: config.webhooksUrl, interceptors: rpcInterceptors("client", metrics) }),
      )
    : undefined;
  if (!webhooks) {
    logger.info("WEBHOOKS_URL is not set: no message events are written (webhooks get no message.* events)");
  }
  const registryTransport = config.registryUrl
    ? createH2Transport({ baseUrl: config.registryUrl, interceptors: rpcInterceptors("client", metrics) })
    : undefined;
  const registry = registryTransport ? createClient(PluginService, registryTransport) : undefined;
  if (!registry) logger.warn("REGISTRY_URL is not set: agents' plugins offer no tools");
  // Budgets need the registry's budgets and agents; their counters are the gateways' on REDIS_URL's Redis.
  const redis = config.redisUrl
    ? createRedisLimiter({ url: config.redisUrl, availability: new OutageLog(logger, "redis") })
    : undefined;
  if (registryTransport && !redis) {
    logger.warn(
      "REDIS_URL is not set: budgets of platform turns, schedule fires and memory extraction are counted by this process alone, apart from the gateways",
    );
  }
  const budgets = registryTransport
    ? {
        meter: redis ? new RedisSpendMeter(redis) : new MemorySpendMeter(),
        prices: loadPrices(config.pricesFile),
        budgets: createClient(BudgetService, registryTransport),
        agents: createClient(AgentService, registryTransport),
        // Without a webhooks service, budget alerts have nowhere to go.
        webhooks: webhooks ?? { publishEvents: async () => create(PublishEventsResponseSchema, {}) },
        cacheTtlMs: BUDGETS_CACHE_TTL_MS,
        estimateTokens: config.budgetEstimateTokens,
        rpcTimeoutMs: 10_000,
      }
    : undefined;
  if (config.allowPrivateNetworks) {
    logger.warn("ALLOW_PRIVATE_NETWORKS is set: plugins may call http URLs and private addresses");
  }
  const conversation = await buildConversation({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    logger,
    providers: config.providers,
    ...(config.embeddings ? { embeddings: config.embeddings } : {}),
    contextTokenBudget: config.contextTokenBudget,
    streamRetentionMs: config.streamRetentionMs,
    runLeases: config.runLeases,
    scheduleScanMs: config.scheduleScanMs,
    ...(registryTransport ? { agents: registryAgents(createClient(AgentService, registryTransport)) } : {}),
    approvalTimeoutMs: config.approvalTimeoutMs,
    auditRetentionDays: config.auditRetentionDays,
    ...(budgets ? { budgets } : {}),
    ...(metrics ? { metrics } : {}),
    ...(webhooks ? { webhooks: { publish: publishWith(webhooks, { timeoutMs: 10_000 }) } } : {}),
    ...(registry
      ? {
          plugins: {
            catalogue: new Catalogue(builtinPlugins),
            service: registry,
            fetch: createGuardedFetch({ allowPrivateNetworks: config.allowPrivateNetworks }).fetch,
          },
        }
      : {}),
  });
  const server = createRpcServer({
    routes: conversation.routes,
    logger,
    dependencies: { database: conversation.ready },
    // In-flight calls finish (a stream runs to its end) unless they outlast the shutdown timeout.
    shutdownGraceMs: config.shutdownTimeoutMs,
    interceptors: rpcInterceptors("server", metrics),
  });
  await serveUntilSignalled({
    logger,
    async listen() {
      const address = await server.listen(config.port, config.host);
      return { host: address.address, port: address.port };
    },
    async stop() {
      await server.shutdown();
      await conversation.close();
      await redis?.close();
    },
    graceMs: config.shutdownTimeoutMs,
    tracing,
    ...(metrics
      ? { metrics: { metrics, port: config.metricsPort ?? 0, host: config.metricsHost ?? config.host } }
      : {}),
  });
}

main().catch(exitOnStartFailure("conversation service"));
