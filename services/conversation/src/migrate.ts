import { env, parseEnv, z } from "@agentry/config";
import { runMigrationCommand } from "@agentry/rpc";
import { openConversationStore } from "./store/open.js";

/**
 * The variables the store needs, read as `loadConversationConfig` reads them. Not that function itself: its
 * module imports the model providers' code, which plays no part here, and it checks every provider variable, so a
 * migration would fail over a setting it never reads.
 */
const schema = z.object({
  DATA_DIR: env.dataDir(),
  DATABASE_URL: env.databaseUrl(),
  LOG_LEVEL: env.logLevel(),
  LOG_FORMAT: env.logFormat(),
});

/** Brings the conversation service's schema up to date and exits (`runMigrationCommand`). */
runMigrationCommand(
  "conversation",
  () => parseEnv(schema, process.env),
  (config, logger) =>
    openConversationStore({
      dataDir: config.DATA_DIR,
      databaseUrl: config.DATABASE_URL,
      logger,
      waitForDatabase: false,
    }),
);
