import { runMigrationCommand } from "@agentry/rpc";
import { loadMigrationConfig } from "./config.js";
import { openConnectorStore } from "./store/open.js";

/** Brings the connectors service's schema up to date and exits (`runMigrationCommand`). */
runMigrationCommand(
  "connectors",
  () => loadMigrationConfig(),
  (config, logger) =>
    openConnectorStore({
      dataDir: config.DATA_DIR,
      databaseUrl: config.DATABASE_URL,
      logger,
      waitForDatabase: false,
    }),
);
