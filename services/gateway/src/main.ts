import { ConfigError, exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors, startMetricsServer } from "@agentry/observability";
import { remoteService } from "@agentry/rpc";
import { loadGatewayConfig } from "./config.js";
import { buildGateway } from "./gateway.js";
import { listen } from "./server.js";

/**
 * The gateway on its own, in front of a registry and a conversation service in other processes (REGISTRY_URL,
 * CONVERSATION_URL). `pnpm start` runs all three in one process instead (apps/server). On SIGTERM or SIGINT it
 * stops accepting, finishes what is in flight and exits 0.
 */
async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const missing = (["REGISTRY_URL", "CONVERSATION_URL"] as const).filter((name) => !config[name]);
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid configuration: ${missing.join(", ")} required: the gateway alone calls the registry and the ` +
        "conversation service in other processes (pnpm start runs all three in one)",
    );
  }
  const logger = createLogger({ service: "gateway", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const tracing = await initTracing({ serviceName: "agentry-gateway" });
  const metrics = config.METRICS_PORT === undefined ? undefined : new Metrics();
  const interceptors = rpcInterceptors("client", metrics);
  const registry = remoteService({ url: config.REGISTRY_URL!, name: "registry", logger, interceptors });
  const conversation = remoteService({
    url: config.CONVERSATION_URL!,
    name: "conversation service",
    logger,
    interceptors,
  });
  const gateway = buildGateway({
    config,
    logger,
    transports: { registry: registry.transport, conversation: conversation.transport },
    dependencies: { registry: registry.ready, conversation: conversation.ready },
    ...(metrics ? { metrics } : {}),
  });
  const running = await listen(gateway.app, config.PORT, config.HOST);
  logger.info(
    {
      url: running.url,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      registry: config.REGISTRY_URL,
      conversation: config.CONVERSATION_URL,
    },
    "agentry gateway listening",
  );
  const metricsServer = metrics
    ? await startMetricsServer(metrics, config.METRICS_PORT ?? 0, config.METRICS_HOST ?? config.HOST)
    : undefined;
  if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "metrics listening");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    gateway.context.draining = true;
    await running.close(config.SHUTDOWN_TIMEOUT_MS);
    await gateway.close();
    await metricsServer?.close();
    await tracing.shutdown();
    logger.info("stopped");
    logger.flush();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

main().catch((error: unknown) => {
  exitOnConfigError(error);
});
