import { runMigrationCommand } from "@agentry/rpc";
import { loadConfig } from "./config.js";
import { openRegistryStore } from "./store/open.js";

/** Brings the registry's schema up to date and exits (`runMigrationCommand`). */
runMigrationCommand("registry", loadConfig, (config, logger) =>
  openRegistryStore({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    waitForDatabase: false,
  }),
);
