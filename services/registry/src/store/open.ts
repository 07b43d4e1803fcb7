import { type Logger, OutageLog } from "@agentry/logging";
import { openSqliteRegistryStore } from "./sqlite.js";
import type { RegistryStore } from "./types.js";

export interface RegistryStoreOptions {
  /** Directory of the embedded database; created when missing. Unused with `databaseUrl`. */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL): the registry's tables live in its `registry` schema. */
  databaseUrl?: string;
  /** Where outages of the Postgres database are reported: a line as each starts and ends, a count between. */
  logger?: Logger;
  /** Whether opening Postgres waits while the database cannot be reached (default true); jobs pass false. */
  waitForDatabase?: boolean;
}

/**
 * Opens the registry's store: Postgres when `databaseUrl` is given, else the embedded SQLite database in
 * `<dataDir>/registry.db`. Either way the schema is brought up to date first.
 */
export async function openRegistryStore(options: RegistryStoreOptions): Promise<RegistryStore> {
  if (options.databaseUrl) {
    const { logger } = options;
    // Loaded only for Postgres, so an embedded deployment never loads the driver.
    const { openPostgresRegistryStore } = await import("./postgres.js");
    return openPostgresRegistryStore({
      connectionString: options.databaseUrl,
      ...(options.waitForDatabase !== undefined ? { waitForDatabase: options.waitForDatabase } : {}),
      ...(logger ? { availability: new OutageLog(logger, "postgres") } : {}),
    });
  }
  return openSqliteRegistryStore(options);
}
