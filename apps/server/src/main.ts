import { exitOnConfigError } from "@agentry/config";
import { listen } from "@agentry/gateway";
import { createLogger } from "@agentry/logging";
import { initTracing, startMetricsServer } from "@agentry/observability";
import { composeServer } from "./compose.js";
import { loadServerConfig } from "./config.js";

/**
 * `pnpm start`: the gateway with the registry and the conversation service in the same process, each unless its
 * URL (REGISTRY_URL, CONVERSATION_URL) points at one running elsewhere. On SIGTERM or SIGINT it stops accepting,
 * finishes what is in flight, closes the databases and exits 0.
 */
async function main(): Promise<void> {
  const config = loadServerConfig();
  const { gateway: gatewayConfig } = config;
  const logger = createLogger({
    service: "gateway",
    level: gatewayConfig.LOG_LEVEL,
    format: gatewayConfig.LOG_FORMAT,
  });
  const tracing = await initTracing({ serviceName: "agentry-gateway" });
  const server = await composeServer(config, logger);
  const running = await listen(server.app, gatewayConfig.PORT, gatewayConfig.HOST);
  logger.info(
    {
      url: running.url,
      publicBaseUrl: gatewayConfig.PUBLIC_BASE_URL,
      registry: gatewayConfig.REGISTRY_URL ?? "embedded",
      conversation: gatewayConfig.CONVERSATION_URL ?? "embedded",
      dataDir: config.dataDir,
    },
    "agentry gateway listening",
  );
  const metricsServer = server.metrics
    ? await startMetricsServer(
        server.metrics,
        gatewayConfig.METRICS_PORT ?? 0,
        gatewayConfig.METRICS_HOST ?? gatewayConfig.HOST,
      )
    : undefined;
  if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "metrics listening");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    server.context.draining = true;
    await running.close(gatewayConfig.SHUTDOWN_TIMEOUT_MS);
    await server.close();
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
