import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { initTracing, startMetricsServer } from "@agentry/observability";
import { composeGateway } from "./compose.js";
import { loadGatewayConfig } from "./config.js";
import { listen } from "./server.js";

/**
 * `pnpm start`: the gateway, with the registry embedded unless REGISTRY_URL points at one running elsewhere.
 * On SIGTERM or SIGINT it stops accepting, finishes what is in flight, closes the databases and exits 0.
 */
async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const logger = createLogger({ service: "gateway", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const tracing = await initTracing({ serviceName: "agentry-gateway" });
  const gateway = await composeGateway(config, logger);
  const running = await listen(gateway.app, config.PORT, config.HOST);
  logger.info(
    {
      url: running.url,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      registry: config.REGISTRY_URL ?? "embedded",
      dataDir: config.DATA_DIR,
    },
    "agentry gateway listening",
  );
  const metricsServer = gateway.metrics
    ? await startMetricsServer(gateway.metrics, config.METRICS_PORT ?? 0, config.METRICS_HOST ?? config.HOST)
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
