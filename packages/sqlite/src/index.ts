export { openSqliteDatabase, sqliteSchemaVersion, watchOtherConnections } from "./database.js";
export { runSqliteMigrations, type SqliteMigration, type SqliteMigrationTarget } from "./migrate.js";
