import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { ConversationService } from "@agentry/proto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { loadConfig } from "./config.js";
import { buildRegistry } from "./registry.js";
import { buildServer } from "./server.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ service: "registry", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const conversations = config.CONVERSATION_URL
    ? createClient(
        ConversationService,
        createConnectTransport({ baseUrl: config.CONVERSATION_URL, httpVersion: "2" }),
      )
    : undefined;
  if (!conversations) {
    logger.warn("CONVERSATION_URL is not set: deleted agents' conversations are purged once it is");
  }
  const registry = await buildRegistry({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    ...(conversations
      ? {
          purgeAgent: async (accountId: string, agentId: string) => {
            await conversations.purgeAgent({ accountId, agentId }, { timeoutMs: 10_000 });
          },
        }
      : {}),
  });
  const server = buildServer({
    routes: registry.routes,
    ready: registry.ready,
    logger,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  });
  const address = await server.listen(config.REGISTRY_PORT, config.REGISTRY_HOST);
  logger.info(
    {
      host: address.address,
      port: address.port,
      // The URL carries the password, so only the kind of store is logged.
      store: config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR },
    },
    "listening",
  );

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    try {
      await server.shutdown();
      await registry.close();
      logger.info("stopped");
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, "shutdown failed");
      process.exit(1);
    }
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main()
  .catch((error: unknown) => {
    exitOnConfigError(error);
  })
  .catch((error: unknown) => {
    process.stderr.write(
      `registry failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  });
