import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors, startMetricsServer } from "@agentry/observability";
import { createRpcServer, remoteService } from "@agentry/rpc";
import { loadConfig } from "./config.js";
import { buildConnectors } from "./connectors.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ service: "connectors", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const tracing = await initTracing({ serviceName: "agentry-connectors" });
  const metrics = config.METRICS_PORT === undefined ? undefined : new Metrics();
  const calls = rpcInterceptors("client", metrics);
  const registry = remoteService({ url: config.REGISTRY_URL, name: "registry", logger, interceptors: calls });
  const conversation = remoteService({
    url: config.CONVERSATION_URL,
    name: "conversation service",
    logger,
    interceptors: calls,
  });
  const connectors = await buildConnectors({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    registry: registry.transport,
    conversation: conversation.transport,
    telegramApiUrl: config.TELEGRAM_API_URL,
    slackApiUrl: config.SLACK_API_URL,
    discordApiUrl: config.DISCORD_API_URL,
    discordGatewayUrl: config.DISCORD_GATEWAY_URL,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    syncIntervalMs: config.CONNECTORS_SYNC_INTERVAL_MS,
    leaseMs: config.CONNECTORS_LEASE_MS,
    rpcTimeoutMs: config.RPC_TIMEOUT_MS,
    metrics,
  });
  const server = createRpcServer({
    routes: connectors.routes,
    logger,
    dependencies: { database: connectors.ready, registry: registry.ready, conversation: conversation.ready },
    shutdownGraceMs: config.SHUTDOWN_TIMEOUT_MS,
    interceptors: rpcInterceptors("server", metrics),
  });
  const address = await server.listen(config.CONNECTORS_PORT, config.HOST);
  logger.info(
    {
      host: address.address,
      port: address.port,
      // The URL carries the password, so only the kind of store is logged.
      store: config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR },
      holder: connectors.holder,
    },
    "listening",
  );
  const metricsServer = metrics
    ? await startMetricsServer(metrics, config.METRICS_PORT ?? 0, config.METRICS_HOST ?? config.HOST)
    : undefined;

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    try {
      // Connectors first: the message in hand is answered, then pollers' leases are given up for another process.
      await Promise.all([connectors.close(), server.shutdown()]);
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
      `connectors failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  });
