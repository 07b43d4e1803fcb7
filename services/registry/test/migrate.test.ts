import { fileURLToPath } from "node:url";
import { migrateEntryPointSuite } from "@agentry/testing-pg/migrate-suite";
import Database from "better-sqlite3";
import { PG_MIGRATIONS } from "../src/store/postgres-migrations.js";
import { REGISTRY_DB_FILE } from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";

migrateEntryPointSuite({
  service: "registry",
  packageDir: fileURLToPath(new URL("..", import.meta.url)),
  sqliteFile: REGISTRY_DB_FILE,
  postgresMigrations: PG_MIGRATIONS,
  sqliteMigrations: MIGRATIONS,
  sqliteVersion(file) {
    const sqlite = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return sqlite.prepare<[], number>("SELECT max(version) FROM schema_migrations").pluck().get() ?? 0;
    } finally {
      sqlite.close();
    }
  },
});
