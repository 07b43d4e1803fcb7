import { runGateway } from "@agentry/gateway";
import { createLogger } from "@agentry/logging";
import { initTracing } from "@agentry/observability";
import { exitOnStartFailure } from "@agentry/rpc";
import { composeServer } from "./compose.js";
import { loadServerConfig } from "./config.js";

/**
 * `pnpm start`: the gateway with the registry, the conversation service and the webhooks service in the same
 * process, each unless its URL (REGISTRY_URL, CONVERSATION_URL, WEBHOOKS_URL) points at one running elsewhere. On
 * SIGTERM or SIGINT it stops accepting and stops claiming webhook deliveries, finishes what is in flight, closes
 * the databases and exits 0.
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
  await runGateway(server, {
    config: gatewayConfig,
    logger,
    tracing,
    ...(server.metrics ? { metrics: server.metrics } : {}),
    describe: {
      registry: gatewayConfig.REGISTRY_URL ?? "embedded",
      conversation: gatewayConfig.CONVERSATION_URL ?? "embedded",
      webhooks: gatewayConfig.WEBHOOKS_URL ?? "embedded",
      dataDir: config.dataDir,
    },
  });
}

main().catch(exitOnStartFailure("agentry server"));
