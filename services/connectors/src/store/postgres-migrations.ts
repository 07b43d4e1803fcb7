import type { MigrationTarget, PgMigration } from "@agentry/pg";

/** The connectors service's advisory lock class; the second key is the schema's hash, so each schema migrates alone. */
const MIGRATION_LOCK_CLASS = 0x41475204;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "leases, cursors, answered messages",
    // As SQLite's version 1.
    sql: (s) => `
      CREATE TABLE ${s}.leases (
        key text COLLATE "C" PRIMARY KEY,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE TABLE ${s}.cursors (
        key text COLLATE "C" PRIMARY KEY,
        value text NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE TABLE ${s}.answered (
        message_key text COLLATE "C" PRIMARY KEY,
        agent_id text NOT NULL,
        answered_at timestamptz NOT NULL
      );
    `,
  },
];

/** What `openPgDatabase` (or the migrations job) brings up to date: the connectors schema. */
export function migrationTarget(
  schema: string,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): MigrationTarget {
  return { schema, service: "connectors", lockClass: MIGRATION_LOCK_CLASS, migrations };
}
