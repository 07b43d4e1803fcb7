import { buildConversation } from "@agentry/conversation";
import { buildGateway, type Gateway } from "@agentry/gateway";
import type { Logger } from "@agentry/logging";
import { Metrics, rpcInterceptors } from "@agentry/observability";
import { ConversationService } from "@agentry/proto";
import { buildRegistry } from "@agentry/registry";
import { createInProcessTransport, remoteService, servedInterceptors } from "@agentry/rpc";
import { createClient, type Transport } from "@connectrpc/connect";
import type { ServerConfig } from "./config.js";

export interface Server extends Gateway {
  /** The process's metrics (embedded services included) when METRICS_PORT is set; `main` serves them. */
  metrics?: Metrics;
}

/**
 * The all-in-one composition root. Each service whose URL is not configured (REGISTRY_URL, CONVERSATION_URL)
 * runs inside this process and is called through the in-process transport (no sockets, no encoding); with a
 * URL, the same clients speak HTTP/2 to the service elsewhere.
 */
export async function composeServer(config: ServerConfig, logger: Logger): Promise<Server> {
  const { gateway: gatewayConfig } = config;
  const closers: (() => Promise<void>)[] = [];
  const dependencies: Record<string, () => Promise<boolean>> = {};
  const metrics = gatewayConfig.METRICS_PORT === undefined ? undefined : new Metrics();
  const calls = rpcInterceptors("client", metrics);
  const served = rpcInterceptors("server", metrics);

  let conversationTransport: Transport;
  if (config.conversation) {
    const conversation = await buildConversation({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      logger: logger.child({ component: "conversation" }),
      providers: config.conversation.providers,
      contextTokenBudget: config.conversation.contextTokenBudget,
      ...(metrics ? { metrics } : {}),
    });
    closers.push(() => conversation.close());
    conversationTransport = createInProcessTransport(conversation.routes, {
      serverInterceptors: servedInterceptors(logger, served),
      clientInterceptors: calls,
    });
    dependencies.conversation = conversation.ready;
  } else {
    const remote = remoteService({
      url: gatewayConfig.CONVERSATION_URL!,
      name: "conversation service",
      logger,
      interceptors: calls,
    });
    conversationTransport = remote.transport;
    dependencies.conversation = remote.ready;
  }

  let registryTransport: Transport;
  if (gatewayConfig.REGISTRY_URL) {
    const remote = remoteService({
      url: gatewayConfig.REGISTRY_URL,
      name: "registry",
      logger,
      interceptors: calls,
    });
    registryTransport = remote.transport;
    dependencies.registry = remote.ready;
  } else {
    const conversations = createClient(ConversationService, conversationTransport);
    const registry = await buildRegistry({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      logger: logger.child({ component: "registry" }),
      purgeAgent: async (accountId, agentId) => {
        await conversations.purgeAgent({ accountId, agentId }, { timeoutMs: gatewayConfig.RPC_TIMEOUT_MS });
      },
    });
    closers.push(() => registry.close());
    registryTransport = createInProcessTransport(registry.routes, {
      serverInterceptors: servedInterceptors(logger, served),
      clientInterceptors: calls,
    });
    dependencies.registry = registry.ready;
  }

  const gateway = buildGateway({
    config: gatewayConfig,
    logger,
    transports: { registry: registryTransport, conversation: conversationTransport },
    dependencies,
    ...(metrics ? { metrics } : {}),
  });
  return {
    ...gateway,
    ...(metrics ? { metrics } : {}),
    // The gateway first (its last batch of key uses goes to the registry), then the registry, then the
    // conversation service, which the registry calls to purge deleted agents.
    close: async () => {
      await gateway.close();
      for (const close of closers.reverse()) await close();
    },
  };
}
