import { type Logger, OutageLog } from "@agentry/logging";
import { openSqliteConnectorStore } from "./sqlite.js";
import type { Clock, ConnectorStore } from "./types.js";

export interface ConnectorStoreOptions {
  /** Directory of the embedded database; created when missing. Unused with `databaseUrl`. */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL): the tables live in its `connectors` schema. */
  databaseUrl?: string | undefined;
  logger?: Logger;
  /** Whether opening Postgres waits while the database cannot be reached (default true); jobs pass false. */
  waitForDatabase?: boolean;
  clock?: Clock;
}

/** Opens the connectors store: Postgres when `databaseUrl` is given, else `<dataDir>/connectors.db`. */
export async function openConnectorStore(options: ConnectorStoreOptions): Promise<ConnectorStore> {
  const { logger, clock } = options;
  if (options.databaseUrl) {
    // Loaded only for Postgres, so an embedded deployment never loads the driver.
    const { openPostgresConnectorStore } = await import("./postgres.js");
    return openPostgresConnectorStore({
      connectionString: options.databaseUrl,
      ...(options.waitForDatabase !== undefined ? { waitForDatabase: options.waitForDatabase } : {}),
      ...(logger ? { availability: new OutageLog(logger, "postgres") } : {}),
      ...(clock ? { clock } : {}),
    });
  }
  return openSqliteConnectorStore({ dataDir: options.dataDir, ...(clock ? { clock } : {}) });
}
