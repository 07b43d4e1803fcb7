import { fileURLToPath } from "node:url";
import { ConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { initTracing, Metrics, rpcInterceptors } from "@agentry/observability";
import { Catalogue } from "@agentry/plugin-kit";
import { builtinPlugins } from "@agentry/plugins";
import { exitOnStartFailure, remoteService } from "@agentry/rpc";
import { loadGatewayConfig } from "./config.js";
import { buildGateway } from "./gateway.js";
import { runGateway } from "./run.js";

/**
 * The gateway on its own, in front of the registry, the conversation service and the webhooks service in other
 * processes (REGISTRY_URL, CONVERSATION_URL, WEBHOOKS_URL, all three required). `pnpm start` runs them all in one
 * process instead (apps/server). On SIGTERM or SIGINT it stops accepting, finishes what is in flight and exits 0.
 */
/**
 * The web console's build in this repository (apps/console/dist), found by its place: this file and its bundle both
 * sit two levels under services/gateway. An image that ships the console elsewhere sets CONSOLE_DIR.
 */
const CONSOLE_BUILD = fileURLToPath(new URL("../../../apps/console/dist", import.meta.url));

async function main(): Promise<void> {
  const config = loadGatewayConfig({ ...process.env, CONSOLE_DIR: process.env.CONSOLE_DIR ?? CONSOLE_BUILD });
  const missing = (["REGISTRY_URL", "CONVERSATION_URL", "WEBHOOKS_URL"] as const).filter(
    (name) => !config[name],
  );
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid configuration: ${missing.join(", ")} required: the gateway alone calls the registry, the ` +
        "conversation service and the webhooks service in other processes (pnpm start runs them all in one)",
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
  const webhooks = remoteService({
    url: config.WEBHOOKS_URL!,
    name: "webhooks service",
    logger,
    interceptors,
  });
  // Optional: without a connectors service, agents' platform clients are reported stopped.
  const connectors = config.CONNECTORS_URL
    ? remoteService({ url: config.CONNECTORS_URL, name: "connectors service", logger, interceptors })
    : undefined;
  const gateway = buildGateway({
    config,
    logger,
    transports: {
      registry: registry.transport,
      conversation: conversation.transport,
      webhooks: webhooks.transport,
      ...(connectors ? { connectors: connectors.transport } : {}),
    },
    dependencies: {
      registry: registry.ready,
      conversation: conversation.ready,
      webhooks: webhooks.ready,
      ...(connectors ? { connectors: connectors.ready } : {}),
    },
    catalogue: new Catalogue(builtinPlugins),
    ...(metrics ? { metrics } : {}),
  });
  await runGateway(gateway, {
    config,
    logger,
    tracing,
    ...(metrics ? { metrics } : {}),
    describe: {
      registry: config.REGISTRY_URL,
      conversation: config.CONVERSATION_URL,
      webhooks: config.WEBHOOKS_URL,
    },
  });
}

main().catch(exitOnStartFailure("gateway"));
