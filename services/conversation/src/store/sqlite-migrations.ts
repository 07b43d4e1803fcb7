import type Database from "better-sqlite3";

export interface Migration {
  /** Applied in increasing order; never renumber or edit a released migration, add a new one. */
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "conversations, turns, calls, purged agents",
    sql: `
      CREATE TABLE conversations (
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        room_id TEXT NOT NULL,
        turn_count INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (agent_id, user_id, room_id, account_id)
      ) STRICT;

      -- seq orders the turns (an exchange's two turns are adjacent) and is the pagination cursor.
      CREATE TABLE turns (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        room_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        text TEXT NOT NULL,
        model TEXT,
        provider TEXT,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX turns_by_conversation ON turns (agent_id, user_id, room_id, seq);

      CREATE TABLE calls (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        request_id TEXT,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        room_id TEXT NOT NULL,
        provider TEXT,
        model TEXT,
        stream INTEGER NOT NULL CHECK (stream IN (0, 1)),
        outcome TEXT NOT NULL CHECK (outcome IN ('completed', 'failed', 'cancelled')),
        error_code TEXT,
        error_message TEXT,
        latency_ms INTEGER NOT NULL,
        first_token_ms INTEGER,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX calls_by_agent ON calls (agent_id, seq);

      -- Agents whose data was purged: nothing more is stored for them (a reply in flight during the purge).
      CREATE TABLE purged_agents (
        agent_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        purged_at TEXT NOT NULL,
        PRIMARY KEY (agent_id, account_id)
      ) STRICT;
    `,
  },
];

/**
 * Brings the schema up to date. The whole run holds the write lock (BEGIN IMMEDIATE), so when several processes
 * open the same file at once, one applies the migrations and the others wait, then find nothing left to do.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): void {
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    ) STRICT`);
    const applied = new Set(db.prepare<[], number>("SELECT version FROM schema_migrations").pluck().all());
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...applied].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new Error(
        `the conversation database has schema version ${Math.max(...unknown)}, newer than this build knows; ` +
          "upgrade the service before opening it",
      );
    }
    const record = db.prepare<[number, string, string]>(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
    );
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
    }
  }).immediate();
}
