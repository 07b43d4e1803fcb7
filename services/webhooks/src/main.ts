import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors, startMetricsServer } from "@agentry/observability";
import { createRpcServer } from "@agentry/rpc";
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
  });
  const server = createRpcServer({
    routes: webhooks.routes,
    logger,
    dependencies: { database: webhooks.ready },
    shutdownGraceMs: config.SHUTDOWN_TIMEOUT_MS,
    interceptors: rpcInterceptors("server", metrics),
  });
  const address = await server.listen(config.WEBHOOKS_PORT, config.HOST);
  logger.info(
    {
      host: address.address,
      port: address.port,
      // The URL carries the password, so only the kind of store is logged.
      store: config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR },
      worker: webhooks.worker.id,
    },
    "listening",
  );
  const metricsServer = metrics
    ? await startMetricsServer(metrics, config.METRICS_PORT ?? 0, config.METRICS_HOST ?? config.HOST)
    : undefined;
  if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "metrics listening");

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    try {
      // Both at once: no new claims and no new calls; attempts and calls in flight finish within the grace.
      await Promise.all([webhooks.stopDeliveries(config.SHUTDOWN_TIMEOUT_MS), server.shutdown()]);
      await webhooks.close();
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
      `webhooks failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  });
