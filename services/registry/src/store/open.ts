import type { Logger } from "@agentry/logging";
import { openPostgresRegistryStore } from "./postgres.js";
import { openSqliteRegistryStore } from "./sqlite.js";
import type { RegistryStore } from "./types.js";

export interface RegistryStoreOptions {
  /** Directory of the embedded database; created when missing. Unused with `databaseUrl`. */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL): the registry's tables live in its `registry` schema. */
  databaseUrl?: string;
  /** Where connection problems of the Postgres pool are reported. */
  logger?: Logger;
}

/**
 * Opens the registry's store: Postgres when `databaseUrl` is given, else the embedded SQLite database in
 * `<dataDir>/registry.db`. Either way the schema is brought up to date first.
 */
export async function openRegistryStore(options: RegistryStoreOptions): Promise<RegistryStore> {
  if (options.databaseUrl) {
    const { logger } = options;
    return openPostgresRegistryStore({
      connectionString: options.databaseUrl,
      ...(logger
        ? { onConnectionError: (error: Error) => logger.warn({ err: error }, "database connection lost") }
        : {}),
    });
  }
  return openSqliteRegistryStore(options);
}
