import type Database from "better-sqlite3";

/** One versioned step of a service's SQLite schema. */
export interface SqliteMigration {
  /** Applied in increasing order; never renumber or edit a released migration, add a new one. */
  version: number;
  name: string;
  sql: string;
  /** Runs after `sql`, in the same transaction: for data the statements cannot make themselves (new ids). */
  data?: (db: Database.Database) => void;
}

export interface SqliteMigrationTarget {
  /** The service's name, for the error about a database newer than this build. */
  service: string;
  migrations: readonly SqliteMigration[];
}

/**
 * Brings a service's schema up to date in one transaction. The whole run holds the write lock (BEGIN
 * IMMEDIATE), so when several processes open the same file at once, one applies the migrations and the others
 * wait, then find nothing left to do; a failed migration rolls back whole.
 */
export function runSqliteMigrations(db: Database.Database, target: SqliteMigrationTarget): void {
  const { migrations } = target;
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    ) STRICT`);
    const applied = new Set(db.prepare<[], number>("SELECT version FROM schema_migrations").pluck().all());
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...applied].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new Error(
        `the ${target.service} database has schema version ${Math.max(...unknown)}, newer than this build knows; ` +
          "upgrade the service before opening it",
      );
    }
    const record = db.prepare<[number, string, string]>(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
    );
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sql);
      migration.data?.(db);
      record.run(migration.version, migration.name, new Date().toISOString());
    }
  }).immediate();
}
