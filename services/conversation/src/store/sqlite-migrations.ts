import { newId } from "@agentry/core";
import { SQLITE_AUDIT_TABLE, type SqliteMigration, type SqliteMigrationTarget } from "@agentry/sqlite";

export const MIGRATIONS: readonly SqliteMigration[] = [
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
  {
    version: 2,
    name: "conversation ids, history by conversation, user and agent, api key and finish reason",
    sql: `
      ALTER TABLE conversations ADD COLUMN id TEXT;
      ALTER TABLE turns ADD COLUMN conversation_id TEXT;
      ALTER TABLE turns ADD COLUMN finish_reason TEXT;
      ALTER TABLE calls ADD COLUMN api_key_id TEXT;
    `,
    data(db) {
      // Each conversation stored before ids existed gets one, dated by its first message.
      const unnamed = db
        .prepare<[], { rowid: number; created_at: string }>(
          "SELECT rowid, created_at FROM conversations WHERE id IS NULL",
        )
        .all();
      const name = db.prepare<[string, number]>("UPDATE conversations SET id = ? WHERE rowid = ?");
      for (const row of unnamed) name.run(newId("conversation", Date.parse(row.created_at)), row.rowid);
      db.exec(`
        UPDATE turns SET conversation_id = (
          SELECT c.id FROM conversations c
          WHERE c.account_id = turns.account_id AND c.agent_id = turns.agent_id
            AND c.user_id = turns.user_id AND c.room_id = turns.room_id
        );
        CREATE UNIQUE INDEX conversations_by_id ON conversations (id);
        -- An agent's conversations by latest activity.
        CREATE INDEX conversations_by_activity ON conversations (account_id, agent_id, updated_at, id);
        CREATE INDEX conversations_by_user ON conversations (account_id, user_id);
        CREATE INDEX turns_in_conversation ON turns (conversation_id, seq);
        CREATE INDEX turns_of_agent ON turns (account_id, agent_id, seq);
        CREATE INDEX turns_of_user ON turns (account_id, user_id, seq);
      `);
    },
  },
  {
    version: 3,
    name: "usage rollups",
    // The rows and levels are described in usage.ts; bins are JSON objects of bin index -> count, kept as JSONB.
    sql: `
      CREATE TABLE usage_rollups (
        account_id TEXT NOT NULL,
        level TEXT NOT NULL CHECK (level IN ('account', 'agent', 'detail')),
        bucket_seconds INTEGER NOT NULL,
        bucket_start TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        api_key_id TEXT NOT NULL,
        messages INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        latency_bins BLOB NOT NULL,
        first_token_bins BLOB NOT NULL,
        -- The agent before the time: an agent's usage (and its purge) is one range of the key.
        PRIMARY KEY (account_id, level, bucket_seconds, agent_id, bucket_start, user_id, model, api_key_id)
      ) STRICT;
      -- A range of every agent's rows at once (ungrouped, or grouped by agent).
      CREATE INDEX usage_by_time ON usage_rollups (account_id, level, bucket_seconds, bucket_start);
      -- A user's rows: filtered by user, and erased.
      CREATE INDEX usage_by_user ON usage_rollups (account_id, user_id, bucket_seconds, bucket_start);
    `,
  },
  {
    version: 4,
    name: "outbox of message events",
    // Rows wait here until the webhooks service has them, then go. data is the event's JSON text, as published.
    sql: `
      CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL CHECK (type IN ('message.completed', 'message.failed')),
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      -- An agent's waiting events, which its purge deletes.
      CREATE INDEX outbox_by_agent ON outbox (agent_id, account_id);
    `,
  },
  {
    version: 5,
    name: "tool calls of assistant turns",
    // The JSON text of the turn's tool calls with their outcomes; NULL when the model called none.
    sql: "ALTER TABLE turns ADD COLUMN tool_calls TEXT;",
  },
  {
    version: 6,
    name: "event logs of streamed and background messages",
    // A run is one streamed or background message; its events are numbered from 1. Both go when it expires.
    sql: `
      CREATE TABLE message_runs (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT,
        room_id TEXT,
        background INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
        error_code TEXT,
        error_message TEXT,
        result TEXT,
        created_at TEXT NOT NULL,
        deadline_at TEXT NOT NULL,
        ended_at TEXT,
        expires_at TEXT
      ) STRICT;
      -- The sweeps: expired runs, and pending ones past their deadline.
      CREATE INDEX message_runs_by_expiry ON message_runs (expires_at) WHERE expires_at IS NOT NULL;
      CREATE INDEX message_runs_pending ON message_runs (deadline_at) WHERE status = 'pending';
      -- An agent's runs, which its purge deletes, and a user's, which an erasure deletes.
      CREATE INDEX message_runs_by_agent ON message_runs (account_id, agent_id);
      CREATE INDEX message_runs_by_user ON message_runs (account_id, user_id);
      CREATE TABLE message_run_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 7,
    name: "idempotency keys of exchanges",
    // The exchange a message's Idempotency-Key (its SHA-256 hex) was stored with, kept for the key's life.
    sql: `
      CREATE TABLE message_keys (
        account_id TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        reply_id TEXT NOT NULL,
        fallback INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (account_id, key_hash)
      ) STRICT, WITHOUT ROWID;
      -- The sweep; an agent's keys, which its purge deletes; a user's, which an erasure deletes; a conversation's.
      CREATE INDEX message_keys_by_expiry ON message_keys (expires_at);
      CREATE INDEX message_keys_by_agent ON message_keys (account_id, agent_id);
      CREATE INDEX message_keys_by_user ON message_keys (account_id, user_id);
      CREATE INDEX message_keys_by_conversation ON message_keys (conversation_id);
    `,
  },
  {
    version: 8,
    name: "background replies, and runs kept past their events",
    // A background message's reply is read in that form by id for as long as it is stored, with whether a fallback
    // wrote it. A failed background message's record outlives its events (kept_until after expires_at).
    sql: `
      ALTER TABLE turns ADD COLUMN background INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE turns ADD COLUMN fallback INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE message_runs ADD COLUMN kept_until TEXT;
      UPDATE message_runs SET kept_until = expires_at;
      CREATE INDEX message_runs_by_keep ON message_runs (kept_until) WHERE kept_until IS NOT NULL;
    `,
  },
  {
    version: 9,
    name: "idempotency keys of runs, runs without a log",
    // The key (its SHA-256 hex) a run's message was sent with, and the SHA-256 hex of the message: a retry on
    // another process finds the run still being generated. A keyed JSON send has a run without events (logged 0).
    sql: `
      ALTER TABLE message_runs ADD COLUMN logged INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE message_runs ADD COLUMN key_hash TEXT;
      ALTER TABLE message_runs ADD COLUMN key_request TEXT;
      CREATE INDEX message_runs_by_key ON message_runs (account_id, key_hash, created_at)
        WHERE key_hash IS NOT NULL AND status = 'pending';
    `,
  },
  {
    version: 10,
    name: "leases of background runs",
    // A background message's run is held by the process generating it until its lease expires; another process
    // then takes it over (message-runs.ts), generating it again from `input` and the steps its log has.
    sql: `
      ALTER TABLE message_runs ADD COLUMN lease_holder TEXT;
      ALTER TABLE message_runs ADD COLUMN lease_expires_at TEXT;
      ALTER TABLE message_runs ADD COLUMN input TEXT;
      ALTER TABLE message_runs ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX message_runs_by_lease ON message_runs (lease_expires_at)
        WHERE status = 'pending' AND lease_expires_at IS NOT NULL;
    `,
  },
  {
    version: 11,
    name: "memories of users",
    // A user's memories of an agent, deduplicated by their normalised text (key); seq orders them and is the
    // cursor. The full-text index reads the table's own text (external content), kept in step by triggers.
    sql: `
      CREATE TABLE memories (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        text TEXT NOT NULL,
        key TEXT NOT NULL,
        source_message_id TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (account_id, agent_id, user_id, key)
      ) STRICT;
      CREATE INDEX memories_by_owner ON memories (account_id, agent_id, user_id, seq);
      CREATE INDEX memories_by_agent ON memories (account_id, agent_id, seq);
      CREATE INDEX memories_by_user ON memories (account_id, user_id, seq);
      CREATE VIRTUAL TABLE memories_fts USING fts5 (
        text, content = 'memories', content_rowid = 'seq', tokenize = 'porter unicode61'
      );
      CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
      END;
      CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
      END;
    `,
  },
  {
    version: 12,
    name: "runs listed by agent, and the kill switch's mark",
    // An agent's runs, newest first (ListRuns); the index also serves the purge, which the one it replaces did.
    // `cancelled`: a run the kill switch ended (CancelAgentRuns), listed as cancelled though it ended failed.
    sql: `
      ALTER TABLE message_runs ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX message_runs_by_agent_id ON message_runs (account_id, agent_id, id);
      DROP INDEX message_runs_by_agent;
    `,
  },
  {
    version: 13,
    name: "schedules and their fires",
    // A fire's row is unique per schedule and time: the claim that inserts it is the one process that runs it.
    sql: `
      CREATE TABLE schedules (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        cron TEXT NOT NULL,
        timezone TEXT NOT NULL,
        text TEXT NOT NULL,
        user_id TEXT,
        room_id TEXT,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        next_fire_at TEXT,
        skipped_fires INTEGER NOT NULL DEFAULT 0,
        last_scheduled_at TEXT,
        last_fired_at TEXT,
        last_message_id TEXT,
        last_error_code TEXT,
        last_error_message TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX schedules_by_agent ON schedules (account_id, agent_id, id);
      CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE enabled = 1 AND next_fire_at IS NOT NULL;
      CREATE TABLE schedule_fires (
        schedule_id TEXT NOT NULL,
        scheduled_at TEXT NOT NULL,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        fired_at TEXT NOT NULL,
        message_id TEXT,
        PRIMARY KEY (schedule_id, scheduled_at)
      ) STRICT;
      CREATE INDEX schedule_fires_by_time ON schedule_fires (scheduled_at);
      CREATE INDEX schedule_fires_by_agent ON schedule_fires (account_id, agent_id);
    `,
  },
  {
    version: 14,
    name: "runs paused for tool approvals",
    // A run waiting for a person's approval (message-runs.ts, "Tool approvals"): the calls to decide on and when
    // the wait ends (the scan fails it then), and the answers given, kept for a process that takes the run over.
    sql: `
      ALTER TABLE message_runs ADD COLUMN pending_tool_calls TEXT;
      ALTER TABLE message_runs ADD COLUMN approval_expires_at TEXT;
      ALTER TABLE message_runs ADD COLUMN decisions TEXT;
      CREATE INDEX message_runs_by_approval ON message_runs (approval_expires_at)
        WHERE status = 'pending' AND approval_expires_at IS NOT NULL;
      -- The outbox takes message.requires_action too: SQLite changes a CHECK only by rebuilding the table.
      CREATE TABLE outbox_next (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL CHECK (type IN ('message.completed', 'message.failed', 'message.requires_action')),
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      INSERT INTO outbox_next (seq, event_id, type, account_id, agent_id, data, created_at)
        SELECT seq, event_id, type, account_id, agent_id, data, created_at FROM outbox;
      DROP TABLE outbox;
      ALTER TABLE outbox_next RENAME TO outbox;
      CREATE INDEX outbox_by_agent ON outbox (agent_id, account_id);
    `,
  },
  {
    version: 15,
    name: "conversation queues",
    // A place in line per message being answered or waiting, per conversation (conversation-queue.ts): `seq` the
    // order of arrival, `admitted` once it runs, `interrupted` once a later message asked it to stop; its holder
    // renews `expires_at` while it waits or runs.
    sql: `
      CREATE TABLE conversation_queue (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        room_id TEXT NOT NULL,
        holder TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        admitted INTEGER NOT NULL DEFAULT 0,
        interrupted INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX conversation_queue_by_conversation
        ON conversation_queue (account_id, agent_id, user_id, room_id, seq);
    `,
  },
  {
    version: 16,
    name: "knowledge documents and citations",
    // An agent's documents and their chunks; seq orders documents and is the cursor. A chunk is a row of its
    // own (its seq the full-text rowid), so that vectors of chunks can be kept in a table keyed by it later.
    // `citations`: the chunks a reply's prompt carried (JSON), null for none.
    sql: `
      CREATE TABLE documents (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        title TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        text_length INTEGER NOT NULL,
        chunk_count INTEGER NOT NULL,
        source TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX documents_by_agent ON documents (account_id, agent_id, seq);
      CREATE TABLE document_chunks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        UNIQUE (document_id, position)
      ) STRICT;
      CREATE INDEX document_chunks_by_agent ON document_chunks (account_id, agent_id);
      CREATE VIRTUAL TABLE document_chunks_fts USING fts5 (
        text, content = 'document_chunks', content_rowid = 'seq', tokenize = 'porter unicode61'
      );
      CREATE TRIGGER document_chunks_fts_insert AFTER INSERT ON document_chunks BEGIN
        INSERT INTO document_chunks_fts (rowid, text) VALUES (new.seq, new.text);
      END;
      CREATE TRIGGER document_chunks_fts_delete AFTER DELETE ON document_chunks BEGIN
        INSERT INTO document_chunks_fts (document_chunks_fts, rowid, text) VALUES ('delete', old.seq, old.text);
      END;
      ALTER TABLE turns ADD COLUMN citations TEXT;
    `,
  },
  {
    version: 17,
    name: "vectors of memories",
    // One vector per memory (float32 blob, unit length) and the embedding model that made it; deleted with it.
    // The owner's columns repeat the memory's, so that a recall scans only the user's vectors of one model.
    sql: `
      CREATE TABLE memory_vectors (
        seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
      ) STRICT;
      CREATE INDEX memory_vectors_by_owner ON memory_vectors (account_id, agent_id, user_id, model);
    `,
  },
  {
    version: 18,
    name: "audit log",
    // Who changed schedules, documents, memories and histories, recorded in the change's transaction
    // (docs/api/audit.md).
    sql: SQLITE_AUDIT_TABLE,
  },
  {
    version: 19,
    name: "fires started after their claim",
    // A claimed fire's ids (its reply's is message_id) and until when its claimer has to start its message:
    // past start_by, another process starts it (schedules.ts). NULL once started, or when it sends none.
    sql: `
      ALTER TABLE schedule_fires ADD COLUMN user_message_id TEXT;
      ALTER TABLE schedule_fires ADD COLUMN start_by TEXT;
      CREATE INDEX schedule_fires_unstarted ON schedule_fires (start_by) WHERE start_by IS NOT NULL;
    `,
  },
  {
    version: 20,
    name: "vectors of document chunks",
    // One vector per chunk (float32 blob, unit length) and the embedding model that made it; deleted with it. The
    // owner's columns repeat the chunk's, so that a search reads only the agent's vectors of one model.
    sql: `
      CREATE TABLE document_chunk_vectors (
        seq INTEGER PRIMARY KEY REFERENCES document_chunks (seq) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 22,
    name: "a conversation's messages by the cursor",
    // A conversation's page (GET /v1/agents/{id}/messages?conversationId=...) reads this index from the cursor on,
    // whatever else the agent holds: turns_of_agent made its first page walk the agent's newest turns of every
    // conversation until enough were of this one.
    sql: `
      CREATE INDEX turns_of_conversation ON turns (account_id, agent_id, conversation_id, seq);
    `,
  },
  {
    version: 25,
    name: "the owner of a place in a conversation's line",
    // The one attempt at answering the message that owns its place (QueueEntry.owner): of two attempts at one
    // message (a schedule fire started by two processes), the one whose run was recorded; it alone leaves the
    // place. Null on places an earlier version joined, which leaves them by their holder.
    sql: `
      ALTER TABLE conversation_queue ADD COLUMN owner TEXT;
    `,
  },
  {
    version: 26,
    name: "each message's public JSON with its turn",
    // The message as history reads present it (docs/api/history.md, "Stored messages"), written with the turn, so
    // that a page reads one text per message instead of presenting its columns. Null on turns stored before: a
    // read presents those from their columns.
    sql: `
      ALTER TABLE turns ADD COLUMN message_json TEXT;
    `,
  },
  {
    version: 27,
    name: "usage by agent and model",
    // The agent_model level (usage.ts): the question priced per model read the detail level, one row per user,
    // agent, model and key a bucket. SQLite changes a CHECK only by rebuilding the table. The level is filled from
    // the detail rows recorded before, each group's bins added count by count (as erasure merges them), so that
    // an upgraded database answers as it did.
    sql: `
      CREATE TABLE usage_rollups_next (
        account_id TEXT NOT NULL,
        level TEXT NOT NULL CHECK (level IN ('account', 'agent', 'agent_model', 'detail')),
        bucket_seconds INTEGER NOT NULL,
        bucket_start TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        api_key_id TEXT NOT NULL,
        messages INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        latency_bins BLOB NOT NULL,
        first_token_bins BLOB NOT NULL,
        PRIMARY KEY (account_id, level, bucket_seconds, agent_id, bucket_start, user_id, model, api_key_id)
      ) STRICT;
      INSERT INTO usage_rollups_next SELECT account_id, level, bucket_seconds, bucket_start, agent_id, user_id,
        model, api_key_id, messages, errors, input_tokens, output_tokens, latency_bins, first_token_bins
        FROM usage_rollups;
      DROP TABLE usage_rollups;
      ALTER TABLE usage_rollups_next RENAME TO usage_rollups;
      CREATE INDEX usage_by_time ON usage_rollups (account_id, level, bucket_seconds, bucket_start);
      CREATE INDEX usage_by_user ON usage_rollups (account_id, user_id, bucket_seconds, bucket_start);
      INSERT INTO usage_rollups (account_id, level, bucket_seconds, agent_id, bucket_start, user_id, model,
          api_key_id, messages, errors, input_tokens, output_tokens, latency_bins, first_token_bins)
        SELECT account_id, 'agent_model', bucket_seconds, agent_id, bucket_start, '', model, '', sum(messages),
          sum(errors), sum(input_tokens), sum(output_tokens),
          ${mergedBins("latency_bins")}, ${mergedBins("first_token_bins")}
        FROM usage_rollups AS detail WHERE level = 'detail'
        GROUP BY account_id, bucket_seconds, agent_id, bucket_start, model;
    `,
  },
];

/**
 * The bins of a group of detail rows added up, bins left empty dropped: the rows of one account, bucket, agent
 * and model (`detail` is the outer query's row), found through the primary key.
 */
function mergedBins(column: string): string {
  return `(SELECT jsonb_group_object(key, n) FROM (
      SELECT bin.key, sum(bin.value) AS n FROM usage_rollups AS part, json_each(part.${column}) AS bin
      WHERE part.account_id = detail.account_id AND part.level = 'detail'
        AND part.bucket_seconds = detail.bucket_seconds AND part.agent_id = detail.agent_id
        AND part.bucket_start = detail.bucket_start AND part.model = detail.model
      GROUP BY bin.key
    ) WHERE n > 0)`;
}

export const MIGRATION_TARGET: SqliteMigrationTarget = { service: "conversation", migrations: MIGRATIONS };
