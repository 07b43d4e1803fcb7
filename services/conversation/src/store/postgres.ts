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
 * - The outbox's `data` is `json`, kept as the text written, so events keep the contract's order of members.
 *
 * Concurrency, where SQLite's single writer gave it for free:
 * - An exchange first upserts its conversation's row, which locks it until commit, and only then inserts its
 *   two turns. Exchanges of one conversation are therefore stored one after the other: a message and its
 *   reply get adjacent sequence numbers, and sequence order is commit order, so a cursor never skips a turn
 *   committed late.
 * - Saving takes a shared advisory lock on the (account, agent) pair and purging takes it exclusively. A save
 *   either commits before the purge starts (and is purged) or starts after it (and sees the tombstone), so no
 *   turn, call or event of a purged agent survives, however the two interleave across instances.
 * - Outbox sequence numbers are handed out before commit, so a reader may see a later event before an earlier one
 *   commits; the relay reads whatever is still there, oldest first, so a late commit is published on a following
 *   round. Several instances may read and publish the same events at once: publishing is at least once, and the
 *   webhooks service skips ids it has.
 *
 * Usage rollups (usage.ts, usage-queries.ts):
 * - A call record and its eight rows are one statement (the rows' keys as arrays, unnested in order), in the
 *   transaction that stores the call. A sketch is a zero count and an integer array indexed by bin, whose element
 *   the upsert bumps; rows stay near a kilobyte, updated in place on their page (HOT). Concurrent sends of an
 *   account queue on its hour row, the first they lock, and each adds exactly once (ON CONFLICT waits for the
 *   other's commit).
 * - Purging an agent subtracts its agent-level rows from the account's rows, bin by bin, then deletes its rows;
 *   erasing a user deletes their rows and merges what it deleted into the blank user's. Both first lock the
 *   rows they change in the order sends do (hours before days), so that a send does not deadlock with them.
 */

import { type AuditEntry, type AuditQuery, newAuditEvent, newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  openStoreDatabase,
  type PgAuditLog,
  type PgDatabase,
  type PgStoreOptions,
  pgAuditLog,
  run,
} from "@agentry/pg";
import type pg from "pg";
import { CHARACTERS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, oldestFirst } from "../history.js";
import { storedMessageJson } from "../stored-messages.js";
import {
  AGENT_LEVELS,
  AGENT_SHARE,
  BUCKET_SECONDS,
  planUsage,
  USER_LEVEL,
  type UsageIncrement,
  type UsageReport,
  type UsageRequest,
  usageIncrement,
  usageReport,
  ZERO_BIN,
} from "../usage.js";
import { documentAudit, historyAudit, memoryAudit } from "./audit.js";
import { binCounts, binsAsBytes } from "./postgres-bins.js";
import { PostgresDocuments } from "./postgres-documents.js";
import { PostgresMemories } from "./postgres-memories.js";
import { migrationTarget } from "./postgres-migrations.js";
import { PostgresQueue } from "./postgres-queue.js";
import { type PgRunRow, PostgresRuns, toRun } from "./postgres-runs.js";
import { PostgresSchedules } from "./postgres-schedules.js";
import {
  conversationPosition,
  conversationsPage,
  cursorOf,
  foreignCursor,
  messagePosition,
  messagesPage,
  pageOf,
  type Query,
  runPosition,
  runsPage,
} from "./queries.js";
import {
  asReadBack,
  type CallRow,
  type ConversationRow,
  citationsColumn,
  cursorPosition,
  exchangeTurns,
  keptOrPresented,
  keyParams,
  loneSurrogatesAs,
  positionCursor,
  type TurnRow,
  toCall,
  toConversation,
  toolCallsColumn,
  toTurn,
  turnPage,
} from "./rows.js";
import type {
  CallRecord,
  ChunkMatch,
  ConflictMode,
  ConversationKey,
  ConversationRecord,
  ConversationStore,
  DocumentRecord,
  ExpiredApproval,
  ExpiredLease,
  HistoryLimits,
  HistoryTurn,
  KeyedExchange,
  ListedRunStatus,
  MemoryFilter,
  MemoryOwner,
  MemoryRecord,
  MemoryVector,
  MessageFilter,
  NewDocument,
  NewExchange,
  NewMemory,
  NewOutboxEvent,
  OutboxEvent,
  Page,
  PageRequest,
  PurgeResult,
  QueueEntry,
  QueueJoin,
  QueueRenewal,
  QueueTurn,
  RunDecision,
  RunEnd,
  RunEvent,
  RunRecord,
  RunWrite,
  TurnPage,
  TurnRecord,
} from "./types.js";
import { toUsageRow, type UsageRollupRow, usageRowsQuery } from "./usage-queries.js";

/** What the conversation store opens with (`openStoreDatabase`). */
export type PostgresConversationStoreOptions = PgStoreOptions;

export const DEFAULT_CONVERSATION_SCHEMA = "conversation";

type PgTurnRow = TurnRow<string, Date>;
type PgCallRow = CallRow<boolean, Date>;
type PgConversationRow = ConversationRow<Date>;
type PgUsageRow = UsageRollupRow<number, string, Buffer>;

interface PgOutboxRow {
  seq: string;
  event_id: string;
  type: OutboxEvent["type"];
  account_id: string;
  agent_id: string;
  /** json, which the driver parses. */
  data: OutboxEvent["data"];
  created_at: Date;
}

const placeholder = (n: number) => `$${n}`;
/** pg writes a lone surrogate as U+FFFD (Node's UTF-8 encoder). */
const READ_BACK = loneSurrogatesAs("\ufffd");
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
 * A bin as this store keeps it: its index in the integer array of bins (DDSketch keys of whole milliseconds are
 * 0 or more), and whether it is the zero bin, counted in a column of its own.
 */
function storedBin(bin: string | null): { index: number | null; zero: number } {
  if (bin === null) return { index: null, zero: 0 };
  if (bin === ZERO_BIN) return { index: null, zero: 1 };
  return { index: Number(bin), zero: 0 };
}

/** The values `recordCall` adds to the call's: each row's key as arrays in row order, its figures, its bins. */
function usageValues(increment: UsageIncrement): unknown[] {
  const { cells } = increment;
  const latency = storedBin(increment.latencyBin);
  const firstToken = storedBin(increment.firstTokenBin);
  return [
    increment.accountId,
    cells.map((cell) => cell.level),
    cells.map((cell) => cell.bucketSeconds),
    cells.map((cell) => cell.agentId),
    cells.map((cell) => cell.bucketStart),
    cells.map((cell) => cell.userId),
    cells.map((cell) => cell.model),
    cells.map((cell) => cell.apiKeyId),
    increment.messages,
    increment.errors,
    increment.inputTokens,
    increment.outputTokens,
    latency.zero,
    latency.index,
    firstToken.zero,
    firstToken.index,
  ];
}

const USAGE_KEY = "account_id, level, bucket_seconds, agent_id, bucket_start, user_id, model, api_key_id";
const USAGE_FIGURES = `messages, errors, input_tokens, output_tokens, latency_zeros, latency_bins, first_token_zeros,
  first_token_bins`;
/** The order writers lock rollup rows in: hours before days (usage.ts, UsageIncrement.cells). */
const USAGE_LOCK_ORDER = "bucket_seconds, bucket_start, agent_id, user_id, model, api_key_id";

/**
 * The bins of `a` and `b` added (sign 1) or those of `b` taken from `a` (sign -1), element by element over both
 * arrays' ranges, as an array with the same bounds. Counts are integers, so the result is exact.
 */
function combineBins(a: string, b: string, sign: 1 | -1): string {
  return `(SELECT CASE WHEN count(*) = 0 THEN '{}'::integer[]
        ELSE format('[%s:%s]=%s', min(i), max(i), array_agg(n ORDER BY i))::integer[] END
      FROM (SELECT i, coalesce(${a}[i], 0) + ${sign} * coalesce(${b}[i], 0) AS n
        FROM generate_series(least(array_lower(${a}, 1), array_lower(${b}, 1)),
          greatest(array_upper(${a}, 1), array_upper(${b}, 1))) AS i) AS bins)`;
}

/** Figures of `total` and `part` added (sign 1), or `part` taken from `total` (sign -1). */
function combineFigures(total: string, part: string, sign: 1 | -1): string {
  const op = sign === 1 ? "+" : "-";
  return ["messages", "errors", "input_tokens", "output_tokens", "latency_zeros", "first_token_zeros"]
    .map((column) => `${column} = ${total}.${column} ${op} ${part}.${column}`)
    .concat(
      ["latency_bins", "first_token_bins"].map(
        (column) => `${column} = ${combineBins(`${total}.${column}`, `${part}.${column}`, sign)}`,
      ),
    )
    .join(",\n        ");
}

const quoted = (values: readonly (string | number)[]) =>
  values.map((value) => (typeof value === "number" ? String(value) : `'${value}'`)).join(", ");
/** Every bucket width, so that a purge reads the primary key as ranges. */
const ALL_WIDTHS = quoted(Object.values(BUCKET_SECONDS));

function usageStatements(s: string, prepared: (name: string, text: string) => Prepared) {
  // One more in the call's bin, in place; a call without one adds 0 to a bin the array has (or to bin 0 of an
  // empty array), since an element assignment cannot be skipped.
  const bump = (column: string, bin: string) => {
    const index = `coalesce(${bin}::integer, array_lower(u.${column}, 1), 0)`;
    return `${column}[${index}] = coalesce(u.${column}[${index}], 0) + CASE WHEN ${bin}::integer IS NULL THEN 0 ELSE 1 END`;
  };
  const initial = (bin: string) =>
    `CASE WHEN ${bin}::integer IS NULL THEN '{}'::integer[] ELSE array_fill(1, ARRAY[1], ARRAY[${bin}::integer]) END`;
  // The account's rows add up its agents' rows of the same bucket: an agent's share of them.
  const shares = `${s}.usage_rollups share
    WHERE share.account_id = $1 AND share.level = '${AGENT_SHARE.share}' AND share.bucket_seconds IN (${ALL_WIDTHS})
      AND share.agent_id = $2
      AND total.account_id = $1 AND total.level = '${AGENT_SHARE.total}' AND total.bucket_seconds = share.bucket_seconds
      AND total.agent_id = '' AND total.bucket_start = share.bucket_start AND total.user_id = ''
      AND total.model = '' AND total.api_key_id = ''`;
  const userRows = `FROM ${s}.usage_rollups WHERE account_id = $1 AND user_id = $2 AND level = '${USER_LEVEL}'`;
  // The rollup rows of a call, its parameters numbered from after the `first` before them.
  const addUsage = (first: number) => {
    const p = (n: number) => `$${first + n}`;
    return `INSERT INTO ${s}.usage_rollups AS u (${USAGE_KEY}, ${USAGE_FIGURES})
      SELECT ${p(1)}, c.level, c.seconds, c.agent, c.bucket, c.usr, c.model, c.apikey, ${p(9)}, ${p(10)}, ${p(11)}, ${p(12)}, ${p(13)},
        ${initial(p(14))}, ${p(15)}, ${initial(p(16))}
      FROM unnest(${p(2)}::text[], ${p(3)}::integer[], ${p(4)}::text[], ${p(5)}::timestamptz[], ${p(6)}::text[], ${p(7)}::text[],
        ${p(8)}::text[]) WITH ORDINALITY AS c(level, seconds, agent, bucket, usr, model, apikey, n)
      ORDER BY c.n
      ON CONFLICT (${USAGE_KEY}) DO UPDATE SET
        messages = u.messages + excluded.messages,
        errors = u.errors + excluded.errors,
        input_tokens = u.input_tokens + excluded.input_tokens,
        output_tokens = u.output_tokens + excluded.output_tokens,
        latency_zeros = u.latency_zeros + excluded.latency_zeros,
        ${bump("latency_bins", p(14))},
        first_token_zeros = u.first_token_zeros + excluded.first_token_zeros,
        ${bump("first_token_bins", p(16))}`;
  };
  return {
    // The call record and its eight rollup rows in one statement, so that usage costs no round trip of its own. A
    // new row starts with the call's bins.
    recordCall: prepared(
      "recordCall",
      `WITH recorded AS (
        INSERT INTO ${s}.calls
          (id, request_id, api_key_id, account_id, agent_id, user_id, room_id, provider, model, stream, outcome,
          error_code, error_message, latency_ms, first_token_ms, input_tokens, output_tokens, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
      )
      ${addUsage(18)}`,
    ),
    // The rollup rows alone: the tokens of a call made for a turn (usageIncrement's tokensOnly).
    addUsage: prepared("addUsage", addUsage(0)),
    lockAgentShares: `SELECT 1 FROM ${s}.usage_rollups total, ${shares}
      ORDER BY total.bucket_seconds, total.bucket_start FOR UPDATE OF total`,
    subtractAgentUsage: `UPDATE ${s}.usage_rollups total SET
        ${combineFigures("total", "share", -1)}
      FROM ${shares}`,
    deleteEmptyUsage: `DELETE FROM ${s}.usage_rollups
      WHERE account_id = $1 AND level = '${AGENT_SHARE.total}' AND messages = 0`,
    deleteAgentUsage: `DELETE FROM ${s}.usage_rollups WHERE account_id = $1 AND level IN (${quoted(AGENT_LEVELS)})
      AND bucket_seconds IN (${ALL_WIDTHS}) AND agent_id = $2`,
    lockUserUsage: `SELECT 1 ${userRows} ORDER BY ${USAGE_LOCK_ORDER} FOR UPDATE`,
    // Each of the user's rows joins the blank user's row of the same bucket and other dimensions. The rows merged
    // are the rows deleted, as they are when deleted: a send that adds to one meanwhile is waited for, not lost.
    unattributeUsage: `WITH gone AS (DELETE ${userRows} RETURNING *)
      INSERT INTO ${s}.usage_rollups AS u (${USAGE_KEY}, ${USAGE_FIGURES})
      SELECT account_id, level, bucket_seconds, agent_id, bucket_start, '', model, api_key_id, ${USAGE_FIGURES}
      FROM gone ORDER BY ${USAGE_LOCK_ORDER}
      ON CONFLICT (${USAGE_KEY}) DO UPDATE SET
        ${combineFigures("u", "excluded", 1)}`,
    usage: `${s}.usage_rollups`,
  };
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
        output_tokens, latency_ms, finish_reason, tool_calls, background, fallback, created_at, message_json,
        citations)
      VALUES ($5, $16, $1, $2, $3, $4, 'user', $6, NULL, NULL, 0, 0, 0, NULL, NULL, false, false, $7, $21, NULL),
        ($8, $16, $1, $2, $3, $4, 'assistant', $9, $10, $11, $12, $13, $14, $17, $18::json, $19, $20, $15, $22,
        $23::json)`,
    ),
    conversationOf: `SELECT 1 FROM ${s}.conversations WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    message: `SELECT * FROM ${s}.turns WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    turnsById: `SELECT * FROM ${s}.turns WHERE id = ANY($1::text[])`,
    deleteConversation: `DELETE FROM ${s}.conversations WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    deleteConversationTurns: `DELETE FROM ${s}.turns WHERE conversation_id = $1`,
    userTurns: `SELECT * FROM ${s}.turns WHERE account_id = $1 AND user_id = $2 AND seq > $3 ORDER BY seq ASC
      LIMIT $4`,
    deleteUserTurns: `DELETE FROM ${s}.turns WHERE account_id = $1 AND user_id = $2`,
    deleteUserConversations: `DELETE FROM ${s}.conversations WHERE account_id = $1 AND user_id = $2`,
    // The user's replies and paused calls waiting in the outbox (message.failed events carry no user's words).
    deleteUserEvents: `DELETE FROM ${s}.outbox WHERE account_id = $1
      AND type IN ('message.completed', 'message.requires_action')
      AND data->>'userId' = $2`,
    // The calls stay (usage keeps its counts) without the user's id.
    forgetUserCalls: `UPDATE ${s}.calls SET user_id = '' WHERE account_id = $1 AND user_id = $2`,
    turns: `${s}.turns`,
    runs: `${s}.message_runs`,
    conversations: `${s}.conversations`,
    calls: `SELECT * FROM ${s}.calls WHERE account_id = $1 AND agent_id = $2 ORDER BY seq ASC`,
    markPurged: `INSERT INTO ${s}.purged_agents (account_id, agent_id, purged_at) VALUES ($1, $2, now())
      ON CONFLICT DO NOTHING`,
    deleteTurns: `DELETE FROM ${s}.turns WHERE account_id = $1 AND agent_id = $2`,
    deleteCalls: `DELETE FROM ${s}.calls WHERE account_id = $1 AND agent_id = $2`,
    deleteConversations: `DELETE FROM ${s}.conversations WHERE account_id = $1 AND agent_id = $2`,
    insertEvent: prepared(
      "insertEvent",
      `INSERT INTO ${s}.outbox (event_id, type, account_id, agent_id, data, created_at)
      VALUES ($1, $2, $3, $4, $5, $6)`,
    ),
    pendingEvents: `SELECT seq, event_id, type, account_id, agent_id, data, created_at FROM ${s}.outbox
      ORDER BY seq LIMIT $1`,
    removeEvents: `DELETE FROM ${s}.outbox WHERE seq = ANY($1::bigint[])`,
    deleteAgentEvents: `DELETE FROM ${s}.outbox WHERE account_id = $1 AND agent_id = $2`,
    // A key held by an exchange that expired passes to the new one; one still held stays with its exchange.
    keepKey: prepared(
      "keepKey",
      `INSERT INTO ${s}.message_keys AS k (account_id, key_hash, agent_id, user_id, conversation_id, message_id,
        reply_id, fallback, created_at, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
      ON CONFLICT (account_id, key_hash) DO UPDATE SET
        agent_id = excluded.agent_id, user_id = excluded.user_id, conversation_id = excluded.conversation_id,
        message_id = excluded.message_id, reply_id = excluded.reply_id, fallback = excluded.fallback,
        created_at = excluded.created_at, expires_at = excluded.expires_at
      WHERE k.expires_at <= excluded.created_at`,
    ),
    keyedExchange: `SELECT agent_id, message_id, reply_id, fallback FROM ${s}.message_keys
      WHERE account_id = $1 AND key_hash = $2 AND expires_at > $3`,
    removeExpiredKeys: `DELETE FROM ${s}.message_keys WHERE (account_id, key_hash) IN (
        SELECT account_id, key_hash FROM ${s}.message_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
        FOR UPDATE SKIP LOCKED)
      RETURNING 1`,
    deleteAgentKeys: `DELETE FROM ${s}.message_keys WHERE account_id = $1 AND agent_id = $2`,
    deleteUserKeys: `DELETE FROM ${s}.message_keys WHERE account_id = $1 AND user_id = $2`,
    deleteConversationKeys: `DELETE FROM ${s}.message_keys WHERE conversation_id = $1`,
    ...usageStatements(s, prepared),
  };
}

type Statements = ReturnType<typeof statements>;

export class PostgresConversationStore implements ConversationStore {
  private readonly sql: Statements;
  private readonly queue: PostgresQueue;
  private readonly runs: PostgresRuns;
  private readonly memories: PostgresMemories;
  private readonly documents: PostgresDocuments;
  readonly schedules: PostgresSchedules;
  private readonly audit: PgAuditLog;
  private closed = false;

  /** Use `openPostgresConversationStore`, which also migrates the schema. */
  constructor(
    private readonly db: PgDatabase,
    schema: string,
  ) {
    this.sql = statements(schema);
    this.runs = new PostgresRuns(db, schema, async (client, events, tokens) => {
      await this.insertEvents(client, events);
      if (tokens) await run(client, this.sql.addUsage, usageValues(usageIncrement(tokens, true)));
    });
    this.queue = new PostgresQueue(db, schema);
    this.memories = new PostgresMemories(db, schema);
    this.documents = new PostgresDocuments(db, schema);
    this.audit = pgAuditLog(db, schema);
    this.schedules = new PostgresSchedules(db, schema, this.audit);
  }

  /** Records a change's audit event on its transaction's connection; none for a null entry. */
  private async record(client: pg.PoolClient, accountId: string, entry: AuditEntry | null): Promise<void> {
    if (entry) await this.audit.record(client, accountId, newAuditEvent(entry));
  }

  async listAuditEvents(accountId: string, query: AuditQuery) {
    return this.audit.list(accountId, query);
  }

  async pruneAuditEvents(before: string, limit: number): Promise<number> {
    return this.audit.prune(before, limit);
  }

  async recentTurns(key: ConversationKey, limits: HistoryLimits): Promise<HistoryTurn[]> {
    const values = [...keyParams(key), limits.maxTurns, limits.tokenBudget];
    return oldestFirst(await this.db.query<HistoryTurn>(this.sql.history, values));
  }

  async saveExchange(
    exchange: NewExchange,
    call: CallRecord,
    events: readonly NewOutboxEvent[] = [],
  ): Promise<boolean> {
    const { key, user, reply, idempotencyKey } = exchange;
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
        toolCallsColumn(reply.toolCalls),
        reply.background ?? false,
        reply.fallback ?? false,
        ...exchangeTurns(exchange, touched.rows[0]!.id).map((turn) =>
          storedMessageJson(asReadBack(turn, READ_BACK)),
        ),
        citationsColumn(reply.citations),
      ]);
      if (idempotencyKey) {
        await run(client, this.sql.keepKey, [
          key.accountId,
          idempotencyKey.hash,
          key.agentId,
          key.userId,
          touched.rows[0]!.id,
          user.id,
          reply.id,
          idempotencyKey.fallback,
          reply.createdAt,
          idempotencyKey.expiresAt,
        ]);
      }
      await this.insertCall(client, call);
      await this.insertEvents(client, events);
      if (exchange.leaves) await this.queue.leave(exchange.leaves.id, exchange.leaves.owner, client);
      return true;
    });
  }

  async recordCall(call: CallRecord, events: readonly NewOutboxEvent[] = []): Promise<boolean> {
    return this.db.transaction(async (client) => {
      if (await this.purged(client, call.accountId, call.agentId)) return false;
      await this.insertCall(client, call);
      await this.insertEvents(client, events);
      return true;
    });
  }

  async recordTokens(call: CallRecord): Promise<void> {
    await this.db.transaction(async (client) => {
      if (await this.purged(client, call.accountId, call.agentId)) return;
      await run(client, this.sql.addUsage, usageValues(usageIncrement(call, true)));
    });
  }

  async recordCalls(calls: readonly CallRecord[]): Promise<void> {
    await this.db.transaction(async (client) => {
      // Each agent's shared lock and tombstone once: the lock is held until commit.
      const purged = new Map<string, boolean>();
      for (const call of calls) {
        const agent = `${call.accountId}/${call.agentId}`;
        let gone = purged.get(agent);
        if (gone === undefined) {
          gone = await this.purged(client, call.accountId, call.agentId);
          purged.set(agent, gone);
        }
        if (!gone) await this.insertCall(client, call);
      }
    });
  }

  async pendingEvents(limit: number): Promise<OutboxEvent[]> {
    const rows = await this.db.query<PgOutboxRow>(this.sql.pendingEvents, [limit]);
    return rows.map((row) => ({
      seq: Number(row.seq),
      id: row.event_id,
      type: row.type,
      accountId: row.account_id,
      agentId: row.agent_id,
      createdAt: row.created_at.toISOString(),
      data: row.data,
    }));
  }

  async removeEvents(seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) await this.db.query(this.sql.removeEvents, [seqs]);
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
      await client.query(this.sql.lockAgentShares, [accountId, agentId]);
      await client.query(this.sql.subtractAgentUsage, [accountId, agentId]);
      await client.query(this.sql.deleteEmptyUsage, [accountId]);
      await client.query(this.sql.deleteAgentUsage, [accountId, agentId]);
      await client.query(this.sql.deleteAgentEvents, [accountId, agentId]);
      await this.runs.deleteAgentRuns(client, accountId, agentId);
      await client.query(this.sql.deleteAgentKeys, [accountId, agentId]);
      await this.memories.deleteAgent(client, accountId, agentId);
      await this.documents.deleteAgent(client, accountId, agentId);
      await this.schedules.deleteAgent(client, accountId, agentId);
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
    const query = await this.messagesQuery(accountId, agentId, filter, page);
    return pageOf(await this.db.query<PgTurnRow>(query.text, query.values), page, turnRecord);
  }

  async listMessageTexts(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
  ): Promise<Page<string>> {
    const query = await this.messagesQuery(accountId, agentId, filter, page, "id, message_json");
    const rows = await this.db.query<{ id: string; message_json: string | null }>(query.text, query.values);
    const unkept = rows.filter((row) => row.message_json === null).map((row) => row.id);
    const presented = new Map<string, string>();
    if (unkept.length > 0) {
      for (const row of await this.db.query<PgTurnRow>(this.sql.turnsById, [unkept])) {
        presented.set(row.id, storedMessageJson(turnRecord(row)));
      }
    }
    return keptOrPresented(pageOf(rows, page, (row) => row.message_json ?? presented.get(row.id)));
  }

  /** The query of a page of messages, once its conversation and cursor are known to be the agent's. */
  private async messagesQuery(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
    columns?: string,
  ): Promise<Query> {
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
    return messagesPage(this.sql.turns, placeholder, { accountId, agentId, filter }, page, position, columns);
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
      await this.runs.deleteConversationRuns(client, accountId, agentId, conversationId);
      const deleted = await client.query(this.sql.deleteConversation, [conversationId, accountId, agentId]);
      if ((deleted.rowCount ?? 0) === 0) return null;
      await client.query(this.sql.deleteConversationKeys, [conversationId]);
      const messages = (await client.query(this.sql.deleteConversationTurns, [conversationId])).rowCount ?? 0;
      await this.record(client, accountId, historyAudit.deleteConversation(conversationId, messages));
      return messages;
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
      await client.query(this.sql.deleteUserEvents, [accountId, userId]);
      await client.query(this.sql.forgetUserCalls, [accountId, userId]);
      await this.runs.deleteUserRuns(client, accountId, userId);
      await client.query(this.sql.deleteUserKeys, [accountId, userId]);
      await this.memories.deleteUser(client, accountId, userId);
      // The blank user's counts are unattributed already.
      if (userId !== "") {
        await client.query(this.sql.lockUserUsage, [accountId, userId]);
        await client.query(this.sql.unattributeUsage, [accountId, userId]);
      }
      await this.record(client, accountId, historyAudit.eraseUser(userId, turns));
      return turns;
    });
  }

  async getUsage(request: UsageRequest): Promise<UsageReport> {
    const plan = planUsage(request);
    // The start as epoch milliseconds: the report needs no Date, and the driver parses a number faster.
    const query = usageRowsQuery(this.sql.usage, placeholder, plan, {
      time: (column) => `extract(epoch FROM ${column})::float8 * 1000`,
      bins: binsAsBytes,
    });
    const rows = await this.db.query<PgUsageRow>(query.text, query.values);
    return usageReport(
      plan,
      rows.map((row) => toUsageRow(row, row.bucket_start, binCounts)),
    );
  }

  async startRun(record: RunRecord, placeOwner?: string): Promise<void> {
    const holder = record.lease?.holder;
    if (!holder || placeOwner === undefined) {
      await this.runs.start(record);
      return;
    }
    await this.db.transaction(async (client) => {
      await this.runs.start(record, client);
      await this.queue.own(client, record.id, holder, placeOwner);
    });
  }

  async appendRunEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    await this.runs.append(runId, events);
  }

  async endRun(runId: string, events: readonly RunEvent[], end: RunEnd): Promise<boolean> {
    return this.runs.finish(runId, events, end);
  }

  async writeRuns(writes: readonly RunWrite[]): Promise<void> {
    await this.runs.write(writes);
  }

  async getRun(accountId: string, agentId: string, runId: string): Promise<RunRecord | null> {
    return this.runs.get(accountId, agentId, runId);
  }

  async runEvents(runId: string, after: number, limit: number): Promise<RunEvent[]> {
    return this.runs.events(runId, after, limit);
  }

  async keyedRun(accountId: string, keyHash: string, now: string): Promise<RunRecord | null> {
    return this.runs.keyed(accountId, keyHash, now);
  }

  async renewLeases(holder: string, runIds: readonly string[], expiresAt: string): Promise<string[]> {
    return this.runs.renewLeases(holder, runIds, expiresAt);
  }

  async expiredLeases(now: string, limit: number): Promise<ExpiredLease[]> {
    return this.runs.expiredLeases(now, limit);
  }

  async claimRun(
    runId: string,
    claim: { holder: string; now: string; expiresAt: string; deadlineAt: string },
  ): Promise<RunRecord | null> {
    return this.runs.claim(runId, claim);
  }

  async cancelAgentRuns(accountId: string, agentId: string, end: RunEnd): Promise<string[]> {
    return this.db.transaction(async (client) => {
      const cancelled = await this.runs.cancelAgent(accountId, agentId, end, client);
      await this.record(client, accountId, historyAudit.cancelRuns(agentId, cancelled));
      return cancelled;
    });
  }

  async endedRunsAmong(runIds: readonly string[]): Promise<string[]> {
    if (runIds.length === 0) return [];
    return this.runs.endedAmong(runIds);
  }
  async joinConversation(entry: QueueEntry, mode: ConflictMode, now: string): Promise<QueueJoin> {
    return this.queue.join(entry, mode, now);
  }

  async admitTurn(id: string, now: string): Promise<QueueTurn> {
    return this.queue.admit(id, now);
  }

  async leaveConversation(id: string, holder: string): Promise<void> {
    await this.queue.leave(id, holder);
  }

  async renewQueue(holder: string, ids: readonly string[], expiresAt: string): Promise<QueueRenewal[]> {
    return this.queue.renew(holder, ids, expiresAt);
  }

  async listRuns(
    accountId: string,
    agentId: string,
    status: ListedRunStatus | null,
    page: PageRequest,
  ): Promise<Page<RunRecord>> {
    const cursor = cursorOf(page);
    if (cursor !== null) {
      const query = runPosition(this.sql.runs, placeholder, { id: cursor, accountId, agentId });
      if ((await this.db.query(query.text, query.values)).length === 0) throw foreignCursor(page);
    }
    const query = runsPage(
      this.sql.runs,
      placeholder,
      { accountId, agentId, status, yes: true, no: false },
      page,
    );
    return pageOf(await this.db.query<PgRunRow>(query.text, query.values), page, toRun);
  }

  async abandonedRuns(now: string, limit: number): Promise<Pick<RunRecord, "id" | "background">[]> {
    return this.runs.abandoned(now, limit);
  }

  async decideRun(
    accountId: string,
    agentId: string,
    runId: string,
    decision: RunDecision,
  ): Promise<RunRecord | null> {
    return this.runs.decide(accountId, agentId, runId, decision);
  }

  async expiredApprovals(now: string, limit: number): Promise<ExpiredApproval[]> {
    return this.runs.expiredApprovals(now, limit);
  }

  async removeExpiredRuns(now: string, limit: number): Promise<number> {
    return this.runs.removeExpired(now, limit);
  }

  async keyedExchange(accountId: string, keyHash: string, now: string): Promise<KeyedExchange | null> {
    const rows = await this.db.query<{
      agent_id: string;
      message_id: string;
      reply_id: string;
      fallback: boolean;
    }>(this.sql.keyedExchange, [accountId, keyHash, now]);
    const row = rows[0];
    return row
      ? { agentId: row.agent_id, messageId: row.message_id, replyId: row.reply_id, fallback: row.fallback }
      : null;
  }

  async removeExpiredKeys(now: string, limit: number): Promise<number> {
    return (await this.db.query(this.sql.removeExpiredKeys, [now, limit])).length;
  }

  async addMemories(owner: MemoryOwner, memories: readonly NewMemory[], limit: number) {
    return this.memories.add(
      owner,
      memories,
      limit,
      (client) => this.purged(client, owner.accountId, owner.agentId),
      async (client, kept) => {
        // One memory written through the API (it has no source message) is a caller's change.
        const written = kept.find(({ memory, created }) => created && memory.sourceMessageId === null);
        if (written && kept.length === 1)
          await this.record(client, owner.accountId, memoryAudit.create(written.memory));
      },
    );
  }

  async listMemories(
    accountId: string,
    agentId: string,
    filter: MemoryFilter,
    page: PageRequest,
  ): Promise<Page<MemoryRecord>> {
    return this.memories.list(accountId, agentId, filter, page);
  }

  async relevantMemories(
    owner: MemoryOwner,
    text: string,
    limit: number,
    query?: MemoryVector,
  ): Promise<MemoryRecord[]> {
    return this.memories.relevant(owner, text, limit, query);
  }

  async saveMemoryVectors(
    owner: MemoryOwner,
    vectors: readonly { memoryId: string; vector: MemoryVector }[],
  ): Promise<void> {
    return this.memories.saveVectors(owner, vectors);
  }

  async searchesVectors(): Promise<boolean> {
    return this.memories.searchesVectors();
  }

  async deleteMemory(accountId: string, agentId: string, memoryId: string): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const deleted = await this.memories.delete(accountId, agentId, memoryId, client);
      if (deleted) await this.record(client, accountId, memoryAudit.delete(memoryId));
      return deleted;
    });
  }

  async exportUserMemories(accountId: string, userId: string, cursor: string | null, limit: number) {
    return this.memories.exportUser(accountId, userId, cursor, limit);
  }

  async addDocument(accountId: string, agentId: string, document: NewDocument) {
    return this.documents.add(
      accountId,
      agentId,
      document,
      (client) => this.purged(client, accountId, agentId),
      (client, added) => this.record(client, accountId, documentAudit.create(added)),
    );
  }

  async listDocuments(accountId: string, agentId: string, page: PageRequest): Promise<Page<DocumentRecord>> {
    return this.documents.list(accountId, agentId, page);
  }

  async getDocument(accountId: string, agentId: string, documentId: string) {
    return this.documents.get(accountId, agentId, documentId);
  }

  async documentSources(accountId: string, agentId: string) {
    return this.documents.sources(accountId, agentId);
  }

  async deleteDocument(accountId: string, agentId: string, documentId: string) {
    return this.db.transaction(async (client) => {
      const deleted = await this.documents.delete(accountId, agentId, documentId, client);
      if (deleted) await this.record(client, accountId, documentAudit.delete(documentId));
      return deleted;
    });
  }

  async relevantChunks(
    accountId: string,
    agentId: string,
    text: string,
    limit: number,
    query?: MemoryVector,
  ): Promise<ChunkMatch[]> {
    return this.documents.relevant(accountId, agentId, text, limit, query);
  }

  async saveChunkVectors(
    accountId: string,
    agentId: string,
    vectors: readonly { documentId: string; chunk: number; vector: MemoryVector }[],
  ): Promise<void> {
    return this.documents.saveVectors(accountId, agentId, vectors);
  }

  async ping(): Promise<void> {
    await this.db.query("SELECT 1", []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }

  /** Stores a call record and adds it to its rollup rows: one statement. */
  private async insertCall(client: pg.PoolClient, call: CallRecord): Promise<void> {
    await run(client, this.sql.recordCall, [...callValues(call), ...usageValues(usageIncrement(call))]);
  }

  private async insertEvents(client: pg.PoolClient, events: readonly NewOutboxEvent[]): Promise<void> {
    for (const event of events) {
      await run(client, this.sql.insertEvent, [
        event.id,
        event.type,
        event.accountId,
        event.agentId,
        JSON.stringify(event.data),
        event.createdAt,
      ]);
    }
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
  const { db, schema } = await openStoreDatabase(options, {
    defaultSchema: DEFAULT_CONVERSATION_SCHEMA,
    applicationName: "agentry-conversation",
    description: "The conversation database",
    migrations: migrationTarget,
  });
  return new PostgresConversationStore(db, schema);
}
