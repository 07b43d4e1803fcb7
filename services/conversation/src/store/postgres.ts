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

import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { Availability } from "@agentry/logging";
import { assertSchemaName, openPgDatabase, type PgDatabase, run } from "@agentry/pg";
import type pg from "pg";
import { CHARACTERS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, oldestFirst } from "../history.js";
import { migrationTarget } from "./postgres-migrations.js";
import {
  conversationPosition,
  conversationsPage,
  cursorOf,
  foreignCursor,
  messagePosition,
  messagesPage,
  pageOf,
} from "./queries.js";
import {
  type CallRow,
  type ConversationRow,
  cursorPosition,
  keyParams,
  positionCursor,
  type TurnRow,
  toCall,
  toConversation,
  toTurn,
  turnPage,
} from "./rows.js";
import type {
  CallRecord,
  ConversationKey,
  ConversationRecord,
  ConversationStore,
  HistoryLimits,
  HistoryTurn,
  MessageFilter,
  NewExchange,
  Page,
  PageRequest,
  PurgeResult,
  TurnPage,
  TurnRecord,
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
type PgConversationRow = ConversationRow<Date>;

const placeholder = (n: number) => `$${n}`;
const turnRecord = (row: PgTurnRow) => toTurn(row, row.created_at.toISOString());

const KEY_WHERE = "account_id = $1 AND agent_id = $2 AND user_id = $3 AND room_id = $4";

function callValues(call: CallRecord): unknown[] {
  return [
    call.id,
    call.requestId,
    call.apiKeyId,
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
    // The conversation's id: the one it has, or, for its first exchange, the new one given ($7).
    touchConversation: prepared(
      "touchConversation",
      `INSERT INTO ${s}.conversations
        (id, account_id, agent_id, user_id, room_id, turn_count, created_at, updated_at)
      VALUES ($7, $1, $2, $3, $4, 2, $5, $6)
      ON CONFLICT (agent_id, user_id, room_id, account_id)
      DO UPDATE SET turn_count = conversations.turn_count + 2, updated_at = excluded.updated_at
      RETURNING id`,
    ),
    // One statement, rows in order: the message takes the lower sequence number.
    insertTurns: prepared(
      "insertTurns",
      `INSERT INTO ${s}.turns
        (id, conversation_id, account_id, agent_id, user_id, room_id, role, text, model, provider, input_tokens,
        output_tokens, latency_ms, finish_reason, created_at)
      VALUES ($5, $16, $1, $2, $3, $4, 'user', $6, NULL, NULL, 0, 0, 0, NULL, $7),
        ($8, $16, $1, $2, $3, $4, 'assistant', $9, $10, $11, $12, $13, $14, $17, $15)`,
    ),
    insertCall: prepared(
      "insertCall",
      `INSERT INTO ${s}.calls
        (id, request_id, api_key_id, account_id, agent_id, user_id, room_id, provider, model, stream, outcome,
        error_code, error_message, latency_ms, first_token_ms, input_tokens, output_tokens, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
    ),
    conversationOf: `SELECT 1 FROM ${s}.conversations WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    message: `SELECT * FROM ${s}.turns WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    deleteConversation: `DELETE FROM ${s}.conversations WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    deleteConversationTurns: `DELETE FROM ${s}.turns WHERE conversation_id = $1`,
    userTurns: `SELECT * FROM ${s}.turns WHERE account_id = $1 AND user_id = $2 AND seq > $3 ORDER BY seq ASC
      LIMIT $4`,
    deleteUserTurns: `DELETE FROM ${s}.turns WHERE account_id = $1 AND user_id = $2`,
    deleteUserConversations: `DELETE FROM ${s}.conversations WHERE account_id = $1 AND user_id = $2`,
    // The calls stay (usage keeps its counts) without the user's id.
    forgetUserCalls: `UPDATE ${s}.calls SET user_id = '' WHERE account_id = $1 AND user_id = $2`,
    turns: `${s}.turns`,
    conversations: `${s}.conversations`,
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
      const touched = await run<{ id: string }>(client, this.sql.touchConversation, [
        ...keyParams(key),
        user.createdAt,
        reply.createdAt,
        newId("conversation"),
      ]);
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
        touched.rows[0]!.id,
        reply.finishReason,
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

  async listConversations(
    accountId: string,
    agentId: string,
    filter: { userId?: string; roomId?: string },
    page: PageRequest,
  ): Promise<Page<ConversationRecord>> {
    const cursor = cursorOf(page);
    let position: { updatedAt: Date; id: string } | null = null;
    if (cursor !== null) {
      const query = conversationPosition(this.sql.conversations, placeholder, {
        id: cursor,
        accountId,
        agentId,
      });
      const row = (await this.db.query<{ updated_at: Date; id: string }>(query.text, query.values))[0];
      if (!row) throw foreignCursor(page);
      position = { updatedAt: row.updated_at, id: row.id };
    }
    const query = conversationsPage(
      this.sql.conversations,
      placeholder,
      { accountId, agentId, filter },
      page,
      position,
    );
    const rows = await this.db.query<PgConversationRow>(query.text, query.values);
    return pageOf(rows, page, (row) =>
      toConversation(row, row.created_at.toISOString(), row.updated_at.toISOString()),
    );
  }

  async listMessages(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
  ): Promise<Page<TurnRecord>> {
    if (filter.conversationId !== undefined) {
      const known = await this.db.query(this.sql.conversationOf, [filter.conversationId, accountId, agentId]);
      if (known.length === 0) throw conversationNotFound(filter.conversationId);
    }
    const cursor = cursorOf(page);
    let position: string | null = null;
    if (cursor !== null) {
      const query = messagePosition(this.sql.turns, placeholder, { id: cursor, accountId, agentId });
      const row = (await this.db.query<{ seq: string }>(query.text, query.values))[0];
      if (!row) throw foreignCursor(page);
      position = row.seq;
    }
    const query = messagesPage(this.sql.turns, placeholder, { accountId, agentId, filter }, page, position);
    return pageOf(await this.db.query<PgTurnRow>(query.text, query.values), page, turnRecord);
  }

  async getMessage(accountId: string, agentId: string, messageId: string): Promise<TurnRecord | null> {
    const row = (await this.db.query<PgTurnRow>(this.sql.message, [messageId, accountId, agentId]))[0];
    return row ? turnRecord(row) : null;
  }

  async deleteConversation(
    accountId: string,
    agentId: string,
    conversationId: string,
  ): Promise<number | null> {
    return this.db.transaction(async (client) => {
      const deleted = await client.query(this.sql.deleteConversation, [conversationId, accountId, agentId]);
      if ((deleted.rowCount ?? 0) === 0) return null;
      return (await client.query(this.sql.deleteConversationTurns, [conversationId])).rowCount ?? 0;
    });
  }

  async exportUser(
    accountId: string,
    userId: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ turns: TurnRecord[]; next: string | null }> {
    const after = cursor === null ? "0" : cursorPosition(cursor);
    const rows = await this.db.query<PgTurnRow>(this.sql.userTurns, [accountId, userId, after, limit]);
    const last = rows.at(-1);
    return {
      turns: rows.map(turnRecord),
      next: rows.length === limit && last ? positionCursor(last.seq) : null,
    };
  }

  async eraseUser(accountId: string, userId: string): Promise<number> {
    return this.db.transaction(async (client) => {
      const turns = (await client.query(this.sql.deleteUserTurns, [accountId, userId])).rowCount ?? 0;
      await client.query(this.sql.deleteUserConversations, [accountId, userId]);
      await client.query(this.sql.forgetUserCalls, [accountId, userId]);
      return turns;
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

function conversationNotFound(id: string): AppError {
  return new AppError("CONVERSATION_NOT_FOUND", `Conversation ${id} does not exist.`);
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
