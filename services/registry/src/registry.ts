import type { Logger } from "@agentry/logging";
import { traceMethods } from "@agentry/observability";
import type { ConnectRouter } from "@connectrpc/connect";
import { OutboxRelay } from "./outbox/relay.js";
import { registryRoutes } from "./rpc/routes.js";
import { openRegistryStore } from "./store/open.js";
import type { RegistryStore } from "./store/types.js";

export interface Registry {
  routes: (router: ConnectRouter) => void;
  store: RegistryStore;
  /** Delivers outbox events to the other services (the purge of a deleted agent's conversations). */
  relay: OutboxRelay;
  /** Whether the store answers a trivial query: what readiness probes report. */
  ready(): Promise<boolean>;
  /** Stops the relay and closes the store; in-flight calls must have finished. */
  close(): Promise<void>;
}

export interface BuildRegistryOptions {
  dataDir: string;
  /** A Postgres URL (DATABASE_URL) for the store; without it, SQLite in `dataDir`. */
  databaseUrl?: string;
  logger: Logger;
  /**
   * Removes everything other services hold for a deleted agent (its conversations, metrics and logs). Called
   * from the outbox at least once per deletion, also after a crash; it must be idempotent. Without it, deletion
   * events wait in the outbox until a registry that has it delivers them.
   */
  purgeAgent?: (accountId: string, agentId: string) => Promise<void>;
  /** How often the outbox is read besides right after each change. */
  outboxIntervalMs?: number;
}

/** The registry's composition root: its store, the handlers that serve it, and the outbox relay. */
export async function buildRegistry(options: BuildRegistryOptions): Promise<Registry> {
  const store = traceMethods(
    await openRegistryStore({
      dataDir: options.dataDir,
      databaseUrl: options.databaseUrl,
      logger: options.logger,
    }),
    "registry.store",
  );
  const { purgeAgent } = options;
  const relay = new OutboxRelay({
    store,
    logger: options.logger,
    ...(options.outboxIntervalMs !== undefined ? { intervalMs: options.outboxIntervalMs } : {}),
    handlers: purgeAgent
      ? { "agent.deleted": (event) => purgeAgent(event.accountId, event.agentId) }
      : {
          "agent.deleted": () =>
            Promise.reject(new Error("no conversation service is configured to purge deleted agents")),
        },
  });
  relay.start();
  return {
    routes: registryRoutes({ store, logger: options.logger, changed: () => relay.kick() }),
    store,
    relay,
    async ready() {
      try {
        // Any lookup by primary key will do; the answer does not matter, only that one comes.
        await store.getAccount("acct_readiness_probe");
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await relay.stop();
      await store.close();
    },
  };
}
