import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { runSqliteMigrations, type SqliteMigrationTarget } from "./migrate.js";

/** How long a statement waits for another connection's lock before it fails with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens a service's database file (creating it and its directory when missing) with the settings every
 * connection needs, and brings its schema up to date. Several processes may open the same file at once.
 */
export function openSqliteDatabase(file: string, migrations: SqliteMigrationTarget): Database.Database {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  try {
    // busy_timeout first: switching to WAL needs a lock that another process opening the file may hold.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // WAL: readers do not block the writer, nor the writer readers.
    db.pragma("journal_mode = WAL");
    // FULL: a committed change survives a power loss, not just a crash of the process.
    db.pragma("synchronous = FULL");
    // SQLite leaves declared foreign keys unenforced unless each connection asks.
    db.pragma("foreign_keys = ON");
    runSqliteMigrations(db, migrations);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * A check for commits by other connections to the same file (another process, or another store in this one),
 * for caches of what this connection read: each call says whether any has committed since the previous call (or
 * since the watch began). SQLite's `data_version` changes with every commit of any other connection, never with
 * this connection's own.
 */
export function watchOtherConnections(db: Database.Database): () => boolean {
  const dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck();
  let seen = dataVersion.get();
  return () => {
    const version = dataVersion.get();
    if (version === seen) return false;
    seen = version;
    return true;
  };
}

/** The highest schema version applied to a database file, read without writing to it; 0 before any. */
export function sqliteSchemaVersion(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[], number>("SELECT max(version) FROM schema_migrations").pluck().get() ?? 0;
  } finally {
    db.close();
  }
}
