import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors, startMetricsServer } from "@agentry/observability";
import { publishWith } from "@agentry/outbox";
import { ConversationService, WebhookService } from "@agentry/proto";
import { createRpcServer } from "@agentry/rpc";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { loadServiceConfig } from "./config.js";
import { buildRegistry } from "./registry.js";

async function main(): Promise<void> {
  const config = loadServiceConfig();
  const logger = createLogger({ service: "registry", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const tracing = await initTracing({ serviceName: "agentry-registry" });
  const metrics = config.METRICS_PORT === undefined ? undefined : new Metrics();
  const transport = (baseUrl: string) =>
    createConnectTransport({ baseUrl, httpVersion: "2", interceptors: rpcInterceptors("client", metrics) });
  const conversations = config.CONVERSATION_URL
    ? createClient(ConversationService, transport(config.CONVERSATION_URL))
    : undefined;
  if (!conversations) {
    logger.warn("CONVERSATION_URL is not set: deleted agents' conversations are purged once it is");
  }
  const webhooks = config.WEBHOOKS_URL
    ? createClient(WebhookService, transport(config.WEBHOOKS_URL))
    : undefined;
  if (!webhooks) {
    logger.warn("WEBHOOKS_URL is not set: agent events wait in the outbox and reach webhooks once it is");
  }
  const registry = await buildRegistry({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    secretsKey: config.SECRETS_KEY,
    ...(conversations
      ? {
          purgeAgent: async (accountId: string, agentId: string) => {
            await conversations.purgeAgent({ accountId, agentId }, { timeoutMs: 10_000 });
          },
        }
      : {}),
    ...(webhooks
      ? {
          webhooks: {
            publish: publishWith(webhooks, { timeoutMs: 10_000 }),
            publicBaseUrl: config.PUBLIC_BASE_URL,
          },
        }
      : {}),
  });
  const server = createRpcServer({
    routes: registry.routes,
    logger,
    dependencies: { database: registry.ready },
    shutdownGraceMs: config.SHUTDOWN_TIMEOUT_MS,
    interceptors: rpcInterceptors("server", metrics),
  });
  const address = await server.listen(config.REGISTRY_PORT, config.REGISTRY_HOST);
  logger.info(
    {
      host: address.address,
      port: address.port,
      // The URL carries the password, so only the kind of store is logged.
      store: config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR },
    },
    "listening",
  );
  const metricsServer = metrics
    ? await startMetricsServer(metrics, config.METRICS_PORT ?? 0, config.METRICS_HOST ?? config.REGISTRY_HOST)
    : undefined;
  if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "metrics listening");

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    try {
      await server.shutdown();
      await registry.close();
      await metricsServer?.close();
      await tracing.shutdown();
      logger.info("stopped");
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, "shutdown failed");
      process.exit(1);
    }
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main()
  .catch((error: unknown) => {
    exitOnConfigError(error);
  })
  .catch((error: unknown) => {
    process.stderr.write(
      `registry failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  });
