import { type MigrationTarget, type PgMigration, pgAuditTable } from "@agentry/pg";
import { ownerIds } from "./members.js";
import { nameOutboxEvents } from "./outbox-ids.js";

export type { PgMigration };

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
  {
    version: 2,
    name: "full-access keys",
    // As SQLite's version 2: keys holding exactly the five scopes of version 1 were made without scopes, and now
    // hold every scope, later ones included. Containment both ways is equality of the sets.
    sql: (s) => `
      UPDATE ${s}.api_keys SET scopes = '["*"]'::jsonb
      WHERE scopes @> '["agents:read", "agents:write", "agents:delete", "messages:send", "keys:manage"]'::jsonb
        AND scopes <@ '["agents:read", "agents:write", "agents:delete", "messages:send", "keys:manage"]'::jsonb;
    `,
  },
  {
    version: 3,
    name: "outbox: event ids, a place of its own for webhooks, no secrets",
    // As SQLite's version 3: the webhooks channel starts where the other one is, unrelayed events get their ids
    // (rows an older version writes during a rolling upgrade get theirs when first read), payloads lose the
    // copies of agents' secrets.
    sql: (s) => `
      ALTER TABLE ${s}.outbox ADD COLUMN event_id text COLLATE "C";
      ALTER TABLE ${s}.outbox ADD COLUMN webhooks_published_at timestamptz;
      UPDATE ${s}.outbox SET webhooks_published_at = published_at WHERE published_at IS NOT NULL;
      UPDATE ${s}.outbox SET payload = payload #- '{agent,settings,secrets}'
      WHERE payload #> '{agent,settings,secrets}' IS NOT NULL;
      CREATE INDEX outbox_unpublished_webhooks ON ${s}.outbox (seq) WHERE webhooks_published_at IS NULL;
    `,
    async data(client, s) {
      const unnamed = await client.query<{ seq: string; created_at: Date }>(
        `SELECT seq, created_at FROM ${s}.outbox WHERE event_id IS NULL AND published_at IS NULL`,
      );
      for (const [seq, id] of nameOutboxEvents(unnamed.rows)) {
        await client.query(`UPDATE ${s}.outbox SET event_id = $1 WHERE seq = $2 AND event_id IS NULL`, [
          id,
          seq,
        ]);
      }
    },
  },
  {
    version: 4,
    name: "idempotency keys",
    // As SQLite's version 4.
    sql: (s) => `
      CREATE TABLE ${s}.idempotency_keys (
        account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        key_hash text COLLATE "C" NOT NULL,
        fingerprint text NOT NULL,
        lease_until bigint,
        expires_at bigint NOT NULL,
        status integer,
        sealed bytea,
        resource_id text,
        PRIMARY KEY (account_id, key_hash)
      );
      CREATE INDEX idempotency_keys_by_expiry ON ${s}.idempotency_keys (expires_at);
    `,
  },
  {
    version: 5,
    name: "agent counts",
    // As SQLite's version 5; one trigger function for the three changes.
    sql: (s) => `
      CREATE TABLE ${s}.agent_counts (
        account_id text COLLATE "C" NOT NULL,
        status text COLLATE "C" NOT NULL,
        n integer NOT NULL,
        PRIMARY KEY (account_id, status)
      );
      INSERT INTO ${s}.agent_counts (account_id, status, n)
        SELECT account_id, status, count(*) FROM ${s}.agents GROUP BY account_id, status;

      CREATE FUNCTION ${s}.count_agents() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          UPDATE ${s}.agent_counts SET n = n - 1 WHERE account_id = OLD.account_id AND status = OLD.status;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO ${s}.agent_counts AS c (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1)
            ON CONFLICT (account_id, status) DO UPDATE SET n = c.n + 1;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER agents_counted AFTER INSERT OR DELETE ON ${s}.agents
        FOR EACH ROW EXECUTE FUNCTION ${s}.count_agents();
      CREATE TRIGGER agents_counted_status AFTER UPDATE OF status ON ${s}.agents
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION ${s}.count_agents();
    `,
  },
  {
    version: 6,
    name: "agent secrets, knowledge index",
    // Secrets are stored sealed (SecretVault) and go with their agent. The knowledge index holds one row per
    // knowledge entry with its tsvector, kept by a trigger in the transaction of every insert and change of
    // knowledge of an agent, and removed with it by the foreign key.
    sql: (s) => `
      CREATE TABLE ${s}.agent_secrets (
        agent_id text COLLATE "C" NOT NULL REFERENCES ${s}.agents (id) ON DELETE CASCADE,
        name text COLLATE "C" NOT NULL,
        sealed text NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, name)
      );

      CREATE TABLE ${s}.knowledge_entries (
        agent_id text COLLATE "C" NOT NULL REFERENCES ${s}.agents (id) ON DELETE CASCADE,
        position integer NOT NULL,
        text text NOT NULL,
        document tsvector NOT NULL GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED,
        PRIMARY KEY (agent_id, position)
      );
      CREATE INDEX knowledge_entries_search ON ${s}.knowledge_entries USING gin (document);

      CREATE FUNCTION ${s}.index_knowledge() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN
          DELETE FROM ${s}.knowledge_entries WHERE agent_id = OLD.id;
        END IF;
        INSERT INTO ${s}.knowledge_entries (agent_id, position, text)
          SELECT NEW.id, entry.n - 1, entry.value
          FROM jsonb_array_elements_text(NEW.knowledge) WITH ORDINALITY AS entry (value, n);
        RETURN NULL;
      END $$;
      CREATE TRIGGER agents_knowledge_indexed AFTER INSERT ON ${s}.agents
        FOR EACH ROW EXECUTE FUNCTION ${s}.index_knowledge();
      CREATE TRIGGER agents_knowledge_reindexed AFTER UPDATE OF knowledge ON ${s}.agents
        FOR EACH ROW WHEN (OLD.knowledge IS DISTINCT FROM NEW.knowledge) EXECUTE FUNCTION ${s}.index_knowledge();

      INSERT INTO ${s}.knowledge_entries (agent_id, position, text)
        SELECT agents.id, entry.n - 1, entry.value
        FROM ${s}.agents, jsonb_array_elements_text(agents.knowledge) WITH ORDINALITY AS entry (value, n);
    `,
  },
  {
    version: 7,
    name: "console sessions",
    // Sign-in links and sessions of the web console, each stored by the SHA-256 of its secret.
    sql: (s) => `
      CREATE TABLE ${s}.console_links (
        sha256 text PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );
      CREATE TABLE ${s}.console_sessions (
        sha256 text PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        idle_timeout_ms bigint NOT NULL,
        last_seen_at timestamptz NOT NULL,
        ended_at timestamptz
      );
    `,
  },
  {
    version: 8,
    name: "creates kept with their keys",
    // When a create under an Idempotency-Key made its resource (epoch milliseconds), kept with the resource's id in
    // the create's own transaction: with the retry's fields, which are the first request's, they make an agent as
    // it was created. A new API key's secret is kept too, sealed with a key only the caller can derive.
    sql: (s) => `
      ALTER TABLE ${s}.idempotency_keys ADD COLUMN created_at bigint;
      ALTER TABLE ${s}.idempotency_keys ADD COLUMN secret bytea;
    `,
  },
  {
    version: 9,
    name: "members",
    // As SQLite's version 9.
    sql: (s) => `
      CREATE TABLE ${s}.members (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        email text COLLATE "C",
        name text NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
        created_at timestamptz NOT NULL
      );
      CREATE UNIQUE INDEX members_by_email ON ${s}.members (account_id, email);
      CREATE INDEX members_by_account ON ${s}.members (account_id, id);
      CREATE INDEX members_by_any_email ON ${s}.members (email);
      ALTER TABLE ${s}.api_keys ADD COLUMN created_by text COLLATE "C";
      ALTER TABLE ${s}.console_links ADD COLUMN member_id text COLLATE "C";
      ALTER TABLE ${s}.console_sessions ADD COLUMN member_id text COLLATE "C";
    `,
    async data(client, s) {
      const accounts = await client.query<{ id: string; created_at: Date }>(
        `SELECT id, created_at FROM ${s}.accounts`,
      );
      for (const [account, id] of ownerIds(accounts.rows)) {
        await client.query(
          `INSERT INTO ${s}.members (id, account_id, email, name, role, created_at)
           VALUES ($1, $2, NULL, 'Owner', 'owner', $3)`,
          [id, account.id, account.created_at],
        );
        await client.query(`UPDATE ${s}.console_sessions SET member_id = $1 WHERE account_id = $2`, [
          id,
          account.id,
        ]);
      }
    },
  },
  {
    version: 10,
    name: "spend budgets",
    // An account's, an agent's or a key's budget. The spend itself is counted by the gateways, from usage.
    sql: (s) => `
      CREATE TABLE ${s}.budgets (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        agent_id text COLLATE "C" REFERENCES ${s}.agents (id) ON DELETE CASCADE,
        api_key_id text COLLATE "C" REFERENCES ${s}.api_keys (id) ON DELETE CASCADE,
        unit text NOT NULL CHECK (unit IN ('tokens', 'usd')),
        period text NOT NULL CHECK (period IN ('day', 'month')),
        budget_limit bigint NOT NULL CHECK (budget_limit > 0),
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CHECK (agent_id IS NULL OR api_key_id IS NULL)
      );
      CREATE INDEX budgets_by_account ON ${s}.budgets (account_id, created_at, id);
    `,
  },
  {
    version: 11,
    name: "audit log",
    // Who changed what: each change to agents, keys, members, secrets, budgets and accounts is recorded in its own
    // transaction. Not tied to the account's row: the record of an account's changes outlives what it names.
    sql: pgAuditTable,
  },
];

/** What `openPgDatabase` (or the migrations job) brings up to date: the registry schema. */
export function migrationTarget(
  schema: string,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): MigrationTarget {
  return { schema, service: "registry", lockClass: MIGRATION_LOCK_CLASS, migrations };
}
