import { type AuditStamp, currentAuditStamp, deepFrozen, newAuditEvent, SizedLru } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { type GroupCommit, type SqliteAuditLog, watchOtherConnections } from "@agentry/sqlite";
import type Database from "better-sqlite3";
import { agentAudit, secretAudit } from "../audit.js";
import { agentCreated, agentDeleted, agentStatusChanged, agentUpdated } from "../events.js";
import { agentAsCreated } from "../idempotency.js";
import { fts5Query } from "../knowledge.js";
import { applyAgentPatch } from "../patch.js";
import { assertVersion } from "../precondition.js";
import { assertAgentQuota } from "../quota.js";
import { applyHealthReport, newAgent } from "../status.js";
import type {
  AgentFields,
  AgentPatch,
  AgentRecord,
  AgentSortField,
  AgentStatus,
  AgentStore,
  CreateUnderKey,
  KeyedCreate,
  ListAgentsQuery,
  Page,
  StatusReason,
} from "../types.js";
import { type sqliteAccounts, toAccount } from "./accounts.js";
import type { sqliteIdempotency } from "./idempotency.js";
import type { sqliteOutbox } from "./outbox.js";
import { now, preparer } from "./shared.js";

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

const SORT_COLUMN: Record<AgentSortField, string> = {
  createdAt: "created_at",
  name: "name",
  status: "status",
};

/**
 * Characters of agent rows the store keeps, as records, from recent reads (about 20 MB of memory at most):
 * thousands of ordinary agents, or a few of the largest; the least recently read is dropped first.
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

/** Pages kept at most (each about 20 ids); all are dropped when there would be more. */
const KEPT_PAGES = 1024;

/** What names a page of `listAgents`: the account and the whole query. */
function pageKey(accountId: string, query: ListAgentsQuery): string {
  return `${accountId} ${query.sortBy} ${query.order} ${query.status ?? ""} ${query.page} ${query.limit}`;
}

function listKey(sortBy: AgentSortField, order: "asc" | "desc", filtered: boolean): string {
  return `${sortBy}:${order}:${filtered ? "status" : "all"}`;
}

/**
 * Agents, their secrets and the index of their knowledge. A create checks the account's quota (`accountById`),
 * and every write emits its event (`emit`), in the write's transaction; a create under an Idempotency-Key writes
 * the key's record in it too (`underKey`, `completeIdempotencyKey`).
 */
export function sqliteAgents(
  db: Database.Database,
  group: GroupCommit,
  { accountById }: Pick<ReturnType<typeof sqliteAccounts>, "accountById">,
  { emit }: Pick<ReturnType<typeof sqliteOutbox>, "emit">,
  {
    underKey,
    completeIdempotencyKey,
  }: Pick<ReturnType<typeof sqliteIdempotency>, "underKey" | "completeIdempotencyKey">,
  audit: SqliteAuditLog,
): AgentStore {
  const prepare = preparer(db);
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
  const sql = {
    list,
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
  };

  // The agents recently read, as records, so that reading one again (every GET of it, every page it is on, every
  // message to it) costs no query and no parse of its JSON columns: an agent is dropped when this store changes
  // it, and all of them whenever another connection (a process sharing the file) has committed since the last
  // look. A record is frozen, since every reader of it shares it.
  const agents = new SizedLru<string, AgentRecord>(AGENT_ROW_CACHE_CHARS);
  const othersCommitted = watchOtherConnections(db);
  /** The account's agent if the cache has it; `forgetIfStale` first, once per read. */
  const cachedAgent = (accountId: string, id: string): AgentRecord | undefined => {
    const cached = agents.get(id);
    return cached?.accountId === accountId ? cached : undefined;
  };
  // The pages recently listed (their agents' ids and the account's count), by query, so that listing a page
  // again costs no query: every write of an agent by this store drops them all (a create, a change or a delete
  // can move any page and count), as does another connection's commit.
  const pages = new Map<string, Page<string>>();
  const forgetIfStale = () => {
    if (othersCommitted()) {
      agents.clear();
      pages.clear();
    }
  };
  const keep = (row: AgentRow): AgentRecord => {
    const agent = deepFrozen(toAgent(row));
    agents.set(row.id, agent, rowChars(row));
    return agent;
  };
  const readAgent = (accountId: string, id: string): AgentRecord | null => {
    forgetIfStale();
    const cached = cachedAgent(accountId, id);
    if (cached) return cached;
    const row = sql.agent.get(accountId, id);
    return row ? keep(row) : null;
  };
  /**
   * The agents of `ids` in their order, from the cache where it has them and in one query for the others;
   * `forgetIfStale` first.
   */
  const pageAgents = (accountId: string, ids: readonly string[]): AgentRecord[] => {
    const found = ids.map((id) => cachedAgent(accountId, id));
    const missing = ids.filter((_, i) => found[i] === undefined);
    if (missing.length > 0) {
      const read = new Map<string, AgentRecord>();
      for (const row of sql.agentsByIds.all(accountId, JSON.stringify(missing))) read.set(row.id, keep(row));
      ids.forEach((id, i) => {
        found[i] ??= read.get(id);
      });
    }
    return found.filter((agent): agent is AgentRecord => agent !== undefined);
  };
  /**
   * Runs a write of agents (of the one of `id`); the kept pages, and its cached record, go once it is done,
   * whatever the outcome, so that a page read while the write was under way is not kept past it.
   */
  const changingAgent = async <T>(id: string | undefined, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } finally {
      if (id !== undefined) agents.delete(id);
      pages.clear();
    }
  };

  const insertAgent = (accountId: string, fields: AgentFields, stamp: AuditStamp | null): AgentRecord => {
    const account = accountById.get(accountId);
    if (!account) throw new AppError("UNAUTHORIZED", `Account ${accountId} does not exist.`);
    assertAgentQuota(toAccount(account), sql.countAgents.get(accountId) ?? 0);
    const agent = newAgent(accountId, fields, now());
    sql.insertAgent.run(agentBind(agent));
    emit(agentCreated(agent));
    audit.record(accountId, newAuditEvent(agentAudit.create(agent), stamp));
    return agent;
  };

  const createAgent = db.transaction(
    (
      accountId: string,
      fields: AgentFields,
      idempotencyKeyHash: string | undefined,
      stamp: AuditStamp | null,
    ): AgentRecord => {
      const agent = insertAgent(accountId, fields, stamp);
      if (idempotencyKeyHash) completeIdempotencyKey.run(201, null, agent.id, accountId, idempotencyKeyHash);
      return agent;
    },
  );

  const createAgentUnderKey = db.transaction(
    (
      accountId: string,
      fields: AgentFields,
      key: CreateUnderKey,
      stamp: AuditStamp | null,
    ): KeyedCreate<AgentRecord> =>
      underKey(
        accountId,
        key,
        () => {
          const agent = insertAgent(accountId, fields, stamp);
          return { created: agent, record: agent };
        },
        (made) => agentAsCreated(made, accountId, fields, (id) => readAgent(accountId, id)),
      ),
  );

  const listAgents = db.transaction((accountId: string, query: ListAgentsQuery): Page<AgentRecord> => {
    forgetIfStale();
    const { status } = query;
    const key = pageKey(accountId, query);
    const kept = pages.get(key);
    if (kept) return { items: pageAgents(accountId, kept.items), total: kept.total };
    const statement = sql.list.get(listKey(query.sortBy, query.order, status !== undefined));
    if (!statement) throw new Error(`unsupported sort ${query.sortBy} ${query.order}`);
    const offset = (query.page - 1) * query.limit;
    const ids = statement.all({ accountId, status: status ?? null, limit: query.limit, offset });
    const total =
      (status === undefined
        ? sql.countAgents.get(accountId)
        : sql.countAgentsWithStatus.get(accountId, status)) ?? 0;
    if (pages.size >= KEPT_PAGES) pages.clear();
    pages.set(key, { items: ids, total });
    return { items: pageAgents(accountId, ids), total };
  });

  const updateAgent = db.transaction(
    (
      accountId: string,
      id: string,
      patch: AgentPatch,
      expectedUpdatedAt: string | undefined,
      stamp: AuditStamp | null,
    ) => {
      const row = sql.agent.get(accountId, id);
      if (!row) return null;
      const before = toAgent(row);
      assertVersion(before, expectedUpdatedAt);
      const after = applyAgentPatch(before, patch, now());
      sql.updateAgent.run(agentBind(after));
      emit(agentUpdated(before, after));
      audit.record(accountId, newAuditEvent(agentAudit.update(before, after), stamp));
      return after;
    },
  );

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

  const deleteAgent = db.transaction(
    (
      accountId: string,
      id: string,
      expectedUpdatedAt: string | undefined,
      stamp: AuditStamp | null,
    ): boolean => {
      if (expectedUpdatedAt !== undefined) {
        const row = sql.agent.get(accountId, id);
        if (!row) return false;
        assertVersion(toAgent(row), expectedUpdatedAt);
      }
      // Its secrets (foreign key) and knowledge index (trigger) go with it; other stores purge their data from
      // agent.deleted.
      const { changes } = sql.deleteAgent.run(accountId, id);
      if (changes === 0) return false;
      emit(agentDeleted(accountId, id));
      audit.record(accountId, newAuditEvent(agentAudit.delete(id), stamp));
      return true;
    },
  );

  return {
    async createAgent(accountId, fields, options) {
      const stamp = currentAuditStamp();
      return changingAgent(undefined, () =>
        group.run(() => createAgent(accountId, fields, options?.idempotencyKeyHash, stamp)),
      );
    },
    async createAgentUnderKey(accountId, fields, key) {
      const stamp = currentAuditStamp();
      return changingAgent(undefined, () =>
        group.run(() => createAgentUnderKey(accountId, fields, key, stamp)),
      );
    },
    async getAgent(accountId, id) {
      return readAgent(accountId, id);
    },
    async listAgents(accountId, query) {
      forgetIfStale();
      // A page kept is read without a transaction: its ids and count are current, and so are its records.
      const kept = pages.get(pageKey(accountId, query));
      if (kept) return { items: pageAgents(accountId, kept.items), total: kept.total };
      // A read transaction, so the page and the total come from one snapshot.
      return listAgents.deferred(accountId, query);
    },
    async updateAgent(accountId, id, patch, expectedUpdatedAt) {
      const stamp = currentAuditStamp();
      return changingAgent(id, () =>
        group.run(() => updateAgent(accountId, id, patch, expectedUpdatedAt, stamp)),
      );
    },
    async reportAgentHealth(accountId, id, failure) {
      return changingAgent(id, () => group.run(() => reportAgentHealth(accountId, id, failure)));
    },
    async deleteAgent(accountId, id, expectedUpdatedAt) {
      const stamp = currentAuditStamp();
      return changingAgent(id, () => group.run(() => deleteAgent(accountId, id, expectedUpdatedAt, stamp)));
    },

    async putAgentSecret(accountId, agentId, name, sealed) {
      const stamp = currentAuditStamp();
      const put = db.transaction(() => {
        if (!sql.agentExists.get(accountId, agentId)) return null;
        const replaced = sql.secrets.all(agentId).some((row) => row.name === name);
        const updatedAt = now();
        sql.putSecret.run(agentId, name, sealed, updatedAt);
        audit.record(accountId, newAuditEvent(secretAudit.set(agentId, name, replaced), stamp));
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
      const stamp = currentAuditStamp();
      const remove = db.transaction(() => {
        if (!sql.agentExists.get(accountId, agentId)) return null;
        if (sql.deleteSecret.run(agentId, name).changes === 0) return false;
        audit.record(accountId, newAuditEvent(secretAudit.delete(agentId, name), stamp));
        return true;
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
      if (!readAgent(accountId, agentId)) return null;
      if (words.length === 0) return [];
      return sql.searchKnowledge
        .all(fts5Query(agentId, words), limit)
        .map((row) => ({ index: row.position, text: row.text }));
    },
  };
}
