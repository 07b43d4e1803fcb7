import { join } from "node:path";
import { type AuditEntry, type AuditQuery, currentAuditStamp, newAuditEvent, newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  openSqliteDatabase,
  type SqliteAuditLog,
  sqliteAuditLog,
  watchOtherConnections,
} from "@agentry/sqlite";
import type Database from "better-sqlite3";
import { oldestFirst, turnTokens, withinLimits } from "../history.js";
import { storedMessageJson } from "../stored-messages.js";
import {
  AGENT_LEVELS,
  AGENT_SHARE,
  BUCKET_SECONDS,
  LEVEL_DIMENSIONS,
  planUsage,
  USAGE_ROWS,
  USER_LEVEL,
  type UsageDimension,
  type UsageReport,
  type UsageRequest,
  usageIncrement,
  usageReport,
} from "../usage.js";
import { documentAudit, historyAudit, memoryAudit } from "./audit.js";
import { HistoryCache } from "./history-cache.js";
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
  type KeyParams,
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
import { jsonbBinCounts } from "./sqlite-bins.js";
import { SqliteDocuments } from "./sqlite-documents.js";
import { SqliteMemories } from "./sqlite-memories.js";
import { MIGRATION_TARGET } from "./sqlite-migrations.js";
import { SqliteQueue } from "./sqlite-queue.js";
import { type RelaxedWrite, relaxedWrites } from "./sqlite-relaxed.js";
import { type SqliteRunRow, SqliteRuns, toRun } from "./sqlite-runs.js";
import { SqliteSchedules } from "./sqlite-schedules.js";
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
  TurnRole,
} from "./types.js";
import { toUsageRow, type UsageRollupRow, usageRowsQuery } from "./usage-queries.js";

export const CONVERSATION_DB_FILE = "conversation.db";

type SqliteTurnRow = TurnRow<number, string>;
type SqliteCallRow = CallRow<number, string>;
type SqliteConversationRow = ConversationRow<string>;
type SqliteUsageRow = UsageRollupRow<string, number, Uint8Array>;

interface SqliteOutboxRow {
  seq: number;
  event_id: string;
  type: OutboxEvent["type"];
  account_id: string;
  agent_id: string;
  data: string;
  created_at: string;
}

/** The parameters of a kept Idempotency-Key. */
interface SqliteKeyRow {
  account: string;
  hash: string;
  agent: string;
  user: string;
  conversation: string;
  message: string;
  reply: string;
  fallback: number;
  created: string;
  expires: string;
}

const placeholder = () => "?";
/** better-sqlite3 writes a lone surrogate as its three bytes, which read back as three U+FFFD. */
const READ_BACK = loneSurrogatesAs("\ufffd\ufffd\ufffd");
const turnRecord = (row: SqliteTurnRow) => toTurn(row, row.created_at);

const KEY_WHERE = "account_id = ? AND agent_id = ? AND user_id = ? AND room_id = ?";

/**
 * The embedded store: one SQLite file, opened with the settings of `@agentry/sqlite`. The history windows of
 * recently used conversations are kept in memory (see HistoryCache), so that a message to one of them reads no
 * turns.
 *
 * Usage rollups (usage.ts, usage-queries.ts): each call adds to its eight rows in one multi-row upsert, in the
 * transaction that records it. Bins are SQLite's binary JSON (JSONB), bumped in place with jsonb_set: a third of
 * the time json_set takes on text, which parses and prints the whole object. Purging an agent subtracts its
 * agent-level rows from the account's rows bin by bin, then deletes its rows; erasing a user merges their rows into
 * the blank user's, bins added with json_each, then deletes them.
 *
 * The outbox holds message events (events.ts) from the transaction that stores what they tell of until the relay
 * has published them; `data` is their JSON text, as published.
 */
export class SqliteConversationStore implements ConversationStore {
  private readonly db: Database.Database;
  private readonly statements: Statements;
  // Built once: better-sqlite3 wraps the function anew on every `transaction()` call.
  private readonly save: Database.Transaction<
    (exchange: NewExchange, call: CallRecord, events: readonly NewOutboxEvent[]) => boolean
  >;
  private readonly record: Database.Transaction<
    (call: CallRecord, events: readonly NewOutboxEvent[]) => boolean
  >;
  private readonly recordUsage: Database.Transaction<(call: CallRecord) => void>;
  private readonly recordMany: Database.Transaction<(calls: readonly CallRecord[]) => void>;
  private readonly purge: Database.Transaction<(accountId: string, agentId: string) => PurgeResult>;
  private readonly dropConversation: Database.Transaction<
    (accountId: string, agentId: string, conversationId: string) => number | null
  >;
  private readonly erase: Database.Transaction<(accountId: string, userId: string) => number>;
  private readonly startLeased: Database.Transaction<(run: RunRecord, holder: string, owner: string) => void>;
  /** Statements of the history reads, whose text depends on the filters: prepared once each. */
  private readonly reads = new Map<string, Database.Statement>();
  /** The history windows of recently used conversations (see HistoryCache). */
  private readonly history = new HistoryCache(HISTORY_CACHE_CHARS);
  private readonly othersCommitted: () => boolean;
  /** Bookkeeping commits that need not wait for the disk (sqlite-relaxed.ts). */
  private readonly relaxed: RelaxedWrite;
  private readonly queue: SqliteQueue;
  private readonly runs: SqliteRuns;
  private readonly memories: SqliteMemories;
  private readonly documents: SqliteDocuments;
  private readonly audit: SqliteAuditLog;
  readonly schedules: SqliteSchedules;

  /** Opens (creating when missing) the database file and brings its schema up to date. */
  constructor(file: string) {
    this.db = openSqliteDatabase(file, MIGRATION_TARGET);
    this.othersCommitted = watchOtherConnections(this.db);
    const s = prepare(this.db);
    this.statements = s;
    this.relaxed = relaxedWrites(this.db);
    const runs = new SqliteRuns(this.db, (events, tokens) => {
      for (const event of events) s.insertEvent.run(outboxRow(event));
      if (tokens) this.addUsage(tokens, true);
    });
    this.runs = runs;
    this.queue = new SqliteQueue(this.db);
    this.startLeased = this.db.transaction((run: RunRecord, holder: string, owner: string) => {
      runs.start(run);
      this.queue.own(run.id, holder, owner);
    });
    const memories = new SqliteMemories(this.db, (accountId, agentId) => this.purged(accountId, agentId));
    this.memories = memories;
    const documents = new SqliteDocuments(this.db, (accountId, agentId) => this.purged(accountId, agentId));
    this.documents = documents;
    this.audit = sqliteAuditLog(this.db);
    const schedules = new SqliteSchedules(this.db, this.audit);
    this.schedules = schedules;
    this.save = this.db.transaction(
      (exchange: NewExchange, call: CallRecord, events: readonly NewOutboxEvent[]) => {
        const { key, user, reply, idempotencyKey } = exchange;
        if (this.purged(key.accountId, key.agentId)) return false;
        const conversationId = s.touchConversation.get(
          newId("conversation"),
          ...keyParams(key),
          user.createdAt,
          reply.createdAt,
        )!;
        // Both turns in one statement, the reply's citations with it.
        const [asked, answered] = exchangeTurns(exchange, conversationId);
        s.insertTurns.run(
          ...turnParams(asked, conversationId, null),
          ...turnParams(answered, conversationId, citationsColumn(reply.citations)),
        );
        if (idempotencyKey) {
          s.keepKey.run({
            account: key.accountId,
            hash: idempotencyKey.hash,
            agent: key.agentId,
            user: key.userId,
            conversation: conversationId,
            message: user.id,
            reply: reply.id,
            fallback: idempotencyKey.fallback ? 1 : 0,
            created: reply.createdAt,
            expires: idempotencyKey.expiresAt,
          });
        }
        s.insertCall.run(callRow(call));
        this.addUsage(call);
        for (const event of events) s.insertEvent.run(outboxRow(event));
        if (exchange.leaves) this.queue.leave(exchange.leaves.id, exchange.leaves.owner, true);
        return true;
      },
    );
    this.record = this.db.transaction((call: CallRecord, events: readonly NewOutboxEvent[]) => {
      if (this.purged(call.accountId, call.agentId)) return false;
      s.insertCall.run(callRow(call));
      this.addUsage(call);
      for (const event of events) s.insertEvent.run(outboxRow(event));
      return true;
    });
    this.recordUsage = this.db.transaction((call: CallRecord) => {
      if (!this.purged(call.accountId, call.agentId)) this.addUsage(call, true);
    });
    this.recordMany = this.db.transaction((calls: readonly CallRecord[]) => {
      for (const call of calls) {
        if (this.purged(call.accountId, call.agentId)) continue;
        s.insertCall.run(callRow(call));
        this.addUsage(call);
      }
    });
    this.purge = this.db.transaction((accountId: string, agentId: string) => {
      s.markPurged.run(agentId, accountId, new Date().toISOString());
      const turns = s.deleteTurns.run(agentId, accountId).changes;
      const calls = s.deleteCalls.run(agentId, accountId).changes;
      s.deleteConversations.run(agentId, accountId);
      s.subtractAgentUsage.run({ account: accountId, agent: agentId });
      s.deleteEmptyUsage.run(accountId);
      s.deleteAgentUsage.run(accountId, agentId);
      s.deleteAgentEvents.run(agentId, accountId);
      runs.deleteAgentRuns(accountId, agentId);
      s.deleteAgentKeys.run(accountId, agentId);
      memories.deleteAgent(accountId, agentId);
      documents.deleteAgent(accountId, agentId);
      schedules.deleteAgent(accountId, agentId);
      return { turns, calls };
    });
    this.dropConversation = this.db.transaction(
      (accountId: string, agentId: string, conversationId: string) => {
        runs.deleteConversationRuns(accountId, agentId, conversationId);
        if (s.deleteConversation.run(conversationId, accountId, agentId).changes === 0) return null;
        s.deleteConversationKeys.run(conversationId);
        return s.deleteConversationTurns.run(conversationId).changes;
      },
    );
    this.erase = this.db.transaction((accountId: string, userId: string) => {
      const turns = s.deleteUserTurns.run(accountId, userId).changes;
      s.deleteUserConversations.run(accountId, userId);
      s.deleteUserEvents.run(accountId, userId);
      s.forgetUserCalls.run(accountId, userId);
      runs.deleteUserRuns(accountId, userId);
      s.deleteUserKeys.run(accountId, userId);
      memories.deleteUser(accountId, userId);
      // The blank user's counts are unattributed already.
      if (userId !== "") {
        s.unattributeUsage.run(accountId, userId);
        s.deleteUserUsage.run(accountId, userId);
      }
      return turns;
    });
  }

  async recentTurns(key: ConversationKey, limits: HistoryLimits): Promise<HistoryTurn[]> {
    this.forgetOthersWrites();
    const id = conversationId(key);
    const cached = this.history.get(id, limits);
    if (cached) return cached;
    // Newest first, in pages that double (32 turns, then 64, ...), each read whole as plain rows, stopping at the
    // first turn over the budget: stepping a statement row by row costs more per row than SQLite's own work, and
    // a conversation of long turns still stops within its first page.
    const turns: { role: TurnRole; text: string; tokens: number }[] = [];
    let spent = 0;
    let before = Number.MAX_SAFE_INTEGER;
    read: for (let size = FIRST_HISTORY_PAGE; turns.length < limits.maxTurns; size *= 2) {
      const wanted = Math.min(size, limits.maxTurns - turns.length);
      const rows = this.statements.history.all(...keyParams(key), before, wanted);
      for (const [seq, role, text] of rows) {
        const tokens = turnTokens(text);
        if (!withinLimits(turns.length + 1, spent + tokens, limits)) break read;
        spent += tokens;
        turns.push({ role, text, tokens });
        before = seq;
      }
      if (rows.length < wanted) break;
    }
    this.history.set(id, limits, turns);
    return oldestFirst(turns.map(({ role, text }) => ({ role, text })));
  }

  async saveExchange(
    exchange: NewExchange,
    call: CallRecord,
    events: readonly NewOutboxEvent[] = [],
  ): Promise<boolean> {
    const saved = this.save.immediate(exchange, call, events);
    const id = conversationId(exchange.key);
    // Appended only if nobody else wrote since the cache was last known to be current: their turns would be
    // missing from it.
    if (saved && !this.forgetOthersWrites()) {
      this.history.append(
        id,
        [
          { role: "user", text: exchange.user.text },
          { role: "assistant", text: exchange.reply.text },
        ],
        turnTokens,
      );
    } else {
      this.history.delete(id);
    }
    return saved;
  }

  async recordCall(call: CallRecord, events: readonly NewOutboxEvent[] = []): Promise<boolean> {
    return this.record.immediate(call, events);
  }

  async recordCalls(calls: readonly CallRecord[]): Promise<void> {
    this.recordMany.immediate(calls);
  }

  async recordTokens(call: CallRecord): Promise<void> {
    this.recordUsage.immediate(call);
  }

  async pendingEvents(limit: number): Promise<OutboxEvent[]> {
    return this.statements.pendingEvents.all(limit).map((row) => ({
      seq: row.seq,
      id: row.event_id,
      type: row.type,
      accountId: row.account_id,
      agentId: row.agent_id,
      createdAt: row.created_at,
      data: JSON.parse(row.data),
    }));
  }

  async removeEvents(seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) this.relaxed(() => this.statements.removeEvents.run(JSON.stringify(seqs)));
  }

  async listTurns(key: ConversationKey, page: { limit: number; cursor: string | null }): Promise<TurnPage> {
    const after = page.cursor === null ? 0 : Number(cursorPosition(page.cursor));
    const rows = this.statements.page.all(...keyParams(key), after, page.limit + 1);
    return turnPage(rows, page.limit, (row) => toTurn(row, row.created_at));
  }

  async listCalls(accountId: string, agentId: string): Promise<CallRecord[]> {
    return this.statements.calls
      .all(accountId, agentId)
      .map((row) => toCall(row, row.stream === 1, row.created_at));
  }

  async purgeAgent(accountId: string, agentId: string): Promise<PurgeResult> {
    this.history.clear();
    return this.purge.immediate(accountId, agentId);
  }

  async listConversations(
    accountId: string,
    agentId: string,
    filter: { userId?: string; roomId?: string },
    page: PageRequest,
  ): Promise<Page<ConversationRecord>> {
    const cursor = cursorOf(page);
    let position: { updatedAt: string; id: string } | null = null;
    if (cursor !== null) {
      const row = this.read<{ updated_at: string; id: string }>(
        conversationPosition("conversations", placeholder, { id: cursor, accountId, agentId }),
      ).get();
      if (!row) throw foreignCursor(page);
      position = { updatedAt: row.updated_at, id: row.id };
    }
    const rows = this.read<SqliteConversationRow>(
      conversationsPage("conversations", placeholder, { accountId, agentId, filter }, page, position),
    ).all();
    return pageOf(rows, page, (row) => toConversation(row, row.created_at, row.updated_at));
  }

  async listMessages(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
  ): Promise<Page<TurnRecord>> {
    const rows = this.read<SqliteTurnRow>(this.messagesQuery(accountId, agentId, filter, page)).all();
    return pageOf(rows, page, turnRecord);
  }

  async listMessageTexts(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
  ): Promise<Page<string>> {
    const query = this.messagesQuery(accountId, agentId, filter, page, "id, message_json");
    const rows = this.read<{ id: string; message_json: string | null }>(query).all();
    const unkept = rows.filter((row) => row.message_json === null).map((row) => row.id);
    const presented = new Map<string, string>();
    if (unkept.length > 0) {
      for (const row of this.statements.turnsById.all(JSON.stringify(unkept))) {
        presented.set(row.id, storedMessageJson(turnRecord(row)));
      }
    }
    return keptOrPresented(pageOf(rows, page, (row) => row.message_json ?? presented.get(row.id)));
  }

  /** The query of a page of messages, once its conversation and cursor are known to be the agent's. */
  private messagesQuery(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
    columns?: string,
  ): Query {
    if (
      filter.conversationId !== undefined &&
      !this.statements.conversationOf.get(filter.conversationId, accountId, agentId)
    ) {
      throw conversationNotFound(filter.conversationId);
    }
    const cursor = cursorOf(page);
    let position: number | null = null;
    if (cursor !== null) {
      const row = this.read<{ seq: number }>(
        messagePosition("turns", placeholder, { id: cursor, accountId, agentId }),
      ).get();
      if (!row) throw foreignCursor(page);
      position = row.seq;
    }
    return messagesPage("turns", placeholder, { accountId, agentId, filter }, page, position, columns);
  }

  async getMessage(accountId: string, agentId: string, messageId: string): Promise<TurnRecord | null> {
    const row = this.statements.message.get(messageId, accountId, agentId);
    return row ? turnRecord(row) : null;
  }

  /**
   * Runs a change and records its audit event (`entry` of its result; none for null) in one transaction, the
   * change's own when it has one (better-sqlite3 nests it as a savepoint).
   */
  private audited<T>(accountId: string, change: () => T, entry: (result: T) => AuditEntry | null): T {
    const stamp = currentAuditStamp();
    return this.db
      .transaction(() => {
        const result = change();
        const made = entry(result);
        if (made) this.audit.record(accountId, newAuditEvent(made, stamp));
        return result;
      })
      .immediate();
  }

  async listAuditEvents(accountId: string, query: AuditQuery) {
    return this.audit.list(accountId, query);
  }

  async pruneAuditEvents(before: string, limit: number): Promise<number> {
    return this.audit.prune(before, limit);
  }

  async deleteConversation(
    accountId: string,
    agentId: string,
    conversationId: string,
  ): Promise<number | null> {
    const deleted = this.audited(
      accountId,
      () => this.dropConversation(accountId, agentId, conversationId),
      (messages) => (messages === null ? null : historyAudit.deleteConversation(conversationId, messages)),
    );
    this.history.clear();
    return deleted;
  }

  async exportUser(
    accountId: string,
    userId: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ turns: TurnRecord[]; next: string | null }> {
    const after = cursor === null ? 0 : Number(cursorPosition(cursor));
    const rows = this.statements.userTurns.all(accountId, userId, after, limit);
    const last = rows.at(-1);
    return {
      turns: rows.map(turnRecord),
      next: rows.length === limit && last ? positionCursor(last.seq) : null,
    };
  }

  async eraseUser(accountId: string, userId: string): Promise<number> {
    const deleted = this.audited(
      accountId,
      () => this.erase(accountId, userId),
      (messages) => historyAudit.eraseUser(userId, messages),
    );
    this.history.clear();
    return deleted;
  }

  async addMemories(owner: MemoryOwner, memories: readonly NewMemory[], limit: number) {
    return this.audited(
      owner.accountId,
      () => this.memories.addMemories(owner, memories, limit),
      (stored) => {
        // One memory written through the API (it has no source message) is a caller's change.
        const written = stored.find(({ memory, created }) => created && memory.sourceMessageId === null);
        return written && stored.length === 1 ? memoryAudit.create(written.memory) : null;
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
    return this.audited(
      accountId,
      () => this.memories.delete(accountId, agentId, memoryId),
      (deleted) => (deleted ? memoryAudit.delete(memoryId) : null),
    );
  }

  async exportUserMemories(accountId: string, userId: string, cursor: string | null, limit: number) {
    return this.memories.exportUser(accountId, userId, cursor, limit);
  }

  async addDocument(accountId: string, agentId: string, document: NewDocument) {
    return this.audited(
      accountId,
      () => this.documents.addDocument(accountId, agentId, document),
      (added) => (added ? documentAudit.create(added) : null),
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
    return this.audited(
      accountId,
      () => this.documents.delete(accountId, agentId, documentId),
      (deleted) => (deleted ? documentAudit.delete(documentId) : null),
    );
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

  async getUsage(request: UsageRequest): Promise<UsageReport> {
    const plan = planUsage(request);
    const query = usageRowsQuery("usage_rollups", placeholder, plan, {
      time: (column) => column,
      // The JSONB blob as stored: reading it costs less than SQLite's printing it as JSON text (sqlite-bins.ts).
      bins: (column) => column,
    });
    const rows = this.read<SqliteUsageRow>(query).all();
    return usageReport(
      plan,
      rows.map((row) => toUsageRow(row, Date.parse(row.bucket_start), jsonbBinCounts)),
    );
  }

  async startRun(run: RunRecord, placeOwner?: string): Promise<void> {
    const holder = run.lease?.holder;
    if (holder && placeOwner !== undefined) this.startLeased.immediate(run, holder, placeOwner);
    else this.runs.start(run);
  }

  async appendRunEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    this.runs.append(runId, events);
  }

  async endRun(runId: string, events: readonly RunEvent[], end: RunEnd): Promise<boolean> {
    return this.runs.finish(runId, events, end);
  }

  async writeRuns(writes: readonly RunWrite[]): Promise<void> {
    if (writes.length > 0) this.runs.write(writes);
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
    return this.audited(
      accountId,
      () => this.runs.cancelAgent(accountId, agentId, end),
      (cancelled) => historyAudit.cancelRuns(agentId, cancelled),
    );
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
    this.queue.leave(id, holder);
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
    if (
      cursor !== null &&
      !this.read(runPosition("message_runs", placeholder, { id: cursor, accountId, agentId })).get()
    ) {
      throw foreignCursor(page);
    }
    const rows = this.read<SqliteRunRow>(
      runsPage("message_runs", placeholder, { accountId, agentId, status, yes: 1, no: 0 }, page),
    ).all();
    return pageOf(rows, page, toRun);
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
    return this.runs.removeExpiredRuns(now, limit);
  }

  async keyedExchange(accountId: string, keyHash: string, now: string): Promise<KeyedExchange | null> {
    const row = this.statements.keyedExchange.get(accountId, keyHash, now);
    return row
      ? {
          agentId: row.agent_id,
          messageId: row.message_id,
          replyId: row.reply_id,
          fallback: row.fallback === 1,
        }
      : null;
  }

  async removeExpiredKeys(now: string, limit: number): Promise<number> {
    return this.statements.removeExpiredKeys.run(now, limit).changes;
  }

  /** Reads a pragma of this connection (some, like synchronous, are per connection), for diagnostics. */
  pragma(name: string): unknown {
    return this.db.pragma(name, { simple: true });
  }

  async ping(): Promise<void> {
    this.db.prepare("SELECT 1").get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /**
   * Clears the history cache when another connection (another process on the same file) has committed since
   * the last look, and says whether it did.
   */
  private forgetOthersWrites(): boolean {
    if (!this.othersCommitted()) return false;
    this.history.clear();
    return true;
  }

  /**
   * Adds a call to its rollup rows: one statement for all of them, which binds each value once. Protected: the
   * benchmark (tools/bench) measures what it adds to storing an exchange with a store that leaves it out.
   */
  protected addUsage(call: CallRecord, tokensOnly = false): void {
    const increment = usageIncrement(call, tokensOnly);
    const { dimensions, bucketStarts } = increment;
    this.statements.addUsage.run({
      account: increment.accountId,
      agentId: dimensions.agentId,
      userId: dimensions.userId,
      model: dimensions.model,
      apiKeyId: dimensions.apiKeyId,
      hour: bucketStarts.hour,
      day: bucketStarts.day,
      messages: increment.messages,
      errors: increment.errors,
      input: increment.inputTokens,
      output: increment.outputTokens,
      latencyBins: increment.latencyBins,
      firstTokenBins: increment.firstTokenBins,
      latencyPath: binPath(increment.latencyBin),
      firstTokenPath: binPath(increment.firstTokenBin),
    });
  }

  private purged(accountId: string, agentId: string): boolean {
    return this.statements.isPurged.get(agentId, accountId) !== undefined;
  }

  private read<R>(query: Query): { get(): R | undefined; all(): R[] } {
    let statement = this.reads.get(query.text);
    if (!statement) {
      statement = this.db.prepare(query.text);
      this.reads.set(query.text, statement);
    }
    const prepared = statement;
    return {
      get: () => prepared.get(...query.values) as R | undefined,
      all: () => prepared.all(...query.values) as R[],
    };
  }
}

function conversationNotFound(id: string): AppError {
  return new AppError("CONVERSATION_NOT_FOUND", `Conversation ${id} does not exist.`);
}

type Statements = ReturnType<typeof prepare>;

/**
 * Characters of conversation text the history cache may hold in all (about 8 MB of memory at most): enough for
 * a few hundred conversations at the 200-turn limit.
 */
const HISTORY_CACHE_CHARS = 4 * 1024 * 1024;

/** The key of a conversation in the history cache. */
function conversationId(key: ConversationKey): string {
  return JSON.stringify([key.accountId, key.agentId, key.userId, key.roomId]);
}

/** Turns in the first page of a history read; each further page is twice the one before. */
const FIRST_HISTORY_PAGE = 32;

function prepare(db: Database.Database) {
  return {
    // Newest first, through turns_by_conversation backwards; only the two columns the prompt uses.
    history: db
      .prepare<[...KeyParams, beforeSeq: number, limit: number], [number, HistoryTurn["role"], string]>(
        `SELECT seq, role, text FROM turns WHERE ${KEY_WHERE} AND seq < ? ORDER BY seq DESC LIMIT ?`,
      )
      .raw(true),
    page: db.prepare<[...KeyParams, number, number], SqliteTurnRow>(
      `SELECT * FROM turns WHERE ${KEY_WHERE} AND seq > ? ORDER BY seq ASC LIMIT ?`,
    ),
    // An exchange's two turns (the message, then its reply: seq keeps that order), each as `turnParams` gives it.
    insertTurns: db.prepare<[...TurnParams, ...TurnParams]>(
      `INSERT INTO turns (id, conversation_id, account_id, agent_id, user_id, room_id, role, text, model, provider,
         input_tokens, output_tokens, latency_ms, finish_reason, tool_calls, background, fallback, created_at,
         message_json, citations)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
         (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // The conversation's id: the one it has, or, for its first exchange, the new one given.
    touchConversation: db
      .prepare<[string, ...KeyParams, string, string], string>(
        `INSERT INTO conversations (id, account_id, agent_id, user_id, room_id, turn_count, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 2, ?, ?)
         ON CONFLICT (agent_id, user_id, room_id, account_id)
         DO UPDATE SET turn_count = turn_count + 2, updated_at = excluded.updated_at
         RETURNING id`,
      )
      .pluck(),
    conversationOf: db.prepare<[string, string, string], number>(
      "SELECT 1 FROM conversations WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    message: db.prepare<[string, string, string], SqliteTurnRow>(
      "SELECT * FROM turns WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    // The ids as one JSON array: one statement, however many.
    turnsById: db.prepare<[string], SqliteTurnRow>(
      "SELECT * FROM turns WHERE id IN (SELECT value FROM json_each(?))",
    ),
    deleteConversation: db.prepare<[string, string, string]>(
      "DELETE FROM conversations WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    deleteConversationTurns: db.prepare<[string]>("DELETE FROM turns WHERE conversation_id = ?"),
    userTurns: db.prepare<[string, string, number, number], SqliteTurnRow>(
      "SELECT * FROM turns WHERE account_id = ? AND user_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?",
    ),
    deleteUserTurns: db.prepare<[string, string]>("DELETE FROM turns WHERE account_id = ? AND user_id = ?"),
    // The user's replies and paused calls waiting in the outbox (message.failed events carry no user's words).
    deleteUserEvents: db.prepare<[string, string]>(
      `DELETE FROM outbox WHERE account_id = ? AND type IN ('message.completed', 'message.requires_action')
         AND json_extract(data, '$.userId') = ?`,
    ),
    deleteUserConversations: db.prepare<[string, string]>(
      "DELETE FROM conversations WHERE account_id = ? AND user_id = ?",
    ),
    // The calls stay (usage keeps its counts) without the user's id.
    forgetUserCalls: db.prepare<[string, string]>(
      "UPDATE calls SET user_id = '' WHERE account_id = ? AND user_id = ?",
    ),
    insertCall: db.prepare<SqliteCallRow>(
      `INSERT INTO calls (id, request_id, api_key_id, account_id, agent_id, user_id, room_id, provider, model,
         stream, outcome, error_code, error_message, latency_ms, first_token_ms, input_tokens, output_tokens,
         created_at)
       VALUES (@id, @request_id, @api_key_id, @account_id, @agent_id, @user_id, @room_id, @provider, @model,
         @stream, @outcome, @error_code, @error_message, @latency_ms, @first_token_ms, @input_tokens,
         @output_tokens, @created_at)`,
    ),
    calls: db.prepare<[string, string], SqliteCallRow>(
      "SELECT * FROM calls WHERE account_id = ? AND agent_id = ? ORDER BY seq ASC",
    ),
    isPurged: db.prepare<[string, string], number>(
      "SELECT 1 FROM purged_agents WHERE agent_id = ? AND account_id = ?",
    ),
    markPurged: db.prepare<[string, string, string]>(
      "INSERT OR IGNORE INTO purged_agents (agent_id, account_id, purged_at) VALUES (?, ?, ?)",
    ),
    deleteTurns: db.prepare<[string, string]>("DELETE FROM turns WHERE agent_id = ? AND account_id = ?"),
    deleteCalls: db.prepare<[string, string]>("DELETE FROM calls WHERE agent_id = ? AND account_id = ?"),
    deleteConversations: db.prepare<[string, string]>(
      "DELETE FROM conversations WHERE agent_id = ? AND account_id = ?",
    ),
    insertEvent: db.prepare<[Omit<SqliteOutboxRow, "seq">]>(
      `INSERT INTO outbox (event_id, type, account_id, agent_id, data, created_at)
       VALUES (@event_id, @type, @account_id, @agent_id, @data, @created_at)`,
    ),
    pendingEvents: db.prepare<[number], SqliteOutboxRow>("SELECT * FROM outbox ORDER BY seq LIMIT ?"),
    // The seqs as one JSON array: one statement, however many.
    removeEvents: db.prepare<[string]>("DELETE FROM outbox WHERE seq IN (SELECT value FROM json_each(?))"),
    deleteAgentEvents: db.prepare<[string, string]>(
      "DELETE FROM outbox WHERE agent_id = ? AND account_id = ?",
    ),
    // A key held by an exchange that expired passes to the new one; one still held stays with its exchange.
    keepKey: db.prepare<[SqliteKeyRow]>(
      `INSERT INTO message_keys (account_id, key_hash, agent_id, user_id, conversation_id, message_id, reply_id,
         fallback, created_at, expires_at)
       VALUES (@account, @hash, @agent, @user, @conversation, @message, @reply, @fallback, @created, @expires)
       ON CONFLICT (account_id, key_hash) DO UPDATE SET
         agent_id = excluded.agent_id, user_id = excluded.user_id, conversation_id = excluded.conversation_id,
         message_id = excluded.message_id, reply_id = excluded.reply_id, fallback = excluded.fallback,
         created_at = excluded.created_at, expires_at = excluded.expires_at
       WHERE message_keys.expires_at <= excluded.created_at`,
    ),
    keyedExchange: db.prepare<
      [string, string, string],
      { agent_id: string; message_id: string; reply_id: string; fallback: number }
    >(
      `SELECT agent_id, message_id, reply_id, fallback FROM message_keys
       WHERE account_id = ? AND key_hash = ? AND expires_at > ?`,
    ),
    removeExpiredKeys: db.prepare<[string, number]>(
      `DELETE FROM message_keys WHERE (account_id, key_hash) IN (
         SELECT account_id, key_hash FROM message_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
    ),
    deleteAgentKeys: db.prepare<[string, string]>(
      "DELETE FROM message_keys WHERE account_id = ? AND agent_id = ?",
    ),
    deleteUserKeys: db.prepare<[string, string]>(
      "DELETE FROM message_keys WHERE account_id = ? AND user_id = ?",
    ),
    deleteConversationKeys: db.prepare<[string]>("DELETE FROM message_keys WHERE conversation_id = ?"),
    ...usageStatements(db),
  };
}

/** The parameters of the rollup upsert. */
interface UsageParams extends Record<UsageDimension, string> {
  account: string;
  hour: string;
  day: string;
  messages: number;
  errors: number;
  input: number;
  output: number;
  latencyBins: string;
  firstTokenBins: string;
  latencyPath: string | null;
  firstTokenPath: string | null;
}

const USAGE_KEY = "account_id, level, bucket_seconds, agent_id, bucket_start, user_id, model, api_key_id";
const USAGE_FIGURES = "messages, errors, input_tokens, output_tokens, latency_bins, first_token_bins";

/** The JSON path of a bin in a bins object, or null for no value. */
function binPath(bin: string | null): string | null {
  return bin === null ? null : `$."${bin}"`;
}

/**
 * Bins `a` and `b` added (sign 1) or `b` taken from `a` (sign -1), bins left empty dropped. Counts are integers,
 * so the result is exact.
 */
function combineBins(a: string, b: string, sign: 1 | -1): string {
  return `(SELECT jsonb_group_object(key, n) FROM (
      SELECT key, sum(n) AS n FROM (
        SELECT key, value AS n FROM json_each(${a}) UNION ALL SELECT key, ${sign} * value FROM json_each(${b})
      ) GROUP BY key
    ) WHERE n > 0)`;
}

/**
 * Adds one call to its rollup rows (usage.ts, USAGE_ROWS), named parameters each bound once: the call's figures,
 * its dimensions, its bucket of each granularity; each row's level and width are constants, and the dimensions
 * its level does not keep are ''. A new row starts with the call's bins; an existing one gets one more in the
 * call's bin, in place.
 */
function usageUpsert(): string {
  const values = USAGE_ROWS.map(({ level, granularity, bucketSeconds }) => {
    const kept = (dimension: UsageDimension) =>
      LEVEL_DIMENSIONS[level].includes(dimension) ? `@${dimension}` : "''";
    return `(@account, '${level}', ${bucketSeconds}, ${kept("agentId")}, @${granularity}, ${kept("userId")},
      ${kept("model")}, ${kept("apiKeyId")}, @messages, @errors, @input, @output, jsonb(@latencyBins),
      jsonb(@firstTokenBins))`;
  });
  const bump = (column: string, path: string) =>
    `CASE WHEN ${path} IS NULL THEN ${column}
      ELSE jsonb_set(${column}, ${path}, coalesce(${column} ->> ${path}, 0) + 1) END`;
  return `INSERT INTO usage_rollups (${USAGE_KEY}, ${USAGE_FIGURES})
    VALUES ${values.join(", ")}
    ON CONFLICT (${USAGE_KEY}) DO UPDATE SET
      messages = messages + excluded.messages,
      errors = errors + excluded.errors,
      input_tokens = input_tokens + excluded.input_tokens,
      output_tokens = output_tokens + excluded.output_tokens,
      latency_bins = ${bump("latency_bins", "@latencyPath")},
      first_token_bins = ${bump("first_token_bins", "@firstTokenPath")}`;
}

const quoted = (values: readonly (string | number)[]) =>
  values.map((value) => (typeof value === "number" ? String(value) : `'${value}'`)).join(", ");
/** Every bucket width, so that a purge reads the primary key as ranges. */
const ALL_WIDTHS = quoted(Object.values(BUCKET_SECONDS));

function usageStatements(db: Database.Database) {
  return {
    addUsage: db.prepare<[UsageParams]>(usageUpsert()),
    // The account's rows add up its agents' rows of the same bucket: take this agent's share away.
    subtractAgentUsage: db.prepare<[{ account: string; agent: string }]>(
      `UPDATE usage_rollups AS total SET
        messages = total.messages - share.messages,
        errors = total.errors - share.errors,
        input_tokens = total.input_tokens - share.input_tokens,
        output_tokens = total.output_tokens - share.output_tokens,
        latency_bins = ${combineBins("total.latency_bins", "share.latency_bins", -1)},
        first_token_bins = ${combineBins("total.first_token_bins", "share.first_token_bins", -1)}
      FROM usage_rollups AS share
      WHERE share.account_id = @account AND share.level = '${AGENT_SHARE.share}'
        AND share.bucket_seconds IN (${ALL_WIDTHS}) AND share.agent_id = @agent
        AND total.account_id = @account AND total.level = '${AGENT_SHARE.total}'
        AND total.bucket_seconds = share.bucket_seconds
        AND total.agent_id = '' AND total.bucket_start = share.bucket_start AND total.user_id = ''
        AND total.model = '' AND total.api_key_id = ''`,
    ),
    deleteEmptyUsage: db.prepare<[string]>(
      `DELETE FROM usage_rollups WHERE account_id = ? AND level = '${AGENT_SHARE.total}' AND messages = 0`,
    ),
    deleteAgentUsage: db.prepare<[string, string]>(
      `DELETE FROM usage_rollups WHERE account_id = ? AND level IN (${quoted(AGENT_LEVELS)})
        AND bucket_seconds IN (${ALL_WIDTHS}) AND agent_id = ?`,
    ),
    // Each of the user's rows joins the blank user's row of the same bucket and other dimensions.
    unattributeUsage: db.prepare<[string, string]>(
      `INSERT INTO usage_rollups (${USAGE_KEY}, ${USAGE_FIGURES})
        SELECT account_id, level, bucket_seconds, agent_id, bucket_start, '', model, api_key_id, ${USAGE_FIGURES}
        FROM usage_rollups WHERE account_id = ? AND user_id = ? AND level = '${USER_LEVEL}'
      ON CONFLICT (${USAGE_KEY}) DO UPDATE SET
        messages = messages + excluded.messages,
        errors = errors + excluded.errors,
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens,
        latency_bins = ${combineBins("usage_rollups.latency_bins", "excluded.latency_bins", 1)},
        first_token_bins = ${combineBins("usage_rollups.first_token_bins", "excluded.first_token_bins", 1)}`,
    ),
    deleteUserUsage: db.prepare<[string, string]>(
      `DELETE FROM usage_rollups WHERE account_id = ? AND user_id = ? AND level = '${USER_LEVEL}'`,
    ),
  };
}

/** One turn's values in the column order of `insertTurns`. */
type TurnParams = [
  id: string,
  conversationId: string,
  ...KeyParams,
  role: TurnRole,
  text: string,
  model: string | null,
  provider: string | null,
  inputTokens: number,
  outputTokens: number,
  latencyMs: number,
  finishReason: string | null,
  toolCalls: string | null,
  background: number,
  fallback: number,
  createdAt: string,
  messageJson: string,
  citations: string | null,
];

function turnParams(turn: TurnRecord, conversationId: string, citations: string | null): TurnParams {
  return [
    turn.id,
    conversationId,
    turn.accountId,
    turn.agentId,
    turn.userId,
    turn.roomId,
    turn.role,
    turn.text,
    turn.model,
    turn.provider,
    turn.inputTokens,
    turn.outputTokens,
    turn.latencyMs,
    turn.finishReason,
    toolCallsColumn(turn.toolCalls),
    turn.background ? 1 : 0,
    turn.fallback ? 1 : 0,
    turn.createdAt,
    storedMessageJson(asReadBack(turn, READ_BACK)),
    citations,
  ];
}

function callRow(call: CallRecord): SqliteCallRow {
  return {
    id: call.id,
    request_id: call.requestId,
    api_key_id: call.apiKeyId,
    account_id: call.accountId,
    agent_id: call.agentId,
    user_id: call.userId,
    room_id: call.roomId,
    provider: call.provider,
    model: call.model,
    stream: call.stream ? 1 : 0,
    outcome: call.outcome,
    error_code: call.errorCode,
    error_message: call.errorMessage,
    latency_ms: Math.round(call.latencyMs),
    first_token_ms: call.firstTokenMs === null ? null : Math.round(call.firstTokenMs),
    input_tokens: call.inputTokens,
    output_tokens: call.outputTokens,
    created_at: call.createdAt,
  };
}

function outboxRow(event: NewOutboxEvent): Omit<SqliteOutboxRow, "seq"> {
  return {
    event_id: event.id,
    type: event.type,
    account_id: event.accountId,
    agent_id: event.agentId,
    data: JSON.stringify(event.data),
    created_at: event.createdAt,
  };
}

/** Opens (creating when missing) `<dataDir>/conversation.db`. */
export function openSqliteConversationStore(options: { dataDir: string }): SqliteConversationStore {
  return new SqliteConversationStore(join(options.dataDir, CONVERSATION_DB_FILE));
}
