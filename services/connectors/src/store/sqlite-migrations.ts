import type { SqliteMigration, SqliteMigrationTarget } from "@agentry/sqlite";

export const MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: "leases, cursors, answered messages",
    sql: `
      CREATE TABLE leases (
        key TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE cursors (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      -- One row per platform message answered: what keeps a message from being answered twice.
      CREATE TABLE answered (
        message_key TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        answered_at TEXT NOT NULL
      ) STRICT;
    `,
  },
];

export const MIGRATION_TARGET: SqliteMigrationTarget = { service: "connectors", migrations: MIGRATIONS };
