import { createLogger } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors } from "@agentry/observability";
import { publishWith } from "@agentry/outbox";
import { ConversationService, WebhookService } from "@agentry/proto";
import { createH2Transport, createRpcServer, exitOnStartFailure, serveUntilSignalled } from "@agentry/rpc";
import { createClient } from "@connectrpc/connect";
import { loadServiceConfig } from "./config.js";
import { buildRegistry } from "./registry.js";

async function main(): Promise<void> {
  const config = loadServiceConfig();
  const logger = createLogger({ service: "registry", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const tracing = await initTracing({ serviceName: "agentry-registry" });
  const metrics = config.METRICS_PORT === undefined ? undefined : new Metrics();
  const transport = (baseUrl: string) =>
    createH2Transport({ baseUrl, interceptors: rpcInterceptors("client", metrics) });
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
    auditRetentionDays: config.AUDIT_RETENTION_DAYS,
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
  await serveUntilSignalled({
    logger,
    async listen() {
      const address = await server.listen(config.REGISTRY_PORT, config.REGISTRY_HOST);
      // The URL carries the password, so only the kind of store is logged.
      const store = config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR };
      return { host: address.address, port: address.port, store };
    },
    async stop() {
      await server.shutdown();
      await registry.close();
    },
    graceMs: config.SHUTDOWN_TIMEOUT_MS,
    tracing,
    ...(metrics
      ? {
          metrics: {
            metrics,
            port: config.METRICS_PORT ?? 0,
            host: config.METRICS_HOST ?? config.REGISTRY_HOST,
          },
        }
      : {}),
  });
}

main().catch(exitOnStartFailure("registry"));
