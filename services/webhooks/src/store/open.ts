import { type Logger, OutageLog } from "@agentry/logging";
import { openSqliteWebhookStore } from "./sqlite.js";
import type { Clock, WebhookStore } from "./types.js";

export interface WebhookStoreOptions {
  /** Directory of the embedded database; created when missing. Unused with `databaseUrl`. */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL): the tables live in its `webhooks` schema. */
  databaseUrl?: string | undefined;
  /** Where outages of the Postgres database are reported: a line as each starts and ends, a count between. */
  logger?: Logger;
  /** Whether opening Postgres waits while the database cannot be reached (default true); jobs pass false. */
  waitForDatabase?: boolean;
  clock?: Clock;
}

/**
 * Opens the webhooks store: Postgres when `databaseUrl` is given, else the embedded SQLite database in
 * `<dataDir>/webhooks.db`. Either way the schema is brought up to date first.
 */
export async function openWebhookStore(options: WebhookStoreOptions): Promise<WebhookStore> {
  const { logger, clock } = options;
  if (options.databaseUrl) {
    // Loaded only for Postgres, so an embedded deployment never loads the driver.
    const { openPostgresWebhookStore } = await import("./postgres.js");
    return openPostgresWebhookStore({
      connectionString: options.databaseUrl,
      ...(options.waitForDatabase !== undefined ? { waitForDatabase: options.waitForDatabase } : {}),
      ...(logger ? { availability: new OutageLog(logger, "postgres") } : {}),
      ...(clock ? { clock } : {}),
    });
  }
  return openSqliteWebhookStore({ dataDir: options.dataDir, ...(clock ? { clock } : {}) });
}
