import type { Logger } from "@agentry/logging";
import type { Metrics, Tracing } from "@agentry/observability";
import { serveUntilSignalled } from "@agentry/rpc";
import type { GatewayConfig } from "./config.js";
import type { Gateway } from "./gateway.js";
import { listen, type RunningServer } from "./server.js";

/**
 * Serves a gateway on its port until SIGTERM or SIGINT, then stops accepting, finishes what is in flight and
 * closes what the gateway was built on (`gateway.close`), in the lifecycle every deployable shares
 * (serveUntilSignalled). Used by each deployable that serves the REST API: the gateway alone and the all-in-one
 * server.
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
  const { config, logger, metrics } = options;
  let running: RunningServer | undefined;
  await serveUntilSignalled({
    logger,
    async listen() {
      running = await listen(gateway.app, config.PORT, config.HOST);
      return { url: running.url, publicBaseUrl: config.PUBLIC_BASE_URL, ...options.describe };
    },
    async stop() {
      gateway.context.draining = true;
      await Promise.all([
        running?.close(config.SHUTDOWN_TIMEOUT_MS),
        gateway.drain?.(config.SHUTDOWN_TIMEOUT_MS),
      ]);
      await gateway.close();
    },
    graceMs: config.SHUTDOWN_TIMEOUT_MS,
    tracing: options.tracing,
    ...(metrics
      ? { metrics: { metrics, port: config.METRICS_PORT ?? 0, host: config.METRICS_HOST ?? config.HOST } }
      : {}),
  });
}
