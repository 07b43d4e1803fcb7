import { fileURLToPath } from "node:url";
import { sqliteSchemaVersion } from "@agentry/sqlite";
import { migrateEntryPointSuite } from "@agentry/testing-pg/migrate-suite";
import { PG_MIGRATIONS } from "../src/store/postgres-migrations.js";
import { CONNECTORS_DB_FILE } from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";

migrateEntryPointSuite({
  service: "connectors",
  packageDir: fileURLToPath(new URL("..", import.meta.url)),
  sqliteFile: CONNECTORS_DB_FILE,
  postgresMigrations: PG_MIGRATIONS,
  sqliteMigrations: MIGRATIONS,
  sqliteVersion: sqliteSchemaVersion,
});
