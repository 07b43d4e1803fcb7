export { openSqliteDatabase, sqliteSchemaVersion, watchOtherConnections } from "./database.js";
export { GroupCommit } from "./group-commit.js";
export { runSqliteMigrations, type SqliteMigration, type SqliteMigrationTarget } from "./migrate.js";
