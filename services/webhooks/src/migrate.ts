import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { loadConfig } from "./config.js";
import { openWebhookStore } from "./store/open.js";

/**
 * Brings the webhooks service's schema up to date and exits: Postgres when DATABASE_URL is set, else SQLite in
 * DATA_DIR. The service migrates when it opens its store as well; running this once before a rollout makes a
 * failed migration stop the rollout on its own, before any instance starts serving or delivering.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ service: "webhooks", level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const store = await openWebhookStore({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    waitForDatabase: false,
  });
  await store.close();
  logger.info({ store: config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR } }, "schema up to date");
  logger.flush();
}

main()
  .catch((error: unknown) => {
    exitOnConfigError(error);
  })
  .catch((error: unknown) => {
    process.stderr.write(
      `webhooks migration failed: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exitCode = 1;
  });
