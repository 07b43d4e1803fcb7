export {
  type PgAuditLog,
  type PgAuditPageQuery,
  type PgAuditRecord,
  pgAuditLog,
  pgAuditTable,
} from "./audit.js";
export {
  type OpenDatabaseOptions,
  openPgDatabase,
  openStoreDatabase,
  PgDatabase,
  type PgStoreKind,
  type PgStoreOptions,
  run,
  type Statement,
} from "./database.js";
export { isDatabaseUnavailable } from "./errors.js";
export { type MigrationTarget, type PgMigration, runPgMigrations } from "./migrate.js";
export { assertSchemaName, createPool, inTransaction, type PoolOptions } from "./pool.js";
