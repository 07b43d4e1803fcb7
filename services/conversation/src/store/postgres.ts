/**
 * The conversation store on Postgres, for deployments that run several instances on one database. It passes
 * the same contract suite as the SQLite store and keeps its semantics exactly.
 *
 * Schema choices:
 * - Every table lives in one schema (`conversation` by default), so the conversation service and the registry
 *   can share a database; `<schema>.schema_migrations` records the applied migrations
 *   (postgres-migrations.ts).
 * - Times are `timestamptz`, written from and read back as ISO 8601 strings with milliseconds in UTC, the
 *   form the SQLite store keeps as text. `stream` is a boolean. Postgres cannot store U+0000 in text; such a
 *   value is refused with INVALID_REQUEST instead of failing as an internal error.
 * - Turns are ordered by `seq bigserial`, which is also the pagination cursor.
 *
 * Concurrency, where SQLite's single writer gave it for free:
 * - An exchange first upserts its conversation's row, which locks it until commit, and only then inserts its
 *   two turns. Exchanges of one conversation are therefore stored one after the other: a message and its
 *   reply get adjacent sequence numbers, and sequence order is commit order, so a cursor never skips a turn
 *   committed late.
 * - Saving takes a shared advisory lock on the (account, agent) pair and purging takes it exclusively. A save
 *   either commits before the purge starts (and is purged) or starts after it (and sees the tombstone), so no
 *   turn or call of a purged agent survives, however the two interleave across instances.
 */
import type { Availability } from "@agentry/logging";
import { assertSchemaName, openPgDatabase, type PgDatabase, run } from "@agentry/pg";
import type pg from "pg";
import { CHARACTERS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, oldestFirst } from "../history.js";
import { migrationTarget } from "./postgres-migrations.js";
import { type CallRow, cursorPosition, keyParams, type TurnRow, toCall, toTurn, turnPage } from "./rows.js";
import type {
  CallRecord,
  ConversationKey,
  ConversationStore,
  HistoryLimits,
  HistoryTurn,
  NewExchange,
  PurgeResult,
  TurnPage,
} from "./types.js";

export interface PostgresConversationStoreOptions {
  /** `postgres://user:password@host:port/database`, as in DATABASE_URL. */
  connectionString: string;
  /** The schema holding the service's tables, created when missing; `conversation` by default. */
  schema?: string;
  /** Connections in the pool; 10 by default. */
  poolSize?: number;
  /** The longest a statement may run, waiting for locks included, before it fails; 10 s by default. */
  statementTimeoutMs?: number;
  /** Told whether the database answers (an outage log); each outage is reported as it starts and ends. */
  availability?: Availability;
  /** Whether opening waits while the database cannot be reached (default true); the migrations job does not. */
  waitForDatabase?: boolean;
}

export const DEFAULT_CONVERSATION_SCHEMA = "conversation";

type PgTurnRow = TurnRow<string, Date>;
type PgCallRow = CallRow<boolean, Date>;

const KEY_WHERE = "account_id = $1 AND agent_id = $2 AND user_id = $3 AND room_id = $4";

function callValues(call: CallRecord): unknown[] {
  return [
    call.id,
    call.requestId,
    call.accountId,
    call.agentId,
    call.userId,
    call.roomId,
    call.provider,
    call.model,
    call.stream,
    call.outcome,
    call.errorCode,
    call.errorMessage,
    Math.round(call.latencyMs),
    call.firstTokenMs === null ? null : Math.round(call.firstTokenMs),
    call.inputTokens,
    call.outputTokens,
    call.createdAt,
  ];
}

/**
 * A statement each pooled connection parses and plans once, then only executes. Named by schema, since a name
 * stands for one text per connection. Named statements live in the server session: a pooler in front of the
 * database must keep sessions (PgBouncer: session mode, or 1.21+ with `max_prepared_statements`).
 */
interface Prepared {
  name: string;
  text: string;
}

function statements(s: string) {
  const prepared = (name: string, text: string): Prepared => ({ name: `${s}.${name}`, text });
  // The advisory lock key of an agent; ids never contain "/".
  const agentLock = "hashtextextended($1 || '/' || $2, 0)";
  // turnTokens of history.ts, over characters (`length`: code points, never more than JavaScript's UTF-16
  // units). `length` reads the whole text, so a first pass bounds the turns with what the row header gives: a
  // third of the UTF-8 bytes, never more than the UTF-16 units either (1 to 3 bytes make one unit, 4 bytes two).
  const tokens = (characters: string) =>
    `(${characters} + ${CHARACTERS_PER_TOKEN - 1}) / ${CHARACTERS_PER_TOKEN} + ${MESSAGE_OVERHEAD_TOKENS}`;
  const runningTotal = (characters: string) =>
    `sum(${tokens(characters)}) OVER (ORDER BY seq DESC ROWS UNBOUNDED PRECEDING)`;
  return {
    // Newest first, at most maxTurns read backwards through turns_by_conversation, cut where the running total
    // of the estimate passes the budget: only the turns the prompt can use are sent.
    history: prepared(
      "history",
      `SELECT role, text FROM (
        SELECT seq, role, text, ${runningTotal("length(text)")} AS spent FROM (
          SELECT seq, role, text FROM (
            SELECT seq, role, text, ${runningTotal("octet_length(text) / 3")} AS least
            FROM (SELECT seq, role, text FROM ${s}.turns WHERE ${KEY_WHERE} ORDER BY seq DESC LIMIT $5) AS latest
          ) AS bounded
          WHERE least <= $6
        ) AS candidates
      ) AS costed
      WHERE spent <= $6 ORDER BY seq DESC`,
    ),
    page: `SELECT * FROM ${s}.turns WHERE ${KEY_WHERE} AND seq > $5 ORDER BY seq ASC LIMIT $6`,
    shareAgent: prepared("shareAgent", `SELECT pg_advisory_xact_lock_shared(${agentLock})`),
    lockAgent: `SELECT pg_advisory_xact_lock(${agentLock})`,
    isPurged: prepared(
      "isPurged",
      `SELECT 1 FROM ${s}.purged_agents WHERE account_id = $1 AND agent_id = $2`,
    ),
    touchConversation: prepared(
      "touchConversation",
      `INSERT INTO ${s}.conversations (account_id, agent_id, user_id, room_id, turn_count, created_at, updated_at)
      VALUES ($1, $2, $3, $4, 2, $5, $6)
      ON CONFLICT (agent_id, user_id, room_id, account_id)
      DO UPDATE SET turn_count = conversations.turn_count + 2, updated_at = excluded.updated_at`,
    ),
    // One statement, rows in order: the message takes the lower sequence number.
    insertTurns: prepared(
      "insertTurns",
      `INSERT INTO ${s}.turns
        (id, account_id, agent_id, user_id, room_id, role, text, model, provider, input_tokens, output_tokens,
        latency_ms, created_at)
      VALUES ($5, $1, $2, $3, $4, 'user', $6, NULL, NULL, 0, 0, 0, $7),
        ($8, $1, $2, $3, $4, 'assistant', $9, $10, $11, $12, $13, $14, $15)`,
    ),
    insertCall: prepared(
      "insertCall",
      `INSERT INTO ${s}.calls
        (id, request_id, account_id, agent_id, user_id, room_id, provider, model, stream, outcome, error_code,
        error_message, latency_ms, first_token_ms, input_tokens, output_tokens, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
    ),
    calls: `SELECT * FROM ${s}.calls WHERE account_id = $1 AND agent_id = $2 ORDER BY seq ASC`,
    markPurged: `INSERT INTO ${s}.purged_agents (account_id, agent_id, purged_at) VALUES ($1, $2, now())
      ON CONFLICT DO NOTHING`,
    deleteTurns: `DELETE FROM ${s}.turns WHERE account_id = $1 AND agent_id = $2`,
    deleteCalls: `DELETE FROM ${s}.calls WHERE account_id = $1 AND agent_id = $2`,
    deleteConversations: `DELETE FROM ${s}.conversations WHERE account_id = $1 AND agent_id = $2`,
  };
}

type Statements = ReturnType<typeof statements>;

export class PostgresConversationStore implements ConversationStore {
  private readonly sql: Statements;
  private closed = false;

  /** Use `openPostgresConversationStore`, which also migrates the schema. */
  constructor(
    private readonly db: PgDatabase,
    schema: string,
  ) {
    this.sql = statements(schema);
  }

  async recentTurns(key: ConversationKey, limits: HistoryLimits): Promise<HistoryTurn[]> {
    const values = [...keyParams(key), limits.maxTurns, limits.tokenBudget];
    return oldestFirst(await this.db.query<HistoryTurn>(this.sql.history, values));
  }

  async saveExchange(exchange: NewExchange, call: CallRecord): Promise<boolean> {
    const { key, user, reply } = exchange;
    return this.db.transaction(async (client) => {
      if (await this.purged(client, key.accountId, key.agentId)) return false;
      await run(client, this.sql.touchConversation, [...keyParams(key), user.createdAt, reply.createdAt]);
      await run(client, this.sql.insertTurns, [
        ...keyParams(key),
        user.id,
        user.text,
        user.createdAt,
        reply.id,
        reply.text,
        reply.model,
        reply.provider,
        reply.inputTokens,
        reply.outputTokens,
        reply.latencyMs,
        reply.createdAt,
      ]);
      await run(client, this.sql.insertCall, callValues(call));
      return true;
    });
  }

  async recordCall(call: CallRecord): Promise<boolean> {
    return this.db.transaction(async (client) => {
      if (await this.purged(client, call.accountId, call.agentId)) return false;
      await run(client, this.sql.insertCall, callValues(call));
      return true;
    });
  }

  async listTurns(key: ConversationKey, page: { limit: number; cursor: string | null }): Promise<TurnPage> {
    const after = page.cursor === null ? "0" : cursorPosition(page.cursor);
    const rows = await this.db.query<PgTurnRow>(this.sql.page, [...keyParams(key), after, page.limit + 1]);
    return turnPage(rows, page.limit, (row) => toTurn(row, row.created_at.toISOString()));
  }

  async listCalls(accountId: string, agentId: string): Promise<CallRecord[]> {
    const rows = await this.db.query<PgCallRow>(this.sql.calls, [accountId, agentId]);
    return rows.map((row) => toCall(row, row.stream, row.created_at.toISOString()));
  }

  async purgeAgent(accountId: string, agentId: string): Promise<PurgeResult> {
    return this.db.transaction(async (client) => {
      await client.query(this.sql.lockAgent, [accountId, agentId]);
      await client.query(this.sql.markPurged, [accountId, agentId]);
      const turns = (await client.query(this.sql.deleteTurns, [accountId, agentId])).rowCount ?? 0;
      const calls = (await client.query(this.sql.deleteCalls, [accountId, agentId])).rowCount ?? 0;
      await client.query(this.sql.deleteConversations, [accountId, agentId]);
      return { turns, calls };
    });
  }

  async ping(): Promise<void> {
    await this.db.query("SELECT 1", []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }

  /** Takes the agent's shared lock (held until commit) and tells whether the agent has been purged. */
  private async purged(client: pg.PoolClient, accountId: string, agentId: string): Promise<boolean> {
    await run(client, this.sql.shareAgent, [accountId, agentId]);
    return ((await run(client, this.sql.isPurged, [accountId, agentId])).rowCount ?? 0) > 0;
  }
}

/**
 * Opens a pool on the database and brings the service's schema up to date (safe when instances start at once).
 * While the database cannot be reached it waits for it, reporting the outage.
 */
export async function openPostgresConversationStore(
  options: PostgresConversationStoreOptions,
): Promise<PostgresConversationStore> {
  const schema = options.schema ?? DEFAULT_CONVERSATION_SCHEMA;
  assertSchemaName(schema);
  const db = await openPgDatabase({
    connectionString: options.connectionString,
    applicationName: "agentry-conversation",
    description: "The conversation database",
    migrations: migrationTarget(schema),
    ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
    ...(options.statementTimeoutMs !== undefined ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
    ...(options.availability ? { availability: options.availability } : {}),
    ...(options.waitForDatabase !== undefined ? { waitForDatabase: options.waitForDatabase } : {}),
  });
  return new PostgresConversationStore(db, schema);
}
