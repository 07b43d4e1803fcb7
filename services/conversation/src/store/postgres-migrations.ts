import type { MigrationTarget, PgMigration } from "@agentry/pg";

export type { PgMigration };

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

/** What `openPgDatabase` (or the migrations job) brings up to date: the conversation schema. */
export function migrationTarget(
  schema: string,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): MigrationTarget {
  return { schema, service: "conversation", lockClass: MIGRATION_LOCK_CLASS, migrations };
}
