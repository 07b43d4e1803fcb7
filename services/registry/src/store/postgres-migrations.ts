import type pg from "pg";

export interface PgMigration {
  /** Applied in increasing order; never renumber or edit a released migration, add a new one. */
  version: number;
  name: string;
  /** The statements, given the (validated, unquoted) schema the tables live in. */
  sql(schema: string): string;
}

/** The registry's advisory lock class; the second key is the schema's hash, so each schema migrates alone. */
const MIGRATION_LOCK_CLASS = 0x41475201;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "accounts, api keys, agents, outbox",
    sql: (s) => `
      CREATE TABLE ${s}.accounts (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL UNIQUE,
        tier text NOT NULL CHECK (tier IN ('standard', 'pro', 'enterprise')),
        limit_overrides jsonb NOT NULL,
        created_at timestamptz NOT NULL
      );

      CREATE TABLE ${s}.api_keys (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        name text NOT NULL,
        sha256 text NOT NULL UNIQUE,
        prefix text NOT NULL,
        scopes jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz,
        expires_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_by_account ON ${s}.api_keys (account_id, created_at, id);

      CREATE TABLE ${s}.agents (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        -- Byte order of UTF-8 is code point order, which is how lists sort names.
        name text COLLATE "C" NOT NULL,
        bio jsonb NOT NULL,
        personality jsonb NOT NULL,
        knowledge jsonb NOT NULL,
        goals jsonb NOT NULL,
        clients jsonb NOT NULL,
        settings jsonb NOT NULL,
        model_provider text,
        model text,
        plugins jsonb NOT NULL,
        status text COLLATE "C" NOT NULL CHECK (status IN ('active', 'inactive', 'error')),
        status_reason jsonb,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      -- One index per sort of a list, each ending in id because ties are broken by id.
      CREATE INDEX agents_by_created ON ${s}.agents (account_id, created_at, id);
      CREATE INDEX agents_by_name ON ${s}.agents (account_id, name, id);
      CREATE INDEX agents_by_status ON ${s}.agents (account_id, status, id);
      CREATE INDEX agents_by_status_created ON ${s}.agents (account_id, status, created_at, id);

      CREATE TABLE ${s}.outbox (
        seq bigserial PRIMARY KEY,
        type text NOT NULL,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        published_at timestamptz
      );
      CREATE INDEX outbox_unpublished ON ${s}.outbox (seq) WHERE published_at IS NULL;
    `,
  },
];

/**
 * Brings the schema up to date in one transaction that first takes a transaction-scoped advisory lock, so
 * when several instances start at once, one migrates and the others wait, then find nothing left to do. A
 * failed migration rolls back whole (Postgres DDL is transactional).
 */
export async function migratePostgres(
  pool: pg.Pool,
  schema: string,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [MIGRATION_LOCK_CLASS, schema]);
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
        `the registry database has schema version ${Math.max(...unknown)}, newer than this build knows; ` +
          "upgrade the service before opening it",
      );
    }
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql(schema));
      await client.query(
        `INSERT INTO ${schema}.schema_migrations (version, name, applied_at) VALUES ($1, $2, now())`,
        [migration.version, migration.name],
      );
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
