import { join } from "node:path";
import { type Limits, newId, SizedLru, type Tier } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { GroupCommit, openSqliteDatabase, watchOtherConnections } from "@agentry/sqlite";
import Database from "better-sqlite3";
import { linkRedeemable, sessionUsable } from "./console-sessions.js";
import { agentCreated, agentDeleted, agentStatusChanged, agentUpdated } from "./events.js";
import {
  agentAsCreated,
  apiKeyAsCreated,
  createdRecord,
  decideClaim,
  decideCreate,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type MadeUnderKey,
} from "./idempotency.js";
import { fts5Query } from "./knowledge.js";
import { nameOutboxEvents } from "./outbox-ids.js";
import { applyAgentPatch } from "./patch.js";
import { assertAgentQuota } from "./quota.js";
import { scopesColumn, scopesOfColumn } from "./scopes.js";
import { MIGRATION_TARGET } from "./sqlite-migrations.js";
import { applyHealthReport, newAgent } from "./status.js";
import type {
  AccountRecord,
  AgentFields,
  AgentPatch,
  AgentRecord,
  AgentSortField,
  AgentStatus,
  ApiKeyRecord,
  ConsoleLinkRecord,
  ConsoleSessionRecord,
  CreateUnderKey,
  IdempotencyBegin,
  JsonObject,
  KeyedCreate,
  ListAgentsQuery,
  NewApiKey,
  NewConsoleSession,
  NewOutboxEvent,
  OutboxChannel,
  OutboxEvent,
  Page,
  RegistryStore,
  StatusReason,
} from "./types.js";

export const REGISTRY_DB_FILE = "registry.db";

interface AccountRow {
  id: string;
  name: string;
  tier: Tier;
  limit_overrides: string;
  created_at: string;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  scopes: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

interface ConsoleLinkRow {
  account_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

interface ConsoleSessionRow {
  id: string;
  account_id: string;
  created_at: string;
  expires_at: string;
  idle_timeout_ms: number;
  last_seen_at: string;
  ended_at: string | null;
}

interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  bio: string;
  personality: string;
  knowledge: string;
  goals: string;
  clients: string;
  settings: string;
  model_provider: string | null;
  model: string | null;
  plugins: string;
  status: AgentStatus;
  status_reason: string | null;
  created_at: string;
  updated_at: string;
}

interface OutboxRow {
  seq: number;
  event_id: string | null;
  type: OutboxEvent["type"];
  account_id: string;
  agent_id: string;
  payload: string;
  created_at: string;
}

/** Named parameters of the agent statements, one per column. */
interface AgentBind {
  id: string;
  accountId: string;
  name: string;
  bio: string;
  personality: string;
  knowledge: string;
  goals: string;
  clients: string;
  settings: string;
  modelProvider: string | null;
  model: string | null;
  plugins: string;
  status: AgentStatus;
  statusReason: string | null;
  createdAt: string;
  updatedAt: string;
}

interface IdempotencyRow {
  account_id: string;
  key_hash: string;
  fingerprint: string;
  lease_until: number | null;
  expires_at: number;
  status: number | null;
  sealed: Buffer | null;
  resource_id: string | null;
  created_at: number | null;
  secret: Buffer | null;
}

/** Named parameters of the idempotency key statement, one per column. */
interface IdempotencyBind {
  accountId: string;
  keyHash: string;
  fingerprint: string;
  leaseUntil: number | null;
  expiresAt: number;
  status: number | null;
  sealed: Buffer | null;
  resourceId: string | null;
  createdAt: number | null;
  secret: Buffer | null;
}

function toIdempotencyRecord(row: IdempotencyRow): IdempotencyRecord {
  return {
    fingerprint: row.fingerprint,
    leaseUntil: row.lease_until,
    expiresAt: row.expires_at,
    status: row.status,
    sealed: row.sealed === null ? null : new Uint8Array(row.sealed),
    resourceId: row.resource_id,
    createdAt: row.created_at,
    secret: row.secret === null ? null : new Uint8Array(row.secret),
  };
}

function idempotencyBind(
  claim: Pick<IdempotencyClaim, "accountId" | "keyHash">,
  record: IdempotencyRecord,
): IdempotencyBind {
  return {
    accountId: claim.accountId,
    keyHash: claim.keyHash,
    fingerprint: record.fingerprint,
    leaseUntil: record.leaseUntil,
    expiresAt: record.expiresAt,
    status: record.status,
    sealed: record.sealed === null ? null : Buffer.from(record.sealed),
    resourceId: record.resourceId,
    createdAt: record.createdAt,
    secret: record.secret === null ? null : Buffer.from(record.secret),
  };
}

const SORT_COLUMN: Record<AgentSortField, string> = {
  createdAt: "created_at",
  name: "name",
  status: "status",
};

function now(): string {
  return new Date().toISOString();
}

function toAccount(row: AccountRow): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier,
    limitOverrides: JSON.parse(row.limit_overrides) as Partial<Limits>,
    createdAt: row.created_at,
  };
}

function toConsoleLink(row: ConsoleLinkRow): ConsoleLinkRecord {
  return {
    accountId: row.account_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}

function toConsoleSession(row: ConsoleSessionRow): ConsoleSessionRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    idleTimeoutMs: row.idle_timeout_ms,
    lastSeenAt: row.last_seen_at,
    endedAt: row.ended_at,
  };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    ...scopesOfColumn(JSON.parse(row.scopes) as string[]),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

/**
 * Characters of agent rows the store keeps from recent reads (about 16 MB of memory at most): thousands of
 * ordinary agents, or a few of the largest; the least recently read is dropped first.
 */
const AGENT_ROW_CACHE_CHARS = 8 * 1024 * 1024;

/** The characters of a row's text columns: what keeping it costs, give or take a few bytes per column. */
function rowChars(row: AgentRow): number {
  let chars = 0;
  for (const value of Object.values(row)) if (typeof value === "string") chars += value.length;
  return chars;
}

function toAgent(row: AgentRow): AgentRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    bio: JSON.parse(row.bio),
    personality: JSON.parse(row.personality),
    knowledge: JSON.parse(row.knowledge),
    goals: JSON.parse(row.goals),
    clients: JSON.parse(row.clients),
    settings: JSON.parse(row.settings),
    modelProvider: row.model_provider,
    model: row.model,
    plugins: JSON.parse(row.plugins),
    status: row.status,
    statusReason: row.status_reason === null ? null : (JSON.parse(row.status_reason) as StatusReason),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function agentBind(agent: AgentRecord): AgentBind {
  return {
    id: agent.id,
    accountId: agent.accountId,
    name: agent.name,
    bio: JSON.stringify(agent.bio),
    personality: JSON.stringify(agent.personality),
    knowledge: JSON.stringify(agent.knowledge),
    goals: JSON.stringify(agent.goals),
    clients: JSON.stringify(agent.clients),
    settings: JSON.stringify(agent.settings),
    modelProvider: agent.modelProvider,
    model: agent.model,
    plugins: JSON.stringify(agent.plugins),
    status: agent.status,
    statusReason: agent.statusReason === null ? null : JSON.stringify(agent.statusReason),
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}

interface ListBind {
  accountId: string;
  status: string | null;
  limit: number;
  offset: number;
}

function listKey(sortBy: AgentSortField, order: "asc" | "desc", filtered: boolean): string {
  return `${sortBy}:${order}:${filtered ? "status" : "all"}`;
}

function prepareStatements(db: Database.Database) {
  const prepare = <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
  // One statement per sort and per "filtered or not", so each can use its index (see the migrations). They read
  // the page's ids only: the rows come from the store's cache of agent rows, the missing ones in one more query.
  const list = new Map<string, Database.Statement<[ListBind], string>>();
  for (const sortBy of Object.keys(SORT_COLUMN) as AgentSortField[]) {
    for (const order of ["asc", "desc"] as const) {
      for (const filtered of [false, true]) {
        const where = filtered ? "account_id = @accountId AND status = @status" : "account_id = @accountId";
        const column = SORT_COLUMN[sortBy];
        list.set(
          listKey(sortBy, order, filtered),
          prepare<[ListBind], string>(
            `SELECT id FROM agents WHERE ${where}
             ORDER BY ${column} ${order}, id ${order} LIMIT @limit OFFSET @offset`,
          ).pluck(),
        );
      }
    }
  }
  return {
    list,
    accountById: prepare<[string], AccountRow>("SELECT * FROM accounts WHERE id = ?"),
    accountByName: prepare<[string], AccountRow>("SELECT * FROM accounts WHERE name = ?"),
    accounts: prepare<[], AccountRow>("SELECT * FROM accounts ORDER BY created_at, id"),
    insertAccount: prepare<[string, string, string, string, string]>(
      "INSERT INTO accounts (id, name, tier, limit_overrides, created_at) VALUES (?, ?, ?, ?, ?)",
    ),
    updateAccount: prepare<[string, string, string]>(
      "UPDATE accounts SET tier = ?, limit_overrides = ? WHERE id = ?",
    ),

    agent: prepare<[string, string], AgentRow>("SELECT * FROM agents WHERE account_id = ? AND id = ?"),
    agentsByIds: prepare<[string, string], AgentRow>(
      "SELECT * FROM agents WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
    ),
    // Kept by triggers in every write's transaction (migration 5): a row or three, whatever the account's size.
    countAgents: prepare<[string], number>(
      "SELECT coalesce(sum(n), 0) FROM agent_counts WHERE account_id = ?",
    ).pluck(),
    countAgentsWithStatus: prepare<[string, string], number>(
      "SELECT coalesce(sum(n), 0) FROM agent_counts WHERE account_id = ? AND status = ?",
    ).pluck(),
    insertAgent: prepare<[AgentBind]>(
      `INSERT INTO agents (id, account_id, name, bio, personality, knowledge, goals, clients, settings,
         model_provider, model, plugins, status, status_reason, created_at, updated_at)
       VALUES (@id, @accountId, @name, @bio, @personality, @knowledge, @goals, @clients, @settings,
         @modelProvider, @model, @plugins, @status, @statusReason, @createdAt, @updatedAt)`,
    ),
    updateAgent: prepare<[AgentBind]>(
      `UPDATE agents SET name = @name, bio = @bio, personality = @personality, knowledge = @knowledge,
         goals = @goals, clients = @clients, settings = @settings, model_provider = @modelProvider,
         model = @model, plugins = @plugins, status = @status, status_reason = @statusReason,
         updated_at = @updatedAt
       WHERE account_id = @accountId AND id = @id`,
    ),
    deleteAgent: prepare<[string, string]>("DELETE FROM agents WHERE account_id = ? AND id = ?"),

    agentExists: prepare<[string, string], number>(
      "SELECT 1 FROM agents WHERE account_id = ? AND id = ?",
    ).pluck(),
    putSecret: prepare<[string, string, string, string]>(
      `INSERT INTO agent_secrets (agent_id, name, sealed, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (agent_id, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
    ),
    secrets: prepare<[string], { name: string; updated_at: string }>(
      "SELECT name, updated_at FROM agent_secrets WHERE agent_id = ? ORDER BY name",
    ),
    sealedSecrets: prepare<[string], { name: string; sealed: string }>(
      "SELECT name, sealed FROM agent_secrets WHERE agent_id = ?",
    ),
    deleteSecret: prepare<[string, string]>("DELETE FROM agent_secrets WHERE agent_id = ? AND name = ?"),
    searchKnowledge: prepare<[string, number], { position: number; text: string }>(
      `SELECT e.position AS position, e.text AS text FROM knowledge_index
       JOIN knowledge_entries AS e ON e.id = knowledge_index.rowid
       WHERE knowledge_index MATCH ? ORDER BY bm25(knowledge_index), e.position LIMIT ?`,
    ),

    insertApiKey: prepare<[string, string, string, string, string, string, string, string | null]>(
      `INSERT INTO api_keys (id, account_id, name, sha256, prefix, scopes, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    apiKey: prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE id = ?"),
    apiKeyBySha256: prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE sha256 = ?"),
    apiKeys: prepare<[string], ApiKeyRow>(
      "SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id",
    ),
    revokeApiKey: prepare<[string, string]>(
      "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    ),
    insertConsoleLink: prepare<[string, string, string, string]>(
      "INSERT INTO console_links (sha256, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
    ),
    consoleLink: prepare<[string], ConsoleLinkRow>("SELECT * FROM console_links WHERE sha256 = ?"),
    useConsoleLink: prepare<[string, string]>("UPDATE console_links SET used_at = ? WHERE sha256 = ?"),
    insertConsoleSession: prepare<[string, string, string, string, string, number, string]>(
      `INSERT INTO console_sessions (sha256, id, account_id, created_at, expires_at, idle_timeout_ms, last_seen_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    consoleSession: prepare<[string], ConsoleSessionRow>("SELECT * FROM console_sessions WHERE sha256 = ?"),
    touchConsoleSession: prepare<[string, string]>(
      "UPDATE console_sessions SET last_seen_at = ? WHERE sha256 = ?",
    ),
    endConsoleSession: prepare<[string, string]>(
      "UPDATE console_sessions SET ended_at = coalesce(ended_at, ?) WHERE sha256 = ?",
    ),
    deleteExpiredConsoleLinks: prepare<[string, number]>(
      `DELETE FROM console_links WHERE sha256 IN (
         SELECT sha256 FROM console_links WHERE expires_at <= ? LIMIT ?)`,
    ),
    deleteExpiredConsoleSessions: prepare<[string, number]>(
      `DELETE FROM console_sessions WHERE sha256 IN (
         SELECT sha256 FROM console_sessions WHERE expires_at <= ? OR ended_at IS NOT NULL LIMIT ?)`,
    ),
    touchApiKey: prepare<[{ id: string; at: string }]>(
      "UPDATE api_keys SET last_used_at = @at WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @at)",
    ),

    insertEvent: prepare<[string, string, string, string, string, string]>(
      "INSERT INTO outbox (event_id, type, account_id, agent_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    // One statement per channel, each reading its own column (and partial index).
    unpublished: {
      conversation: prepare<[number], OutboxRow>(
        `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM outbox
         WHERE published_at IS NULL ORDER BY seq LIMIT ?`,
      ),
      webhooks: prepare<[number], OutboxRow>(
        `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM outbox
         WHERE webhooks_published_at IS NULL ORDER BY seq LIMIT ?`,
      ),
    } satisfies Record<OutboxChannel, unknown>,
    markPublished: {
      conversation: prepare<[string, number]>(
        "UPDATE outbox SET published_at = ? WHERE seq = ? AND published_at IS NULL",
      ),
      webhooks: prepare<[string, number]>(
        "UPDATE outbox SET webhooks_published_at = ? WHERE seq = ? AND webhooks_published_at IS NULL",
      ),
    } satisfies Record<OutboxChannel, unknown>,
    nameEvent: prepare<[string, number]>("UPDATE outbox SET event_id = ? WHERE seq = ? AND event_id IS NULL"),
    eventId: prepare<[number], string>("SELECT event_id FROM outbox WHERE seq = ?").pluck(),

    idempotencyKey: prepare<[string, string], IdempotencyRow>(
      "SELECT * FROM idempotency_keys WHERE account_id = ? AND key_hash = ?",
    ),
    writeIdempotencyKey: prepare<[IdempotencyBind]>(
      `INSERT INTO idempotency_keys
         (account_id, key_hash, fingerprint, lease_until, expires_at, status, sealed, resource_id, created_at, secret)
       VALUES (@accountId, @keyHash, @fingerprint, @leaseUntil, @expiresAt, @status, @sealed, @resourceId, @createdAt,
         @secret)
       ON CONFLICT (account_id, key_hash) DO UPDATE SET
         fingerprint = excluded.fingerprint, lease_until = excluded.lease_until, expires_at = excluded.expires_at,
         status = excluded.status, sealed = excluded.sealed, resource_id = excluded.resource_id,
         created_at = excluded.created_at, secret = excluded.secret`,
    ),
    completeIdempotencyKey: prepare<[number, Buffer | null, string | null, string, string]>(
      `UPDATE idempotency_keys SET lease_until = NULL, status = ?, sealed = coalesce(?, sealed),
         resource_id = coalesce(?, resource_id)
       WHERE account_id = ? AND key_hash = ? AND (status IS NULL OR (resource_id IS NOT NULL AND sealed IS NULL))`,
    ),
    releaseIdempotencyKey: prepare<[string, string]>(
      "DELETE FROM idempotency_keys WHERE account_id = ? AND key_hash = ? AND status IS NULL",
    ),
    deleteExpiredIdempotencyKeys: prepare<[number, number]>(
      `DELETE FROM idempotency_keys WHERE (account_id, key_hash) IN (
         SELECT account_id, key_hash FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
    ),
  };
}

/**
 * The registry in one SQLite file. better-sqlite3 is synchronous, so every method runs to completion inside one
 * call; transactions that read before they write take the write lock first (BEGIN IMMEDIATE), which makes them
 * serial across every connection and process sharing the file.
 */
function sqliteRegistryStore(db: Database.Database): RegistryStore {
  const sql = prepareStatements(db);

  // The rows of recently read agents, so that reading one again (every GET of it, every message to it) costs no
  // query: a row is dropped when this store changes the agent, and all of them whenever another connection (a
  // process sharing the file) has committed since the last look.
  const agentRows = new SizedLru<string, AgentRow>(AGENT_ROW_CACHE_CHARS);
  const othersCommitted = watchOtherConnections(db);
  /** The account's agent's row if the cache has it; `forgetIfStale` first, once per read. */
  const cachedRow = (accountId: string, id: string): AgentRow | undefined => {
    const cached = agentRows.get(id);
    return cached?.account_id === accountId ? cached : undefined;
  };
  const forgetIfStale = () => {
    if (othersCommitted()) agentRows.clear();
  };
  const readAgentRow = (accountId: string, id: string): AgentRow | undefined => {
    forgetIfStale();
    const cached = cachedRow(accountId, id);
    if (cached) return cached;
    const row = sql.agent.get(accountId, id);
    if (row) agentRows.set(id, row, rowChars(row));
    return row;
  };
  /** The rows of `ids` in their order, from the cache where it has them and in one query for the others. */
  const pageRows = (accountId: string, ids: readonly string[]): AgentRow[] => {
    forgetIfStale();
    const rows = ids.map((id) => cachedRow(accountId, id));
    const missing = ids.filter((_, i) => rows[i] === undefined);
    if (missing.length > 0) {
      const read = new Map<string, AgentRow>();
      for (const row of sql.agentsByIds.all(accountId, JSON.stringify(missing))) {
        read.set(row.id, row);
        agentRows.set(row.id, row, rowChars(row));
      }
      ids.forEach((id, i) => {
        rows[i] ??= read.get(id);
      });
    }
    return rows.filter((row): row is AgentRow => row !== undefined);
  };
  /** Runs a write of one agent; its cached row goes once it is done, whatever the outcome. */
  const changingAgent = async <T>(id: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } finally {
      agentRows.delete(id);
    }
  };
  // The writes of concurrent requests share a commit (and its wait for the disk); each is answered after it.
  const group = new GroupCommit(db);
  /**
   * Writes a power loss may take back without much harm, committed without waiting for the disk when nothing
   * else waits with them (they still survive the process being killed): a key's last use, and an Idempotency-Key's
   * claim and stored answer. After a power loss a retry with the key runs its request again, except a create,
   * which finds the agent its key was stored with in the create's own (durable) transaction.
   */
  const BOOKKEEPING = { durable: false };

  const emit = (events: readonly NewOutboxEvent[]) => {
    for (const event of events) {
      sql.insertEvent.run(
        event.id,
        event.type,
        event.accountId,
        event.agentId,
        JSON.stringify(event.payload),
        now(),
      );
    }
  };

  const insertAgent = (accountId: string, fields: AgentFields): AgentRecord => {
    const account = sql.accountById.get(accountId);
    if (!account) throw new AppError("UNAUTHORIZED", `Account ${accountId} does not exist.`);
    assertAgentQuota(toAccount(account), sql.countAgents.get(accountId) ?? 0);
    const agent = newAgent(accountId, fields, now());
    sql.insertAgent.run(agentBind(agent));
    emit(agentCreated(agent));
    return agent;
  };

  const createAgent = db.transaction(
    (accountId: string, fields: AgentFields, idempotencyKeyHash: string | undefined): AgentRecord => {
      const agent = insertAgent(accountId, fields);
      if (idempotencyKeyHash)
        sql.completeIdempotencyKey.run(201, null, agent.id, accountId, idempotencyKeyHash);
      return agent;
    },
  );

  /**
   * Decides a create under `key` (`decideCreate`), then runs `create` and writes the key's finished record with
   * it, or answers what the key's own create made (`replay`) or kept.
   */
  const underKey = <T>(
    accountId: string,
    key: CreateUnderKey,
    create: () => { created: T; record: { id: string; createdAt: string }; secret?: Uint8Array },
    replay: (made: MadeUnderKey) => T,
  ): KeyedCreate<T> => {
    const row = sql.idempotencyKey.get(accountId, key.keyHash);
    const at = Date.now();
    const decision = decideCreate(row ? toIdempotencyRecord(row) : null, { ...key, accountId }, at);
    if (decision === "create") {
      const { created, record, secret } = create();
      const finished = createdRecord(key.fingerprint, record, at, secret ?? null);
      sql.writeIdempotencyKey.run(idempotencyBind({ accountId, keyHash: key.keyHash }, finished));
      return { outcome: "created", created };
    }
    if (decision.outcome === "stored") return decision;
    return { outcome: "replayed", created: replay(decision.made) };
  };

  const createAgentUnderKey = db.transaction(
    (accountId: string, fields: AgentFields, key: CreateUnderKey): KeyedCreate<AgentRecord> =>
      underKey(
        accountId,
        key,
        () => {
          const agent = insertAgent(accountId, fields);
          return { created: agent, record: agent };
        },
        (made) =>
          agentAsCreated(made, accountId, fields, (id) => {
            const agent = readAgentRow(accountId, id);
            return agent ? toAgent(agent) : null;
          }),
      ),
  );

  const beginIdempotentRequest = db.transaction((claim: IdempotencyClaim): IdempotencyBegin => {
    const row = sql.idempotencyKey.get(claim.accountId, claim.keyHash);
    const decision = decideClaim(row ? toIdempotencyRecord(row) : null, claim, Date.now());
    if (decision.write) sql.writeIdempotencyKey.run(idempotencyBind(claim, decision.write));
    return decision.answer;
  });

  const listAgents = db.transaction((accountId: string, query: ListAgentsQuery): Page<AgentRecord> => {
    const { status } = query;
    const statement = sql.list.get(listKey(query.sortBy, query.order, status !== undefined));
    if (!statement) throw new Error(`unsupported sort ${query.sortBy} ${query.order}`);
    const offset = (query.page - 1) * query.limit;
    const ids = statement.all({ accountId, status: status ?? null, limit: query.limit, offset });
    const total =
      (status === undefined
        ? sql.countAgents.get(accountId)
        : sql.countAgentsWithStatus.get(accountId, status)) ?? 0;
    return { items: pageRows(accountId, ids).map(toAgent), total };
  });

  const updateAgent = db.transaction((accountId: string, id: string, patch: AgentPatch) => {
    const row = sql.agent.get(accountId, id);
    if (!row) return null;
    const before = toAgent(row);
    const after = applyAgentPatch(before, patch, now());
    sql.updateAgent.run(agentBind(after));
    emit(agentUpdated(before, after));
    return after;
  });

  const reportAgentHealth = db.transaction(
    (accountId: string, id: string, failure: StatusReason | null): AgentRecord | null => {
      const row = sql.agent.get(accountId, id);
      if (!row) return null;
      const before = toAgent(row);
      const after = applyHealthReport(before, failure, now());
      if (!after) return before;
      sql.updateAgent.run(agentBind(after));
      emit(agentStatusChanged(before, after));
      return after;
    },
  );

  const deleteAgent = db.transaction((accountId: string, id: string): boolean => {
    // Its secrets (foreign key) and knowledge index (trigger) go with it; other stores purge their data from
    // agent.deleted.
    const { changes } = sql.deleteAgent.run(accountId, id);
    if (changes === 0) return false;
    emit(agentDeleted(accountId, id));
    return true;
  });

  const updateAccount = db.transaction(
    (id: string, change: { tier?: Tier; limitOverrides?: Partial<Limits> }): AccountRecord | null => {
      const row = sql.accountById.get(id);
      if (!row) return null;
      const before = toAccount(row);
      const after: AccountRecord = {
        ...before,
        tier: change.tier ?? before.tier,
        limitOverrides: { ...(change.limitOverrides ?? before.limitOverrides) },
      };
      sql.updateAccount.run(after.tier, JSON.stringify(after.limitOverrides), id);
      return after;
    },
  );

  const insertApiKey = (input: NewApiKey): ApiKeyRecord => {
    if (!sql.accountById.get(input.accountId)) {
      throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
    }
    const scopes = scopesColumn(input.scopes);
    const key: ApiKeyRecord = {
      id: newId("key"),
      accountId: input.accountId,
      name: input.name,
      prefix: input.prefix,
      ...scopesOfColumn(scopes),
      createdAt: now(),
      lastUsedAt: null,
      expiresAt: input.expiresAt,
      revokedAt: null,
    };
    sql.insertApiKey.run(
      key.id,
      key.accountId,
      key.name,
      input.sha256,
      key.prefix,
      JSON.stringify(scopes),
      key.createdAt,
      key.expiresAt,
    );
    return key;
  };

  const createApiKey = db.transaction(insertApiKey);

  const createApiKeyUnderKey = db.transaction(
    (input: NewApiKey, key: CreateUnderKey & { secret: Uint8Array }) =>
      underKey(
        input.accountId,
        key,
        () => {
          const apiKey = insertApiKey(input);
          return { created: { apiKey, secret: key.secret }, record: apiKey, secret: key.secret };
        },
        (made) => ({
          apiKey: apiKeyAsCreated(made, (id) => {
            const row = sql.apiKey.get(id);
            return row?.account_id === input.accountId ? toApiKey(row) : null;
          }),
          secret: made.secret ?? new Uint8Array(),
        }),
      ),
  );

  const revokeApiKey = db.transaction((id: string, accountId: string | undefined): ApiKeyRecord | null => {
    const row = sql.apiKey.get(id);
    if (!row || (accountId !== undefined && row.account_id !== accountId)) return null;
    sql.revokeApiKey.run(now(), id);
    const revoked = sql.apiKey.get(id);
    return revoked ? toApiKey(revoked) : null;
  });

  const findApiKey = db.transaction((sha256: string) => {
    const row = sql.apiKeyBySha256.get(sha256);
    if (!row) return null;
    const account = sql.accountById.get(row.account_id);
    return account ? { key: toApiKey(row), account: toAccount(account) } : null;
  });

  const touchApiKeys = db.transaction((lastUsed: ReadonlyMap<string, string>) => {
    for (const [id, at] of lastUsed) {
      // Normalised so that comparing the text in SQL compares the times.
      sql.touchApiKey.run({ id, at: new Date(at).toISOString() });
    }
  });

  const redeemConsoleLink = db.transaction((linkSha256: string, input: NewConsoleSession) => {
    const row = sql.consoleLink.get(linkSha256);
    const at = now();
    if (!row || !linkRedeemable(toConsoleLink(row), Date.parse(at))) return null;
    const account = sql.accountById.get(row.account_id);
    if (!account) return null;
    sql.useConsoleLink.run(at, linkSha256);
    const session: ConsoleSessionRecord = {
      id: newId("session"),
      accountId: row.account_id,
      createdAt: at,
      expiresAt: new Date(input.expiresAt).toISOString(),
      idleTimeoutMs: input.idleTimeoutMs,
      lastSeenAt: at,
      endedAt: null,
    };
    sql.insertConsoleSession.run(
      input.sha256,
      session.id,
      session.accountId,
      session.createdAt,
      session.expiresAt,
      session.idleTimeoutMs,
      session.lastSeenAt,
    );
    return { session, account: toAccount(account) };
  });

  const useConsoleSession = db.transaction((sha256: string) => {
    const row = sql.consoleSession.get(sha256);
    if (!row) return null;
    const account = sql.accountById.get(row.account_id);
    if (!account) return null;
    const session = toConsoleSession(row);
    const at = now();
    if (sessionUsable(session, Date.parse(at))) {
      sql.touchConsoleSession.run(at, sha256);
      session.lastSeenAt = at;
    }
    return { session, account: toAccount(account) };
  });

  const markPublished = db.transaction((channel: OutboxChannel, seqs: number[]) => {
    const at = now();
    for (const seq of seqs) sql.markPublished[channel].run(at, seq);
  });
  /** Rows an older version wrote without an event id get one, the first reader's. */
  const nameEvents = db.transaction((rows: OutboxRow[]) => {
    for (const [seq, id] of nameOutboxEvents(rows)) sql.nameEvent.run(id, seq);
    for (const row of rows) row.event_id = sql.eventId.get(row.seq) ?? null;
  });

  return {
    async createAgent(accountId, fields, options) {
      return group.run(() => createAgent(accountId, fields, options?.idempotencyKeyHash));
    },
    async createAgentUnderKey(accountId, fields, key) {
      return group.run(() => createAgentUnderKey(accountId, fields, key));
    },
    async getAgent(accountId, id) {
      const row = readAgentRow(accountId, id);
      return row ? toAgent(row) : null;
    },
    async listAgents(accountId, query) {
      // A read transaction, so the page and the total come from one snapshot.
      return listAgents.deferred(accountId, query);
    },
    async updateAgent(accountId, id, patch) {
      return changingAgent(id, () => group.run(() => updateAgent(accountId, id, patch)));
    },
    async reportAgentHealth(accountId, id, failure) {
      return changingAgent(id, () => group.run(() => reportAgentHealth(accountId, id, failure)));
    },
    async deleteAgent(accountId, id) {
      return changingAgent(id, () => group.run(() => deleteAgent(accountId, id)));
    },

    async createAccount(input) {
      const account: AccountRecord = {
        id: newId("account"),
        name: input.name,
        tier: input.tier,
        limitOverrides: { ...input.limitOverrides },
        createdAt: now(),
      };
      try {
        sql.insertAccount.run(
          account.id,
          account.name,
          account.tier,
          JSON.stringify(account.limitOverrides),
          account.createdAt,
        );
      } catch (error) {
        if (error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE") {
          throw new AppError("INVALID_REQUEST", `an account named ${input.name} already exists`);
        }
        throw error;
      }
      return account;
    },
    async getAccount(id) {
      const row = sql.accountById.get(id);
      return row ? toAccount(row) : null;
    },
    async updateAccount(id, change) {
      return updateAccount.immediate(id, change);
    },
    async getAccountByName(name) {
      const row = sql.accountByName.get(name);
      return row ? toAccount(row) : null;
    },
    async listAccounts() {
      return sql.accounts.all().map(toAccount);
    },

    async createApiKey(input) {
      return group.run(() => createApiKey(input));
    },
    async createApiKeyUnderKey(input, key) {
      return group.run(() => createApiKeyUnderKey(input, key));
    },
    async listApiKeys(accountId) {
      return sql.apiKeys.all(accountId).map(toApiKey);
    },
    async revokeApiKey(id, accountId) {
      return group.run(() => revokeApiKey(id, accountId));
    },
    async findApiKeyBySha256(sha256) {
      return findApiKey.deferred(sha256);
    },
    async touchApiKeys(lastUsed) {
      if (lastUsed.size > 0) await group.run(() => touchApiKeys(lastUsed), BOOKKEEPING);
    },

    async createConsoleLink(input) {
      if (!sql.accountById.get(input.accountId)) {
        throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
      }
      sql.insertConsoleLink.run(
        input.sha256,
        input.accountId,
        now(),
        new Date(input.expiresAt).toISOString(),
      );
    },
    async redeemConsoleLink(linkSha256, session) {
      return redeemConsoleLink.immediate(linkSha256, session);
    },
    async useConsoleSession(sha256) {
      return useConsoleSession.immediate(sha256);
    },
    async deleteExpiredConsoleSessions(limit) {
      const at = now();
      return (
        sql.deleteExpiredConsoleLinks.run(at, limit).changes +
        sql.deleteExpiredConsoleSessions.run(at, limit).changes
      );
    },
    async endConsoleSession(sha256) {
      return sql.endConsoleSession.run(now(), sha256).changes > 0;
    },

    async beginIdempotentRequest(claim) {
      return group.run(() => beginIdempotentRequest(claim), BOOKKEEPING);
    },
    async completeIdempotentRequest(accountId, keyHash, response) {
      await group.run(
        () =>
          sql.completeIdempotencyKey.run(
            response.status,
            Buffer.from(response.sealed),
            null,
            accountId,
            keyHash,
          ),
        BOOKKEEPING,
      );
    },
    async releaseIdempotentRequest(accountId, keyHash) {
      await group.run(() => sql.releaseIdempotencyKey.run(accountId, keyHash), BOOKKEEPING);
    },
    async deleteExpiredIdempotencyKeys(limit) {
      return sql.deleteExpiredIdempotencyKeys.run(Date.now(), limit).changes;
    },

    async unpublishedEvents(channel, limit) {
      const rows = sql.unpublished[channel].all(limit);
      const unnamed = rows.filter((row) => row.event_id === null);
      if (unnamed.length > 0) nameEvents.immediate(unnamed);
      return rows.map((row) => ({
        seq: row.seq,
        id: row.event_id!,
        type: row.type,
        accountId: row.account_id,
        agentId: row.agent_id,
        payload: JSON.parse(row.payload) as JsonObject,
        createdAt: row.created_at,
      }));
    },
    async markEventsPublished(channel, seqs) {
      if (seqs.length > 0) markPublished.immediate(channel, seqs);
    },

    async putAgentSecret(accountId, agentId, name, sealed) {
      const put = db.transaction(() => {
        if (!sql.agentExists.get(accountId, agentId)) return null;
        const updatedAt = now();
        sql.putSecret.run(agentId, name, sealed, updatedAt);
        return { name, updatedAt };
      });
      return group.run(put);
    },
    async listAgentSecrets(accountId, agentId) {
      const list = db.transaction(() => {
        if (!sql.agentExists.get(accountId, agentId)) return null;
        return sql.secrets.all(agentId).map((row) => ({ name: row.name, updatedAt: row.updated_at }));
      });
      return list();
    },
    async deleteAgentSecret(accountId, agentId, name) {
      const remove = db.transaction(() => {
        if (!sql.agentExists.get(accountId, agentId)) return null;
        return sql.deleteSecret.run(agentId, name).changes > 0;
      });
      return group.run(remove);
    },
    async sealedAgentSecrets(accountId, agentId, names) {
      const read = db.transaction(() => {
        if (!sql.agentExists.get(accountId, agentId)) return null;
        const wanted = new Set(names);
        const found: Record<string, string> = {};
        for (const row of sql.sealedSecrets.all(agentId))
          if (wanted.has(row.name)) found[row.name] = row.sealed;
        return found;
      });
      return read();
    },
    async searchKnowledge(accountId, agentId, words, limit) {
      if (!readAgentRow(accountId, agentId)) return null;
      if (words.length === 0) return [];
      return sql.searchKnowledge
        .all(fts5Query(agentId, words), limit)
        .map((row) => ({ index: row.position, text: row.text }));
    },

    async close() {
      group.flushNow();
      if (db.open) db.close();
    },
  };
}

/** Opens (creating if needed) the registry database at `<dataDir>/registry.db`. */
export function openSqliteRegistryStore(options: { dataDir: string }): RegistryStore {
  return sqliteRegistryStore(openSqliteDatabase(join(options.dataDir, REGISTRY_DB_FILE), MIGRATION_TARGET));
}
