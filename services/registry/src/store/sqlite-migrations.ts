import { SQLITE_AUDIT_TABLE, type SqliteMigration, type SqliteMigrationTarget } from "@agentry/sqlite";
import { ownerIds } from "./members.js";
import { nameOutboxEvents } from "./outbox-ids.js";

export const MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: "accounts, api keys, agents, outbox",
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        tier TEXT NOT NULL CHECK (tier IN ('standard', 'pro', 'enterprise')),
        limit_overrides TEXT NOT NULL CHECK (json_valid(limit_overrides)),
        created_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        sha256 TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        scopes TEXT NOT NULL CHECK (json_valid(scopes)),
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        expires_at TEXT,
        revoked_at TEXT
      ) STRICT;
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at, id);

      CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        bio TEXT NOT NULL CHECK (json_valid(bio)),
        personality TEXT NOT NULL CHECK (json_valid(personality)),
        knowledge TEXT NOT NULL CHECK (json_valid(knowledge)),
        goals TEXT NOT NULL CHECK (json_valid(goals)),
        clients TEXT NOT NULL CHECK (json_valid(clients)),
        settings TEXT NOT NULL CHECK (json_valid(settings)),
        model_provider TEXT,
        model TEXT,
        plugins TEXT NOT NULL CHECK (json_valid(plugins)),
        status TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'error')),
        status_reason TEXT CHECK (status_reason IS NULL OR json_valid(status_reason)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      -- One index per sort of a list, each ending in id because ties are broken by id.
      CREATE INDEX agents_by_created ON agents (account_id, created_at, id);
      CREATE INDEX agents_by_name ON agents (account_id, name, id);
      CREATE INDEX agents_by_status ON agents (account_id, status, id);
      CREATE INDEX agents_by_status_created ON agents (account_id, status, created_at, id);

      CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        type TEXT NOT NULL,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        payload TEXT NOT NULL CHECK (json_valid(payload)),
        created_at TEXT NOT NULL,
        published_at TEXT
      ) STRICT;
      CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL;
    `,
  },
  {
    version: 2,
    name: "full-access keys",
    // Until now a key made without scopes was stored with the five scopes that existed, and so would never hold
    // the ones added since. Every key holding exactly those five is taken to be such a key. The list is written
    // out: it is what version 1 knew, whatever SCOPES holds today.
    sql: `
      UPDATE api_keys SET scopes = '["*"]'
      WHERE (SELECT count(DISTINCT value) FROM json_each(api_keys.scopes)) = 5
        AND NOT EXISTS (
          SELECT 1 FROM json_each(api_keys.scopes)
          WHERE value NOT IN ('agents:read', 'agents:write', 'agents:delete', 'messages:send', 'keys:manage')
        );
    `,
  },
  {
    version: 3,
    name: "outbox: event ids, a place of its own for webhooks, no secrets",
    // Events relayed before webhooks existed had no endpoint to go to, so the webhooks channel starts where the
    // other one is. Unrelayed events get their ids now; what an older version writes afterwards (a rolling
    // upgrade) gets one when first read. Payloads lose the copies of agents' secrets they held.
    sql: `
      ALTER TABLE outbox ADD COLUMN event_id TEXT;
      ALTER TABLE outbox ADD COLUMN webhooks_published_at TEXT;
      UPDATE outbox SET webhooks_published_at = published_at WHERE published_at IS NOT NULL;
      UPDATE outbox SET payload = json_remove(payload, '$.agent.settings.secrets')
      WHERE json_type(payload, '$.agent.settings.secrets') IS NOT NULL;
      CREATE INDEX outbox_unpublished_webhooks ON outbox (seq) WHERE webhooks_published_at IS NULL;
    `,
    data(db) {
      const unnamed = db
        .prepare<[], { seq: number; created_at: string }>(
          "SELECT seq, created_at FROM outbox WHERE event_id IS NULL AND published_at IS NULL",
        )
        .all();
      const name = db.prepare<[string, number]>(
        "UPDATE outbox SET event_id = ? WHERE seq = ? AND event_id IS NULL",
      );
      for (const [seq, id] of nameOutboxEvents(unnamed)) name.run(id, seq);
    },
  },
  {
    version: 4,
    name: "idempotency keys",
    // One record per account and key (its SHA-256): the claiming request's fingerprint, its lease while it runs,
    // then its response, sealed by the gateway. Times are epoch milliseconds.
    sql: `
      CREATE TABLE idempotency_keys (
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        key_hash TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        lease_until INTEGER,
        expires_at INTEGER NOT NULL,
        status INTEGER,
        sealed BLOB,
        resource_id TEXT,
        PRIMARY KEY (account_id, key_hash)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
    `,
  },
  {
    version: 5,
    name: "agent counts",
    // Each account's agents counted by status, kept exact by triggers in the transaction of every insert, delete and
    // change of status, so the quota check and a list's total read a row instead of counting the agents.
    sql: `
      CREATE TABLE agent_counts (
        account_id TEXT NOT NULL,
        status TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (account_id, status)
      ) STRICT, WITHOUT ROWID;
      INSERT INTO agent_counts (account_id, status, n)
        SELECT account_id, status, count(*) FROM agents GROUP BY account_id, status;

      CREATE TRIGGER agents_counted_insert AFTER INSERT ON agents BEGIN
        INSERT INTO agent_counts (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1)
          ON CONFLICT (account_id, status) DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER agents_counted_delete AFTER DELETE ON agents BEGIN
        UPDATE agent_counts SET n = n - 1 WHERE account_id = OLD.account_id AND status = OLD.status;
      END;
      CREATE TRIGGER agents_counted_status AFTER UPDATE OF status ON agents
        WHEN OLD.status IS NOT NEW.status BEGIN
        UPDATE agent_counts SET n = n - 1 WHERE account_id = OLD.account_id AND status = OLD.status;
        INSERT INTO agent_counts (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1)
          ON CONFLICT (account_id, status) DO UPDATE SET n = n + 1;
      END;
    `,
  },
  {
    version: 6,
    name: "agent secrets, knowledge index",
    // Secrets are stored sealed (SecretVault) and go with their agent. The knowledge index is an FTS5 table over
    // one row per knowledge entry, kept by triggers in the transaction of every insert, change of knowledge and
    // delete of an agent; `agent_id` is indexed too, so a search reads only that agent's entries.
    sql: `
      CREATE TABLE agent_secrets (
        agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        sealed TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (agent_id, name)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE knowledge_entries (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        text TEXT NOT NULL
      ) STRICT;
      CREATE INDEX knowledge_entries_by_agent ON knowledge_entries (agent_id, position);
      CREATE VIRTUAL TABLE knowledge_index USING fts5 (
        text, agent_id,
        content = 'knowledge_entries', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER knowledge_entries_indexed AFTER INSERT ON knowledge_entries BEGIN
        INSERT INTO knowledge_index (rowid, text, agent_id) VALUES (NEW.id, NEW.text, NEW.agent_id);
      END;
      CREATE TRIGGER knowledge_entries_unindexed AFTER DELETE ON knowledge_entries BEGIN
        INSERT INTO knowledge_index (knowledge_index, rowid, text, agent_id)
          VALUES ('delete', OLD.id, OLD.text, OLD.agent_id);
      END;

      CREATE TRIGGER agents_knowledge_insert AFTER INSERT ON agents BEGIN
        INSERT INTO knowledge_entries (agent_id, position, text)
          SELECT NEW.id, key, value FROM json_each(NEW.knowledge);
      END;
      CREATE TRIGGER agents_knowledge_update AFTER UPDATE OF knowledge ON agents
        WHEN OLD.knowledge IS NOT NEW.knowledge BEGIN
        DELETE FROM knowledge_entries WHERE agent_id = OLD.id;
        INSERT INTO knowledge_entries (agent_id, position, text)
          SELECT NEW.id, key, value FROM json_each(NEW.knowledge);
      END;
      CREATE TRIGGER agents_knowledge_delete AFTER DELETE ON agents BEGIN
        DELETE FROM knowledge_entries WHERE agent_id = OLD.id;
      END;

      INSERT INTO knowledge_entries (agent_id, position, text)
        SELECT agents.id, entry.key, entry.value FROM agents, json_each(agents.knowledge) AS entry;
    `,
  },
  {
    version: 7,
    name: "console sessions",
    // Sign-in links and sessions of the web console, each stored by the SHA-256 of its secret.
    sql: `
      CREATE TABLE console_links (
        sha256 TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE console_sessions (
        sha256 TEXT PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        idle_timeout_ms INTEGER NOT NULL,
        last_seen_at TEXT NOT NULL,
        ended_at TEXT
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 8,
    name: "creates kept with their keys",
    // When a create under an Idempotency-Key made its resource (epoch milliseconds), kept with the resource's id in
    // the create's own transaction: with the retry's fields, which are the first request's, they make an agent as
    // it was created. A new API key's secret is kept too, sealed with a key only the caller can derive.
    sql: `
      ALTER TABLE idempotency_keys ADD COLUMN created_at INTEGER;
      ALTER TABLE idempotency_keys ADD COLUMN secret BLOB;
    `,
  },
  {
    version: 9,
    name: "members",
    // The people of an account, each with a role. Every account gets its first member, an owner without an email
    // (set one with PATCH /v1/members/{id}); the keys and sessions that exist were made for it, and sessions
    // carry their member from now on. A key's creator is kept as an id: a removed member's keys stay as they are.
    sql: `
      CREATE TABLE members (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        email TEXT,
        name TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX members_by_email ON members (account_id, email);
      CREATE INDEX members_by_account ON members (account_id, id);
      CREATE INDEX members_by_any_email ON members (email);
      ALTER TABLE api_keys ADD COLUMN created_by TEXT;
      ALTER TABLE console_links ADD COLUMN member_id TEXT;
      ALTER TABLE console_sessions ADD COLUMN member_id TEXT;
    `,
    data(db) {
      const accounts = db
        .prepare<[], { id: string; created_at: string }>("SELECT id, created_at FROM accounts")
        .all();
      const insert = db.prepare<[string, string, string]>(
        "INSERT INTO members (id, account_id, email, name, role, created_at) VALUES (?, ?, NULL, 'Owner', 'owner', ?)",
      );
      const sessions = db.prepare<[string, string]>(
        "UPDATE console_sessions SET member_id = ? WHERE account_id = ?",
      );
      for (const [account, id] of ownerIds(accounts)) {
        insert.run(id, account.id, account.created_at);
        sessions.run(id, account.id);
      }
    },
  },
  {
    version: 10,
    name: "spend budgets",
    // An account's, an agent's or a key's budget. The spend itself is counted by the gateways, from usage.
    sql: `
      CREATE TABLE budgets (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        agent_id TEXT REFERENCES agents (id) ON DELETE CASCADE,
        api_key_id TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
        unit TEXT NOT NULL CHECK (unit IN ('tokens', 'usd')),
        period TEXT NOT NULL CHECK (period IN ('day', 'month')),
        budget_limit INTEGER NOT NULL CHECK (budget_limit > 0),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (agent_id IS NULL OR api_key_id IS NULL)
      ) STRICT;
      CREATE INDEX budgets_by_account ON budgets (account_id, created_at, id);
    `,
  },
  {
    version: 11,
    name: "audit log",
    // Who changed what: each change to agents, keys, members, secrets, budgets and accounts is recorded in its own
    // transaction. Not tied to the account's row: the record of an account's changes outlives what it names.
    sql: SQLITE_AUDIT_TABLE,
  },
];

export const MIGRATION_TARGET: SqliteMigrationTarget = { service: "registry", migrations: MIGRATIONS };
