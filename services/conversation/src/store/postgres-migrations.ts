import type pg from "pg";

export interface PgMigration {
  /** Applied in increasing order; never renumber or edit a released migration, add a new one. */
  version: number;
  name: string;
  /** The statements, given the (validated, unquoted) schema the tables live in. */
  sql(schema: string): string;
}

/** The conversation service's advisory lock class; the second key is the schema's hash. */
const MIGRATION_LOCK_CLASS = 0x41475202;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "conversations, turns, calls, purged agents",
    sql: (s) => `
      CREATE TABLE ${s}.conversations (
        account_id text NOT NULL,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        room_id text NOT NULL,
        turn_count integer NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, user_id, room_id, account_id)
      );

      -- seq orders the turns (an exchange's two turns are adjacent) and is the pagination cursor.
      CREATE TABLE ${s}.turns (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        room_id text NOT NULL,
        role text NOT NULL CHECK (role IN ('user', 'assistant')),
        text text NOT NULL,
        model text,
        provider text,
        input_tokens integer NOT NULL,
        output_tokens integer NOT NULL,
        latency_ms integer NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX turns_by_conversation ON ${s}.turns (agent_id, user_id, room_id, seq);

      CREATE TABLE ${s}.calls (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        request_id text,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        room_id text NOT NULL,
        provider text,
        model text,
        stream boolean NOT NULL,
        outcome text NOT NULL CHECK (outcome IN ('completed', 'failed', 'cancelled')),
        error_code text,
        error_message text,
        latency_ms integer NOT NULL,
        first_token_ms integer,
        input_tokens integer NOT NULL,
        output_tokens integer NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX calls_by_agent ON ${s}.calls (agent_id, seq);

      -- Agents whose data was purged: nothing more is stored for them (a reply in flight during the purge).
      CREATE TABLE ${s}.purged_agents (
        agent_id text NOT NULL,
        account_id text NOT NULL,
        purged_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, account_id)
      );
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
        `the conversation database has schema version ${Math.max(...unknown)}, newer than this build knows; ` +
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
