import type { SqliteMigration, SqliteMigrationTarget } from "@agentry/sqlite";

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
];

export const MIGRATION_TARGET: SqliteMigrationTarget = { service: "registry", migrations: MIGRATIONS };
