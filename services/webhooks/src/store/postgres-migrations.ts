import { type MigrationTarget, type PgMigration, pgAuditTable } from "@agentry/pg";

/** The webhooks service's advisory lock class; the second key is the schema's hash, so each schema migrates alone. */
const MIGRATION_LOCK_CLASS = 0x41475203;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "endpoints, events, deliveries",
    sql: (s) => `
      CREATE TABLE ${s}.endpoints (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL,
        url text NOT NULL,
        events jsonb NOT NULL,
        description text NOT NULL,
        enabled boolean NOT NULL,
        disabled_reason text,
        -- Stored forms (SecretBox): sealed when a key is configured, as they are otherwise.
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        -- When the current run of failed attempts began; null after a success.
        failing_since timestamptz,
        -- The worker delivering to it, until the lease expires.
        lease_owner text,
        lease_expires_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE INDEX endpoints_by_account ON ${s}.endpoints (account_id, id);

      CREATE TABLE ${s}.events (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL,
        type text NOT NULL,
        -- json, not jsonb: the text is kept as published, so every attempt sends the same bytes.
        data json NOT NULL,
        created_at timestamptz NOT NULL,
        received_at timestamptz NOT NULL
      );

      CREATE TABLE ${s}.deliveries (
        id text COLLATE "C" PRIMARY KEY,
        endpoint_id text COLLATE "C" NOT NULL REFERENCES ${s}.endpoints (id) ON DELETE CASCADE,
        event_id text COLLATE "C" NOT NULL REFERENCES ${s}.events (id),
        attempt integer NOT NULL,
        -- The schedule index of the retry after a failure; null: a failure is not retried.
        retry_step integer,
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        response_status integer,
        duration_ms integer,
        error text,
        -- The first KiB of the answer, for operators; never returned by the service.
        response_body bytea,
        created_at timestamptz NOT NULL,
        next_attempt_at timestamptz,
        -- Set when a worker takes the attempt: pending and started under a lapsed lease means interrupted.
        started_at timestamptz,
        worker text,
        UNIQUE (endpoint_id, event_id, attempt)
      );
      CREATE INDEX deliveries_due ON ${s}.deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX deliveries_by_endpoint ON ${s}.deliveries (endpoint_id, id);
    `,
  },
  {
    version: 2,
    name: "events expire",
    // As SQLite's version 2.
    sql: (s) => `
      CREATE INDEX events_by_received ON ${s}.events (received_at);
      CREATE INDEX deliveries_by_event ON ${s}.deliveries (event_id);
    `,
  },
  {
    version: 3,
    name: "endpoints made under an Idempotency-Key",
    // The SHA-256 of the Idempotency-Key an endpoint was made under, so that the create run again under it (its
    // caller stopped before keeping the answer) finds the endpoint instead of making a second one.
    sql: (s) => `
      ALTER TABLE ${s}.endpoints ADD COLUMN idempotency_key_hash text;
      CREATE INDEX endpoints_by_idempotency_key ON ${s}.endpoints (account_id, idempotency_key_hash)
        WHERE idempotency_key_hash IS NOT NULL;
    `,
  },
  {
    version: 4,
    name: "audit log",
    // Who changed which endpoint, recorded in the change's transaction (docs/api/audit.md).
    sql: pgAuditTable,
  },
  {
    version: 5,
    name: "pending attempts by endpoint",
    // As SQLite's version 5.
    sql: (s) => `
      CREATE INDEX deliveries_pending_by_endpoint ON ${s}.deliveries (endpoint_id, next_attempt_at, id)
        WHERE status = 'pending';
    `,
  },
];

/** What `openPgDatabase` (or the migrations job) brings up to date: the webhooks schema. */
export function migrationTarget(
  schema: string,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): MigrationTarget {
  return { schema, service: "webhooks", lockClass: MIGRATION_LOCK_CLASS, migrations };
}
