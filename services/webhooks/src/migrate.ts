import { runMigrationCommand } from "@agentry/rpc";
import { loadConfig } from "./config.js";
import { openWebhookStore } from "./store/open.js";

/** Brings the webhooks service's schema up to date and exits (`runMigrationCommand`). */
runMigrationCommand("webhooks", loadConfig, (config, logger) =>
  openWebhookStore({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    waitForDatabase: false,
  }),
);
