import type { Logger } from "@agentry/logging";
import type { ConnectRouter } from "@connectrpc/connect";
import { registryRoutes } from "./rpc/routes.js";
import { openRegistryStore } from "./store/open.js";
import type { RegistryStore } from "./store/types.js";

export interface Registry {
  routes: (router: ConnectRouter) => void;
  store: RegistryStore;
  /** Whether the store answers a trivial query: what readiness probes report. */
  ready(): Promise<boolean>;
  /** Closes the store; in-flight calls must have finished. */
  close(): Promise<void>;
}

/** The registry's composition root: its store, and the handlers that serve it, sharing one context. */
export async function buildRegistry(options: { dataDir: string; logger: Logger }): Promise<Registry> {
  const store = await openRegistryStore({ dataDir: options.dataDir });
  return {
    routes: registryRoutes({ store, logger: options.logger }),
    store,
    async ready() {
      try {
        // Any lookup by primary key will do; the answer does not matter, only that one comes.
        await store.getAccount("acct_readiness_probe");
        return true;
      } catch {
        return false;
      }
    },
    close: () => store.close(),
  };
}
