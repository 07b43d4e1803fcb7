import { exitOnConfigError } from "@agentry/config";
import { createLogger, type Logger, type LoggerConfig } from "@agentry/logging";

/** What a service's migration command reads of its configuration. */
export interface MigrationConfig {
  DATA_DIR: string;
  DATABASE_URL?: string | undefined;
  LOG_LEVEL: LoggerConfig["level"];
  LOG_FORMAT: LoggerConfig["format"];
}

/**
 * A service's migration command (`pnpm --filter <service> migrate`, the Kubernetes migration job): brings its
 * schema up to date by opening its store (Postgres when DATABASE_URL is set, else SQLite in DATA_DIR) without
 * waiting for the database, closes it and exits. Run once before a rollout, a failed migration stops the rollout
 * on its own, before any instance starts serving. A configuration error is its one line and exit code 1; any
 * other failure its stack and exit code 1.
 */
export function runMigrationCommand<C extends MigrationConfig>(
  service: string,
  loadConfig: () => C,
  open: (config: C, logger: Logger) => Promise<{ close(): Promise<void> }>,
): void {
  const main = async () => {
    const config = loadConfig();
    const logger = createLogger({ service, level: config.LOG_LEVEL, format: config.LOG_FORMAT });
    const store = await open(config, logger);
    await store.close();
    logger.info(
      { store: config.DATABASE_URL ? "postgres" : { sqlite: config.DATA_DIR } },
      "schema up to date",
    );
    logger.flush();
  };
  main()
    .catch((error: unknown) => exitOnConfigError(error))
    .catch((error: unknown) => {
      process.stderr.write(
        `${service} migration failed: ${error instanceof Error ? error.stack : String(error)}\n`,
      );
      process.exitCode = 1;
    });
}
