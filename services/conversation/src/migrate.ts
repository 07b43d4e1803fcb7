import { env, exitOnConfigError, parseEnv, z } from "@agentry/config";
import { createLogger } from "@agentry/logging";
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

/**
 * Brings the conversation service's schema up to date and exits: Postgres when DATABASE_URL is set, else SQLite
 * in DATA_DIR. The service migrates when it opens its store as well; running this once before a rollout makes a
 * failed migration stop the rollout on its own, before any instance starts serving.
 */
async function main(): Promise<void> {
  const config = parseEnv(schema, process.env);
  const logger = createLogger({
    service: "conversation",
    level: config.LOG_LEVEL,
    format: config.LOG_FORMAT,
  });
  const store = await openConversationStore({
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
      `conversation migration failed: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exitCode = 1;
  });
