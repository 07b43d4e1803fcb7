import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import {
  initTracing,
  Metrics,
  requestScopeInterceptor,
  rpcInterceptors,
  startMetricsServer,
} from "@agentry/observability";
import { buildConversation } from "./build.js";
import { loadConversationConfig } from "./config.js";
import { createConversationServer } from "./server.js";

/** The conversation service on its own: `CONVERSATION_PORT` (8082), h2c, stopped gracefully by SIGTERM. */
async function main(): Promise<void> {
  const config = loadConversationConfig();
  const logger = createLogger({ service: "conversation", level: config.logLevel, format: config.logFormat });
  const tracing = await initTracing({ serviceName: "agentry-conversation" });
  const metrics = config.metricsPort === undefined ? undefined : new Metrics();
  const conversation = await buildConversation({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    logger,
    providers: config.providers,
    contextTokenBudget: config.contextTokenBudget,
    ...(metrics ? { metrics } : {}),
  });
  const service = createConversationServer(conversation.routes, {
    interceptors: [requestScopeInterceptor, ...rpcInterceptors("server", metrics)],
  });
  const server = service.server;
  server.listen(config.port, config.host);
  await once(server, "listening");
  logger.info(
    { port: (server.address() as AddressInfo).port, host: config.host },
    "conversation service listening",
  );
  const metricsServer = metrics
    ? await startMetricsServer(metrics, config.metricsPort ?? 0, config.metricsHost ?? config.host)
    : undefined;
  if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "metrics listening");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    // In-flight calls finish (a stream runs to its end) unless they outlast the shutdown timeout.
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
    await Promise.race([service.close(), timeout]);
    service.destroy();
    await conversation.close();
    await metricsServer?.close();
    await tracing.shutdown();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((error: unknown) => {
  exitOnConfigError(error);
});
