import { type Logger, OutageLog } from "@agentry/logging";
import { openSqliteConversationStore } from "./sqlite.js";
import type { ConversationStore } from "./types.js";

export interface ConversationStoreOptions {
  /** Directory of the embedded database; created when missing. Unused with `databaseUrl`. */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL): the service's tables live in its `conversation` schema. */
  databaseUrl?: string;
  /** Where outages of the Postgres database are reported: a line as each starts and ends, a count between. */
  logger?: Logger;
  /** Whether opening Postgres waits while the database cannot be reached (default true); jobs pass false. */
  waitForDatabase?: boolean;
}

/**
 * Opens the conversation store: Postgres when `databaseUrl` is given, else the embedded SQLite database in
 * `<dataDir>/conversation.db`. Either way the schema is brought up to date first.
 */
export async function openConversationStore(options: ConversationStoreOptions): Promise<ConversationStore> {
  if (options.databaseUrl) {
    const { logger } = options;
    // Loaded only for Postgres, so an embedded deployment never loads the driver.
    const { openPostgresConversationStore } = await import("./postgres.js");
    return openPostgresConversationStore({
      connectionString: options.databaseUrl,
      ...(options.waitForDatabase !== undefined ? { waitForDatabase: options.waitForDatabase } : {}),
      ...(logger ? { availability: new OutageLog(logger, "postgres") } : {}),
    });
  }
  return openSqliteConversationStore(options);
}
