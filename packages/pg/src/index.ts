export {
  type OpenDatabaseOptions,
  openPgDatabase,
  PgDatabase,
  run,
  type Statement,
} from "./database.js";
export { isDatabaseUnavailable } from "./errors.js";
export { type MigrationTarget, type PgMigration, runPgMigrations } from "./migrate.js";
export { assertSchemaName, createPool, inTransaction, type PoolOptions } from "./pool.js";
