import type { Logger } from "@agentry/logging";
import { openPostgresConversationStore } from "./postgres.js";
import { openSqliteConversationStore } from "./sqlite.js";
import type { ConversationStore } from "./types.js";

export interface ConversationStoreOptions {
  /** Directory of the embedded database; created when missing. Unused with `databaseUrl`. */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL): the service's tables live in its `conversation` schema. */
  databaseUrl?: string;
  /** Where connection problems of the Postgres pool are reported. */
  logger?: Logger;
}

/**
 * Opens the conversation store: Postgres when `databaseUrl` is given, else the embedded SQLite database in
 * `<dataDir>/conversation.db`. Either way the schema is brought up to date first.
 */
export async function openConversationStore(options: ConversationStoreOptions): Promise<ConversationStore> {
  if (options.databaseUrl) {
    const { logger } = options;
    return openPostgresConversationStore({
      connectionString: options.databaseUrl,
      ...(logger
        ? { onConnectionError: (error: Error) => logger.warn({ err: error }, "database connection lost") }
        : {}),
    });
  }
  return openSqliteConversationStore(options);
}
