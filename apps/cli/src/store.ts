import { type ConversationStore, openConversationStore } from "@agentry/conversation";
import { openRegistryStore, type RegistryStore } from "@agentry/registry";
import type { CliConfig } from "./config.js";

/** The one place that chooses the registry backend for the CLI. */
export function openStore(config: CliConfig): Promise<RegistryStore> {
  return openRegistryStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
}

/**
 * The conversation store (history and usage), chosen as the services choose it: the Postgres of DATABASE_URL, else
 * `conversation.db` in DATA_DIR. A database that cannot be reached fails the command rather than being waited for.
 */
export function openConversations(config: CliConfig): Promise<ConversationStore> {
  return openConversationStore({
    dataDir: config.dataDir,
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    waitForDatabase: false,
  });
}
