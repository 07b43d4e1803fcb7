export {
  type AuditPageQuery,
  type AuditRecord,
  auditPageOf,
  auditPageSql,
  SQLITE_AUDIT_TABLE,
  type SqliteAuditLog,
  sqliteAuditLog,
} from "./audit.js";
export { openSqliteDatabase, sqliteSchemaVersion, watchOtherConnections } from "./database.js";
export { GroupCommit } from "./group-commit.js";
export { runSqliteMigrations, type SqliteMigration, type SqliteMigrationTarget } from "./migrate.js";
