import type { Logger } from "@agentry/logging";
import { type Metrics, startMetricsServer, type Tracing } from "@agentry/observability";
import type { GatewayConfig } from "./config.js";
import type { Gateway } from "./gateway.js";
import { listen } from "./server.js";

/**
 * Serves a gateway on its port until SIGTERM or SIGINT, then stops accepting, finishes what is in flight, closes
 * what the gateway was built on (`gateway.close`) and exits 0. The one lifecycle of every deployable that serves
 * the REST API: the gateway alone and the all-in-one server.
 */
export async function runGateway(
  gateway: Gateway,
  options: {
    config: GatewayConfig;
    logger: Logger;
    tracing: Tracing;
    metrics?: Metrics;
    /** What the "listening" line says about where the services are. */
    describe: Record<string, unknown>;
  },
): Promise<void> {
  const { config, logger } = options;
  const running = await listen(gateway.app, config.PORT, config.HOST);
  logger.info(
    { url: running.url, publicBaseUrl: config.PUBLIC_BASE_URL, ...options.describe },
    "agentry gateway listening",
  );
  const metricsServer = options.metrics
    ? await startMetricsServer(options.metrics, config.METRICS_PORT ?? 0, config.METRICS_HOST ?? config.HOST)
    : undefined;
  if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "metrics listening");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    gateway.context.draining = true;
    await Promise.all([
      running.close(config.SHUTDOWN_TIMEOUT_MS),
      gateway.drain?.(config.SHUTDOWN_TIMEOUT_MS),
    ]);
    await gateway.close();
    await metricsServer?.close();
    await options.tracing.shutdown();
    logger.info("stopped");
    logger.flush();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}
