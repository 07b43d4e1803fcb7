import { createLogger } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors } from "@agentry/observability";
import { createRpcServer, exitOnStartFailure, serveUntilSignalled } from "@agentry/rpc";
import { loadConfig } from "./config.js";
import { buildWebhooks } from "./webhooks.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ service: "webhooks", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const tracing = await initTracing({ serviceName: "agentry-webhooks" });
  const metrics = config.METRICS_PORT === undefined ? undefined : new Metrics();
  const webhooks = await buildWebhooks({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    allowPrivateNetworks: config.ALLOW_PRIVATE_NETWORKS,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE,
    secretsKey: config.WEBHOOK_SECRETS_KEY,
    leaseMs: config.WEBHOOK_LEASE_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    logRetentionDays: config.WEBHOOK_LOG_RETENTION_DAYS,
    auditRetentionDays: config.AUDIT_RETENTION_DAYS,
  });
  const server = createRpcServer({
    routes: webhooks.routes,
    logger,
    dependencies: { database: webhooks.ready },
    shutdownGraceMs: config.SHUTDOWN_TIMEOUT_MS,
    interceptors: rpcInterceptors("server", metrics),
  });
  await serveUntilSignalled({
    logger,
    async listen() {
      const address = await server.listen(config.WEBHOOKS_PORT, config.HOST);
      // The URL carries the password, so only the kind of store is logged.
      const store = config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR };
      return { host: address.address, port: address.port, store, worker: webhooks.worker.id };
    },
    async stop() {
      // Both at once: no new claims and no new calls; attempts and calls in flight finish within the grace.
      await Promise.all([webhooks.stopDeliveries(config.SHUTDOWN_TIMEOUT_MS), server.shutdown()]);
      await webhooks.close();
    },
    graceMs: config.SHUTDOWN_TIMEOUT_MS,
    tracing,
    ...(metrics
      ? { metrics: { metrics, port: config.METRICS_PORT ?? 0, host: config.METRICS_HOST ?? config.HOST } }
      : {}),
  });
}

main().catch(exitOnStartFailure("webhooks service"));
