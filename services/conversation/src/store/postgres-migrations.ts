import { newId } from "@agentry/core";
import { type MigrationTarget, type PgMigration, pgAuditTable } from "@agentry/pg";

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
  {
    version: 2,
    name: "conversation ids, history by conversation, user and agent, api key and finish reason",
    sql: (s) => `
      ALTER TABLE ${s}.conversations ADD COLUMN id text COLLATE "C";
      ALTER TABLE ${s}.turns ADD COLUMN conversation_id text COLLATE "C";
      ALTER TABLE ${s}.turns ADD COLUMN finish_reason text;
      ALTER TABLE ${s}.calls ADD COLUMN api_key_id text;
    `,
    async data(client, s) {
      // Each conversation stored before ids existed gets one, dated by its first message.
      const unnamed = await client.query<{ ctid: string; created_at: Date }>(
        `SELECT ctid::text AS ctid, created_at FROM ${s}.conversations WHERE id IS NULL`,
      );
      for (const row of unnamed.rows) {
        await client.query(`UPDATE ${s}.conversations SET id = $1 WHERE ctid = $2::tid`, [
          newId("conversation", row.created_at.getTime()),
          row.ctid,
        ]);
      }
      await client.query(`
        UPDATE ${s}.turns t SET conversation_id = c.id FROM ${s}.conversations c
        WHERE c.account_id = t.account_id AND c.agent_id = t.agent_id AND c.user_id = t.user_id
          AND c.room_id = t.room_id;
        ALTER TABLE ${s}.conversations ALTER COLUMN id SET NOT NULL;
        CREATE UNIQUE INDEX conversations_by_id ON ${s}.conversations (id);
        CREATE INDEX conversations_by_activity ON ${s}.conversations (account_id, agent_id, updated_at, id);
        CREATE INDEX conversations_by_user ON ${s}.conversations (account_id, user_id);
        CREATE INDEX turns_in_conversation ON ${s}.turns (conversation_id, seq);
        CREATE INDEX turns_of_agent ON ${s}.turns (account_id, agent_id, seq);
        CREATE INDEX turns_of_user ON ${s}.turns (account_id, user_id, seq);
      `);
    },
  },
  {
    version: 3,
    name: "usage rollups",
    // The rows and levels are described in usage.ts. A sketch is its zero count and an integer array of the other
    // bins, indexed by bin (bumped in place; a jsonb object of 250 bins made each row 7 kB, and each send rewrites
    // four such rows).
    sql: (s) => `
      CREATE TABLE ${s}.usage_rollups (
        account_id text COLLATE "C" NOT NULL,
        level text COLLATE "C" NOT NULL CHECK (level IN ('account', 'agent', 'detail')),
        bucket_seconds integer NOT NULL,
        bucket_start timestamptz NOT NULL,
        agent_id text COLLATE "C" NOT NULL,
        user_id text COLLATE "C" NOT NULL,
        model text COLLATE "C" NOT NULL,
        api_key_id text COLLATE "C" NOT NULL,
        messages bigint NOT NULL,
        errors bigint NOT NULL,
        input_tokens bigint NOT NULL,
        output_tokens bigint NOT NULL,
        latency_zeros bigint NOT NULL,
        latency_bins integer[] NOT NULL,
        first_token_zeros bigint NOT NULL,
        first_token_bins integer[] NOT NULL,
        -- The agent before the time: an agent's usage (and its purge) is one range of the key.
        PRIMARY KEY (account_id, level, bucket_seconds, agent_id, bucket_start, user_id, model, api_key_id)
      )
      -- A send rewrites its rows: room on the page lets the new version stay there (a HOT update, no index
      -- entries), and rows of a few kilobytes stay uncompressed rather than being compressed anew each time.
      WITH (fillfactor = 70, toast_tuple_target = 8160);
      -- A range of every agent's rows at once (ungrouped, or grouped by agent).
      CREATE INDEX usage_by_time ON ${s}.usage_rollups (account_id, level, bucket_seconds, bucket_start);
      -- A user's rows: filtered by user, and erased.
      CREATE INDEX usage_by_user ON ${s}.usage_rollups (account_id, user_id, bucket_seconds, bucket_start);
    `,
  },
  {
    version: 4,
    name: "outbox of message events",
    // Rows wait here until the webhooks service has them, then go. data is json, not jsonb: its text is kept as
    // written, members in the order of the contract.
    sql: (s) => `
      CREATE TABLE ${s}.outbox (
        seq bigserial PRIMARY KEY,
        event_id text COLLATE "C" NOT NULL UNIQUE,
        type text NOT NULL CHECK (type IN ('message.completed', 'message.failed')),
        account_id text NOT NULL,
        agent_id text NOT NULL,
        data json NOT NULL,
        created_at timestamptz NOT NULL
      );
      -- An agent's waiting events, which its purge deletes.
      CREATE INDEX outbox_by_agent ON ${s}.outbox (account_id, agent_id);
    `,
  },
  {
    version: 5,
    name: "tool calls of assistant turns",
    // The turn's tool calls with their outcomes, as written (json, not jsonb); NULL when the model called none.
    sql: (s) => `ALTER TABLE ${s}.turns ADD COLUMN tool_calls json;`,
  },
  {
    version: 6,
    name: "event logs of streamed and background messages",
    // A run is one streamed or background message; its events are numbered from 1. Both go when it expires.
    sql: (s) => `
      CREATE TABLE ${s}.message_runs (
        id text COLLATE "C" PRIMARY KEY,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        user_id text,
        room_id text,
        background boolean NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
        error_code text,
        error_message text,
        result text,
        created_at timestamptz NOT NULL,
        deadline_at timestamptz NOT NULL,
        ended_at timestamptz,
        expires_at timestamptz
      );
      -- The sweeps: expired runs, and pending ones past their deadline.
      CREATE INDEX message_runs_by_expiry ON ${s}.message_runs (expires_at) WHERE expires_at IS NOT NULL;
      CREATE INDEX message_runs_pending ON ${s}.message_runs (deadline_at) WHERE status = 'pending';
      -- An agent's runs, which its purge deletes, and a user's, which an erasure deletes.
      CREATE INDEX message_runs_by_agent ON ${s}.message_runs (account_id, agent_id);
      CREATE INDEX message_runs_by_user ON ${s}.message_runs (account_id, user_id);
      CREATE TABLE ${s}.message_run_events (
        run_id text COLLATE "C" NOT NULL REFERENCES ${s}.message_runs (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        type text NOT NULL,
        data text NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
    `,
  },
  {
    version: 7,
    name: "idempotency keys of exchanges",
    // The exchange a message's Idempotency-Key (its SHA-256 hex) was stored with, kept for the key's life.
    sql: (s) => `
      CREATE TABLE ${s}.message_keys (
        account_id text NOT NULL,
        key_hash text COLLATE "C" NOT NULL,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        conversation_id text NOT NULL,
        message_id text NOT NULL,
        reply_id text NOT NULL,
        fallback boolean NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, key_hash)
      );
      -- The sweep; an agent's keys, which its purge deletes; a user's, which an erasure deletes; a conversation's.
      CREATE INDEX message_keys_by_expiry ON ${s}.message_keys (expires_at);
      CREATE INDEX message_keys_by_agent ON ${s}.message_keys (account_id, agent_id);
      CREATE INDEX message_keys_by_user ON ${s}.message_keys (account_id, user_id);
      CREATE INDEX message_keys_by_conversation ON ${s}.message_keys (conversation_id);
    `,
  },
  {
    version: 8,
    name: "background replies, and runs kept past their events",
    // A background message's reply is read in that form by id for as long as it is stored, with whether a fallback
    // wrote it. A failed background message's record outlives its events (kept_until after expires_at).
    sql: (s) => `
      ALTER TABLE ${s}.turns ADD COLUMN background boolean NOT NULL DEFAULT false;
      ALTER TABLE ${s}.turns ADD COLUMN fallback boolean NOT NULL DEFAULT false;
      ALTER TABLE ${s}.message_runs ADD COLUMN kept_until timestamptz;
      UPDATE ${s}.message_runs SET kept_until = expires_at;
      CREATE INDEX message_runs_by_keep ON ${s}.message_runs (kept_until) WHERE kept_until IS NOT NULL;
    `,
  },
  {
    version: 9,
    name: "idempotency keys of runs, runs without a log",
    // The key (its SHA-256 hex) a run's message was sent with, and the SHA-256 hex of the message: a retry on
    // another process finds the run still being generated. A keyed JSON send has a run without events (logged false).
    sql: (s) => `
      ALTER TABLE ${s}.message_runs ADD COLUMN logged boolean NOT NULL DEFAULT true;
      ALTER TABLE ${s}.message_runs ADD COLUMN key_hash text COLLATE "C";
      ALTER TABLE ${s}.message_runs ADD COLUMN key_request text;
      CREATE INDEX message_runs_by_key ON ${s}.message_runs (account_id, key_hash, created_at)
        WHERE key_hash IS NOT NULL AND status = 'pending';
    `,
  },
  {
    version: 10,
    name: "leases of background runs",
    // A background message's run is held by the process generating it until its lease expires; another process
    // then takes it over (message-runs.ts), generating it again from `input` and the steps its log has.
    sql: (s) => `
      ALTER TABLE ${s}.message_runs ADD COLUMN lease_holder text;
      ALTER TABLE ${s}.message_runs ADD COLUMN lease_expires_at timestamptz;
      ALTER TABLE ${s}.message_runs ADD COLUMN input text;
      ALTER TABLE ${s}.message_runs ADD COLUMN takeovers integer NOT NULL DEFAULT 0;
      CREATE INDEX message_runs_by_lease ON ${s}.message_runs (lease_expires_at)
        WHERE status = 'pending' AND lease_expires_at IS NOT NULL;
    `,
  },
  {
    version: 11,
    name: "memories of users",
    // A user's memories of an agent, deduplicated by their normalised text (key); seq orders them and is the
    // cursor. The full-text vector is a generated column under a GIN index.
    sql: (s) => `
      CREATE TABLE ${s}.memories (
        seq bigserial PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        text text NOT NULL,
        key text NOT NULL,
        source_message_id text,
        created_at timestamptz NOT NULL,
        search tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
        UNIQUE (account_id, agent_id, user_id, key)
      );
      CREATE INDEX memories_by_owner ON ${s}.memories (account_id, agent_id, user_id, seq);
      CREATE INDEX memories_by_agent ON ${s}.memories (account_id, agent_id, seq);
      CREATE INDEX memories_by_user ON ${s}.memories (account_id, user_id, seq);
      CREATE INDEX memories_search ON ${s}.memories USING GIN (search);
    `,
  },
  {
    version: 12,
    name: "runs listed by agent, and the kill switch's mark",
    // An agent's runs, newest first (ListRuns); the index also serves the purge, which the one it replaces did.
    // `cancelled`: a run the kill switch ended (CancelAgentRuns), listed as cancelled though it ended failed.
    sql: (s) => `
      ALTER TABLE ${s}.message_runs ADD COLUMN cancelled boolean NOT NULL DEFAULT false;
      CREATE INDEX message_runs_by_agent_id ON ${s}.message_runs (account_id, agent_id, id);
      DROP INDEX ${s}.message_runs_by_agent;
    `,
  },
  {
    version: 13,
    name: "schedules and their fires",
    // A fire's row is unique per schedule and time: the claim that inserts it is the one process that runs it.
    sql: (s) => `
      CREATE TABLE ${s}.schedules (
        id text COLLATE "C" PRIMARY KEY,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        cron text NOT NULL,
        timezone text NOT NULL,
        text text NOT NULL,
        user_id text,
        room_id text,
        enabled boolean NOT NULL,
        next_fire_at timestamptz,
        skipped_fires bigint NOT NULL DEFAULT 0,
        last_scheduled_at timestamptz,
        last_fired_at timestamptz,
        last_message_id text,
        last_error_code text,
        last_error_message text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE INDEX schedules_by_agent ON ${s}.schedules (account_id, agent_id, id);
      CREATE INDEX schedules_due ON ${s}.schedules (next_fire_at) WHERE enabled AND next_fire_at IS NOT NULL;
      CREATE TABLE ${s}.schedule_fires (
        schedule_id text NOT NULL,
        scheduled_at timestamptz NOT NULL,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        fired_at timestamptz NOT NULL,
        message_id text,
        PRIMARY KEY (schedule_id, scheduled_at)
      );
      CREATE INDEX schedule_fires_by_time ON ${s}.schedule_fires (scheduled_at);
      CREATE INDEX schedule_fires_by_agent ON ${s}.schedule_fires (account_id, agent_id);
    `,
  },
  {
    version: 14,
    name: "runs paused for tool approvals",
    // A run waiting for a person's approval (message-runs.ts, "Tool approvals"): the calls to decide on and when
    // the wait ends (the scan fails it then), and the answers given, kept for a process that takes the run over.
    sql: (s) => `
      ALTER TABLE ${s}.message_runs ADD COLUMN pending_tool_calls text;
      ALTER TABLE ${s}.message_runs ADD COLUMN approval_expires_at timestamptz;
      ALTER TABLE ${s}.message_runs ADD COLUMN decisions text;
      CREATE INDEX message_runs_by_approval ON ${s}.message_runs (approval_expires_at)
        WHERE status = 'pending' AND approval_expires_at IS NOT NULL;
      ALTER TABLE ${s}.outbox DROP CONSTRAINT outbox_type_check,
        ADD CONSTRAINT outbox_type_check
          CHECK (type IN ('message.completed', 'message.failed', 'message.requires_action'));
    `,
  },
  {
    version: 15,
    name: "conversation queues",
    // A place in line per message being answered or waiting, per conversation (conversation-queue.ts): `seq` the
    // order of arrival, `admitted` once it runs, `interrupted` once a later message asked it to stop; its holder
    // renews `expires_at` while it waits or runs.
    sql: (s) => `
      CREATE TABLE ${s}.conversation_queue (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        room_id text NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL,
        admitted boolean NOT NULL DEFAULT false,
        interrupted boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX conversation_queue_by_conversation
        ON ${s}.conversation_queue (account_id, agent_id, user_id, room_id, seq);
    `,
  },
  {
    version: 16,
    name: "knowledge documents and citations",
    // An agent's documents and their chunks; seq orders documents and is the cursor. A chunk is a row of its
    // own, so that a vector column or a table keyed by its seq can be added later. `citations`: the chunks a
    // reply's prompt carried, null for none.
    sql: (s) => `
      CREATE TABLE ${s}.documents (
        seq bigserial PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        title text NOT NULL,
        content_type text NOT NULL,
        size_bytes bigint NOT NULL,
        text_length integer NOT NULL,
        chunk_count integer NOT NULL,
        source text NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX documents_by_agent ON ${s}.documents (account_id, agent_id, seq);
      CREATE TABLE ${s}.document_chunks (
        seq bigserial PRIMARY KEY,
        document_id text COLLATE "C" NOT NULL REFERENCES ${s}.documents (id) ON DELETE CASCADE,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        position integer NOT NULL,
        text text NOT NULL,
        search tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
        UNIQUE (document_id, position)
      );
      CREATE INDEX document_chunks_by_agent ON ${s}.document_chunks (account_id, agent_id);
      CREATE INDEX document_chunks_search ON ${s}.document_chunks USING GIN (search);
      ALTER TABLE ${s}.turns ADD COLUMN citations json;
    `,
  },
  {
    version: 17,
    name: "vectors of memories",
    // One vector per memory (unit length) and the embedding model that made it; deleted with it. Kept as real[]
    // so that the table does not need pgvector: the store casts to its type to rank when the extension is there.
    // The migration installs the extension where the database offers it and its role may; elsewhere recall
    // stays by full text (the service logs it at start).
    sql: (s) => `
      DO $$
      BEGIN
        CREATE EXTENSION IF NOT EXISTS vector;
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pgvector is not available: memories are recalled by full text alone';
      END
      $$;
      CREATE TABLE ${s}.memory_vectors (
        seq bigint PRIMARY KEY REFERENCES ${s}.memories (seq) ON DELETE CASCADE,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        user_id text NOT NULL,
        model text NOT NULL,
        vector real[] NOT NULL
      );
      CREATE INDEX memory_vectors_by_owner ON ${s}.memory_vectors (account_id, agent_id, user_id, model);
    `,
  },
  {
    version: 18,
    name: "audit log",
    // Who changed schedules, documents, memories and histories, recorded in the change's transaction
    // (docs/api/audit.md).
    sql: pgAuditTable,
  },
  {
    version: 19,
    name: "fires started after their claim",
    // A claimed fire's ids (its reply's is message_id) and until when its claimer has to start its message:
    // past start_by, another process starts it (schedules.ts). NULL once started, or when it sends none.
    sql: (s) => `
      ALTER TABLE ${s}.schedule_fires ADD COLUMN user_message_id text;
      ALTER TABLE ${s}.schedule_fires ADD COLUMN start_by timestamptz;
      CREATE INDEX schedule_fires_unstarted ON ${s}.schedule_fires (start_by) WHERE start_by IS NOT NULL;
    `,
  },
  {
    version: 20,
    name: "vectors of document chunks",
    // One vector per chunk (unit length) and the embedding model that made it; deleted with it. real[], as the
    // memories' are, ranked through pgvector where the database has it.
    sql: (s) => `
      CREATE TABLE ${s}.document_chunk_vectors (
        seq bigint PRIMARY KEY REFERENCES ${s}.document_chunks (seq) ON DELETE CASCADE,
        account_id text NOT NULL,
        agent_id text NOT NULL,
        model text NOT NULL,
        vector real[] NOT NULL
      );
      CREATE INDEX document_chunk_vectors_by_owner ON ${s}.document_chunk_vectors (account_id, agent_id, model);
    `,
  },
  {
    version: 22,
    name: "a conversation's messages by the cursor",
    // A conversation's page (GET /v1/agents/{id}/messages?conversationId=...) reads this index from the cursor on,
    // whatever else the agent holds (see the SQLite migration of the same version).
    sql: (s) => `
      CREATE INDEX turns_of_conversation ON ${s}.turns (account_id, agent_id, conversation_id, seq);
    `,
  },
  {
    version: 25,
    name: "the owner of a place in a conversation's line",
    // The attempt at answering the message that owns its place (see the SQLite migration of the same version).
    sql: (s) => `
      ALTER TABLE ${s}.conversation_queue ADD COLUMN owner text;
    `,
  },
  {
    version: 26,
    name: "each message's public JSON with its turn",
    // The message as history reads present it (see the SQLite migration of the same version). text, not json:
    // it is written and read as the very text it is, never queried into.
    sql: (s) => `
      ALTER TABLE ${s}.turns ADD COLUMN message_json text;
    `,
  },
  {
    version: 27,
    name: "usage by agent and model",
    // The agent_model level (see the SQLite migration of the same version), filled from the detail rows recorded
    // before: each group's bin arrays added element by element over their joint range, as erasure merges them.
    sql: (s) => `
      ALTER TABLE ${s}.usage_rollups DROP CONSTRAINT usage_rollups_level_check;
      ALTER TABLE ${s}.usage_rollups ADD CONSTRAINT usage_rollups_level_check
        CHECK (level IN ('account', 'agent', 'agent_model', 'detail'));
      WITH detail AS (
        SELECT * FROM ${s}.usage_rollups WHERE level = 'detail'
      ),
      ${mergedBins("latency_bins")},
      ${mergedBins("first_token_bins")}
      INSERT INTO ${s}.usage_rollups (account_id, level, bucket_seconds, agent_id, bucket_start, user_id, model,
        api_key_id, messages, errors, input_tokens, output_tokens, latency_zeros, latency_bins, first_token_zeros,
        first_token_bins)
      SELECT f.account_id, 'agent_model', f.bucket_seconds, f.agent_id, f.bucket_start, '', f.model, '',
        f.messages, f.errors, f.input_tokens, f.output_tokens, f.latency_zeros,
        coalesce(l.bins, '{}'::integer[]), f.first_token_zeros, coalesce(t.bins, '{}'::integer[])
      FROM (
        SELECT account_id, bucket_seconds, agent_id, bucket_start, model, sum(messages) AS messages,
          sum(errors) AS errors, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
          sum(latency_zeros) AS latency_zeros, sum(first_token_zeros) AS first_token_zeros
        FROM detail GROUP BY ${GROUP}
      ) AS f
      LEFT JOIN latency_bins_merged AS l USING (${GROUP})
      LEFT JOIN first_token_bins_merged AS t USING (${GROUP});
    `,
  },
];

/** The key of a row of the agent_model level, which groups the detail rows it adds up. */
const GROUP = "account_id, bucket_seconds, agent_id, bucket_start, model";

/**
 * CTEs that add up the bins of `detail`'s rows by GROUP, element by element (NULL elements count none), into
 * `<column>_merged`: one array a group from its least bin to its greatest, empty elements 0. The elements between
 * two rows' arrays are added as zeros, so that every group's elements are contiguous; aggregates only, no join.
 */
function mergedBins(column: string): string {
  return `${column}_bounds AS (
        SELECT ${GROUP}, min(array_lower(${column}, 1)) AS low, max(array_upper(${column}, 1)) AS high
        FROM detail WHERE cardinality(${column}) > 0 GROUP BY ${GROUP}
      ),
      ${column}_merged AS (
        SELECT ${GROUP}, format('[%s:%s]=%s', min(i), max(i), array_agg(n ORDER BY i))::integer[] AS bins
        FROM (
          SELECT ${GROUP}, i, sum(n) AS n FROM (
            SELECT ${GROUP}, i, coalesce(${column}[i], 0) AS n FROM detail, generate_subscripts(${column}, 1) AS i
            UNION ALL
            SELECT ${GROUP}, i, 0 FROM ${column}_bounds, generate_series(low, high) AS i
          ) AS elements
          GROUP BY ${GROUP}, i
        ) AS summed
        GROUP BY ${GROUP}
      )`;
}

/** What `openPgDatabase` (or the migrations job) brings up to date: the conversation schema. */
export function migrationTarget(
  schema: string,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): MigrationTarget {
  return { schema, service: "conversation", lockClass: MIGRATION_LOCK_CLASS, migrations };
}
