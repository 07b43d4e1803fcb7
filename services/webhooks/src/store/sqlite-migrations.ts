import { SQLITE_AUDIT_TABLE, type SqliteMigration, type SqliteMigrationTarget } from "@agentry/sqlite";

export const MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: "endpoints, events, deliveries",
    sql: `
      CREATE TABLE endpoints (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        url TEXT NOT NULL,
        events TEXT NOT NULL CHECK (json_valid(events)),
        description TEXT NOT NULL,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        disabled_reason TEXT,
        -- Stored forms (SecretBox): sealed when a key is configured, as they are otherwise.
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at TEXT,
        -- When the current run of failed attempts began; null after a success.
        failing_since TEXT,
        -- The worker delivering to it, until the lease expires.
        lease_owner TEXT,
        lease_expires_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX endpoints_by_account ON endpoints (account_id, id);

      CREATE TABLE events (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL CHECK (json_valid(data)),
        created_at TEXT NOT NULL,
        received_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE deliveries (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
        event_id TEXT NOT NULL REFERENCES events (id),
        attempt INTEGER NOT NULL,
        -- The schedule index of the retry after a failure; null: a failure is not retried.
        retry_step INTEGER,
        status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        response_status INTEGER,
        duration_ms INTEGER,
        error TEXT,
        -- The first KiB of the answer, for operators; never returned by the service.
        response_body BLOB,
        created_at TEXT NOT NULL,
        next_attempt_at TEXT,
        -- Set when a worker takes the attempt: pending and started under a lapsed lease means interrupted.
        started_at TEXT,
        worker TEXT,
        UNIQUE (endpoint_id, event_id, attempt)
      ) STRICT;
      CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, id);
    `,
  },
  {
    version: 2,
    name: "events expire",
    // What the sweep of events past their retention reads: the oldest first, and each one's attempts.
    sql: `
      CREATE INDEX events_by_received ON events (received_at);
      CREATE INDEX deliveries_by_event ON deliveries (event_id);
    `,
  },
  {
    version: 3,
    name: "endpoints made under an Idempotency-Key",
    // The SHA-256 of the Idempotency-Key an endpoint was made under, so that the create run again under it (its
    // caller stopped before keeping the answer) finds the endpoint instead of making a second one.
    sql: `
      ALTER TABLE endpoints ADD COLUMN idempotency_key_hash TEXT;
      CREATE INDEX endpoints_by_idempotency_key ON endpoints (account_id, idempotency_key_hash)
        WHERE idempotency_key_hash IS NOT NULL;
    `,
  },
  {
    version: 4,
    name: "audit log",
    // Who changed which endpoint, recorded in the change's transaction (docs/api/audit.md).
    sql: SQLITE_AUDIT_TABLE,
  },
  {
    version: 5,
    name: "pending attempts by endpoint",
    // What claiming and recording read of an endpoint: its due attempts in order, and those started and never
    // recorded; without it, both walked the endpoint's whole delivery log.
    sql: `
      CREATE INDEX deliveries_pending_by_endpoint ON deliveries (endpoint_id, next_attempt_at, id)
        WHERE status = 'pending';
    `,
  },
];

export const MIGRATION_TARGET: SqliteMigrationTarget = { service: "webhooks", migrations: MIGRATIONS };
