import http2 from "node:http2";
import { buildConversation } from "@agentry/conversation";
import { createMemoryLimiter, createRedisLimiter, type Limiter } from "@agentry/limits";
import { type Logger, OutageLog } from "@agentry/logging";
import { Metrics, rpcInterceptors } from "@agentry/observability";
import { AccountService, AgentService, ConversationService } from "@agentry/proto";
import { buildRegistry } from "@agentry/registry";
import { availabilityInterceptor, type DependencyState, servedInterceptors } from "@agentry/rpc";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type Koa from "koa";
import { buildApp } from "./app.js";
import type { GatewayConfig } from "./config.js";
import type { GatewayContext, GatewayState } from "./context.js";
import { Authenticator } from "./http/auth.js";
import { KeyUsageRecorder } from "./http/key-usage.js";
import { limitsMiddleware } from "./http/limits.js";
import { observedLimiter } from "./http/observe.js";
import { createInProcessTransport } from "./in-process-transport.js";
import { ProviderCatalog } from "./providers.js";
import { serverStreamingFn } from "./server-streaming.js";

/**
 * How long the conversation service's providers are trusted before it is asked again. They change only when it
 * restarts with another configuration; a rollout that changes them is seen within this time.
 */
const PROVIDER_CATALOG_TTL_MS = 30_000;
/** With no answer yet, how long agent writes skip the check instead of waiting on a service that is down. */
const PROVIDER_CATALOG_RETRY_MS = 1_000;

export interface Gateway {
  app: Koa<GatewayState>;
  context: GatewayContext;
  /** The process's metrics (embedded services included) when METRICS_PORT is set; `main` serves them. */
  metrics?: Metrics;
  /** Closes what the gateway opened (the embedded services and their stores). */
  close(): Promise<void>;
}

/**
 * The composition root. A service whose URL is not configured (`REGISTRY_URL`, `CONVERSATION_URL`) runs inside
 * this process and is called through the in-process transport (no sockets); with a URL, the same clients speak
 * HTTP/2 to the service elsewhere.
 */
export async function composeGateway(config: GatewayConfig, logger: Logger): Promise<Gateway> {
  const closers: (() => Promise<void>)[] = [];
  let registryTransport: Transport;
  let conversationTransport: Transport;
  // What /readyz reports; none of them decides readiness (see app.ts).
  const dependencies: Record<string, () => Promise<boolean>> = {};
  const metrics = config.METRICS_PORT === undefined ? undefined : new Metrics();
  const observeCalls = rpcInterceptors("client", metrics);
  const observeServed = rpcInterceptors("server", metrics);

  if (config.conversation) {
    const conversation = await buildConversation({
      dataDir: config.DATA_DIR,
      databaseUrl: config.conversation.databaseUrl,
      logger: logger.child({ component: "conversation" }),
      providers: config.conversation.providers,
      contextTokenBudget: config.conversation.contextTokenBudget,
      ...(metrics ? { metrics } : {}),
    });
    closers.push(() => conversation.close());
    conversationTransport = createInProcessTransport(conversation.routes, {
      serverInterceptors: servedInterceptors(logger, observeServed),
      clientInterceptors: observeCalls,
    });
    dependencies.conversation = conversation.ready;
  } else {
    conversationTransport = createConnectTransport({
      baseUrl: config.CONVERSATION_URL!,
      httpVersion: "2",
      interceptors: [availabilityInterceptor(new OutageLog(logger, "conversation service")), ...observeCalls],
    });
    dependencies.conversation = () => probeReadiness(config.CONVERSATION_URL!);
  }
  const conversations = {
    ...createClient(ConversationService, conversationTransport),
    streamMessage: serverStreamingFn(conversationTransport, ConversationService.method.streamMessage),
  };

  if (config.REGISTRY_URL) {
    registryTransport = createConnectTransport({
      baseUrl: config.REGISTRY_URL,
      httpVersion: "2",
      interceptors: [availabilityInterceptor(new OutageLog(logger, "registry")), ...observeCalls],
    });
    dependencies.registry = () => probeReadiness(config.REGISTRY_URL!);
  } else {
    const registry = await buildRegistry({
      dataDir: config.DATA_DIR,
      databaseUrl: config.DATABASE_URL,
      logger: logger.child({ component: "registry" }),
      purgeAgent: async (accountId, agentId) => {
        await conversations.purgeAgent({ accountId, agentId }, { timeoutMs: config.RPC_TIMEOUT_MS });
      },
    });
    closers.push(() => registry.close());
    registryTransport = createInProcessTransport(registry.routes, {
      serverInterceptors: servedInterceptors(logger, observeServed),
      clientInterceptors: observeCalls,
    });
    dependencies.registry = () => registry.ready();
  }

  const backend: Limiter = config.REDIS_URL
    ? createRedisLimiter({
        url: config.REDIS_URL,
        availability: new OutageLog(logger, "redis"),
      })
    : createMemoryLimiter();
  if (config.REDIS_URL) dependencies.redis = async () => backend.available();
  const limiter = metrics ? observedLimiter(backend, metrics) : backend;
  closers.unshift(() => limiter.close());

  const providers = new ProviderCatalog({
    load: async () => {
      const listed = await conversations.listProviders({}, { timeoutMs: config.RPC_TIMEOUT_MS });
      return {
        providers: listed.providers.map(({ name, defaultModel, models }) => ({ name, defaultModel, models })),
        defaultProvider: listed.defaultProvider,
      };
    },
    ttlMs: PROVIDER_CATALOG_TTL_MS,
    retryMs: PROVIDER_CATALOG_RETRY_MS,
    logger,
  });

  const accounts = createClient(AccountService, registryTransport);
  const keyUsage = new KeyUsageRecorder(accounts, logger, config.KEY_USAGE_FLUSH_MS);
  // Closed before the registry, so the last batch of key uses is written.
  closers.push(() => keyUsage.close());
  const context: GatewayContext = {
    config,
    logger,
    agents: createClient(AgentService, registryTransport),
    accounts,
    conversations,
    providers,
    auth: new Authenticator(accounts, config.AUTH_CACHE_TTL_MS),
    keyUsage,
    ...(metrics ? { metrics } : {}),
    dependencies: async () => {
      const states = await Promise.all(
        Object.entries(dependencies).map(
          async ([name, check]): Promise<[string, DependencyState]> => [
            name,
            (await check().catch(() => false)) ? "up" : "down",
          ],
        ),
      );
      return Object.fromEntries(states);
    },
    draining: false,
  };
  return {
    app: buildApp(context, {
      limits: limitsMiddleware({ limiter, logger, leaseMs: config.CONCURRENCY_LEASE_MS }),
    }),
    context,
    ...(metrics ? { metrics } : {}),
    close: async () => {
      for (const close of closers.reverse()) await close();
    },
  };
}

/** Whether a service answers its `/readyz` over HTTP/2 without TLS, the protocol the services serve. */
function probeReadiness(baseUrl: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const session = http2.connect(baseUrl);
    const done = (ready: boolean) => {
      session.close();
      resolve(ready);
    };
    session.on("error", () => done(false));
    session.setTimeout(timeoutMs, () => {
      session.destroy();
      resolve(false);
    });
    const request = session.request({ ":path": "/readyz" });
    request.on("response", (headers) => {
      request.resume();
      done(headers[":status"] === 200);
    });
    request.on("error", () => done(false));
    request.end();
  });
}
