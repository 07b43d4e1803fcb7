import type pg from "pg";
import { inTransaction } from "./pool.js";

/** One versioned step of a service's Postgres schema. */
export interface PgMigration {
  /** Applied in increasing order; never renumber or edit a released migration, add a new one. */
  version: number;
  name: string;
  /** The statements, given the (validated, unquoted) schema the tables live in. */
  sql(schema: string): string;
  /** Runs after `sql`, in the same transaction: for data the statements cannot make themselves (new ids). */
  data?(client: pg.PoolClient, schema: string): Promise<void>;
}

export interface MigrationTarget {
  /** The schema the service's tables live in. */
  schema: string;
  /** The service's name, for the error about a database newer than this build. */
  service: string;
  /** The service's advisory lock class; the second key is the schema's hash, so each schema migrates alone. */
  lockClass: number;
  migrations: readonly PgMigration[];
}

/**
 * Brings a service's schema up to date in one transaction that first takes a transaction-scoped advisory lock,
 * so when several instances start at once, one migrates and the others wait, then find nothing left to do. A
 * failed migration rolls back whole (Postgres DDL is transactional).
 */
export async function runPgMigrations(pool: pg.Pool, target: MigrationTarget): Promise<void> {
  const { schema, migrations } = target;
  await inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [target.lockClass, schema]);
    // Checked before creating: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when it exists,
    // and an operator may have made the schema for a role that lacks it.
    const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL
    )`);
    const applied = new Set(
      (await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`)).rows.map(
        (row) => row.version,
      ),
    );
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...applied].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new Error(
        `the ${target.service} database has schema version ${Math.max(...unknown)}, newer than this build knows; ` +
          "upgrade the service before opening it",
      );
    }
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql(schema));
      await migration.data?.(client, schema);
      await client.query(
        `INSERT INTO ${schema}.schema_migrations (version, name, applied_at) VALUES ($1, $2, now())`,
        [migration.version, migration.name],
      );
    }
  });
}
