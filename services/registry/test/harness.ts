import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Logger, silentLogger } from "@agentry/logging";
import { AccountService, AgentService, PluginService } from "@agentry/proto";
import { servedInterceptors } from "@agentry/rpc";
import { type Client, createClient, createRouterTransport } from "@connectrpc/connect";
import { openRegistryStore, SecretVault } from "../src/index.js";
import { registryRoutes } from "../src/rpc/routes.js";
import type { RegistryStore } from "../src/store/types.js";

/** A SECRETS_KEY for tests (the base64 of 32 bytes). */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString("base64");

export interface Harness {
  store: RegistryStore;
  agents: Client<typeof AgentService>;
  accounts: Client<typeof AccountService>;
  plugins: Client<typeof PluginService>;
  /** The handlers' logger; it writes nothing, but tests may spy on it. */
  logger: Logger;
  close(): Promise<void>;
}

/**
 * The registry's handlers over the in-process transport, on a real SQLite file in a temp dir. `wrap` may replace
 * the store the handlers see, to inject failures.
 */
export async function startRegistry(
  wrap: (store: RegistryStore) => RegistryStore = (s) => s,
): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-rpc-"));
  const store = await openRegistryStore({ dataDir });
  const logger = silentLogger();
  const transport = createRouterTransport(
    registryRoutes({
      store: wrap(store),
      logger,
      secrets: new SecretVault(TEST_SECRETS_KEY),
      changed: () => {},
    }),
    {
      router: { interceptors: servedInterceptors(logger) },
    },
  );
  return {
    store,
    agents: createClient(AgentService, transport),
    accounts: createClient(AccountService, transport),
    plugins: createClient(PluginService, transport),
    logger,
    async close() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
