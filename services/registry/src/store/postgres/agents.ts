import { newAuditEvent } from "@agentry/core";
import type { PgAuditLog, PgDatabase } from "@agentry/pg";
import type pg from "pg";
import { agentAudit, secretAudit } from "../audit.js";
import { agentCreated, agentDeleted, agentStatusChanged, agentUpdated } from "../events.js";
import { agentAsCreated } from "../idempotency.js";
import { tsQuery } from "../knowledge.js";
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
  JsonObject,
  JsonValue,
  KeyedCreate,
  KnowledgeHit,
  ListAgentsQuery,
  Page,
  SecretInfo,
  StatusReason,
} from "../types.js";
import type { LockedAccount, postgresAccounts } from "./accounts.js";
import type { postgresIdempotency } from "./idempotency.js";
import type { postgresOutbox } from "./outbox.js";
import { iso, now } from "./shared.js";

interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
  clients: JsonValue[];
  settings: JsonObject;
  model_provider: string | null;
  model: string | null;
  plugins: JsonValue[];
  status: AgentStatus;
  status_reason: StatusReason | null;
  created_at: Date;
  updated_at: Date;
}

const SORT_COLUMN: Record<AgentSortField, string> = {
  createdAt: "created_at",
  name: "name",
  status: "status",
};

function toAgent(row: AgentRow): AgentRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    bio: row.bio,
    personality: row.personality,
    knowledge: row.knowledge,
    goals: row.goals,
    clients: row.clients,
    settings: row.settings,
    modelProvider: row.model_provider,
    model: row.model,
    plugins: row.plugins,
    status: row.status,
    statusReason: row.status_reason,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/**
 * The columns a caller can change, in statement order. JSON goes as text: node-postgres would turn a
 * JavaScript array into a Postgres array literal, not JSON.
 */
function fieldValues(agent: AgentRecord): unknown[] {
  return [
    agent.name,
    JSON.stringify(agent.bio),
    JSON.stringify(agent.personality),
    JSON.stringify(agent.knowledge),
    JSON.stringify(agent.goals),
    JSON.stringify(agent.clients),
    JSON.stringify(agent.settings),
    agent.modelProvider,
    agent.model,
    JSON.stringify(agent.plugins),
    agent.status,
    agent.statusReason === null ? null : JSON.stringify(agent.statusReason),
  ];
}

function statements(s: string) {
  return {
    agent: `SELECT * FROM ${s}.agents WHERE account_id = $1 AND id = $2`,
    agentForUpdate: `SELECT * FROM ${s}.agents WHERE account_id = $1 AND id = $2 FOR UPDATE`,
    // Kept by triggers in every write's transaction (migration 5): a row or three, whatever the account's size.
    countAgents: `SELECT coalesce(sum(n), 0)::int AS n FROM ${s}.agent_counts WHERE account_id = $1`,
    countAgentsWithStatus: `SELECT coalesce(sum(n), 0)::int AS n FROM ${s}.agent_counts
      WHERE account_id = $1 AND status = $2`,
    insertAgent: `INSERT INTO ${s}.agents (id, account_id, name, bio, personality, knowledge, goals, clients,
        settings, model_provider, model, plugins, status, status_reason, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    updateAgent: `UPDATE ${s}.agents SET name = $3, bio = $4, personality = $5, knowledge = $6, goals = $7,
        clients = $8, settings = $9, model_provider = $10, model = $11, plugins = $12, status = $13,
        status_reason = $14, updated_at = $15
      WHERE id = $1 AND account_id = $2`,
    deleteAgent: `DELETE FROM ${s}.agents WHERE account_id = $1 AND id = $2`,
    /** Sort column and direction come from fixed tables, never from the caller's text. */
    list: (column: string, order: "ASC" | "DESC", filtered: boolean) =>
      `SELECT * FROM ${s}.agents WHERE account_id = $1 ${filtered ? "AND status = $4" : ""}
       ORDER BY ${column} ${order}, id ${order} LIMIT $2 OFFSET $3`,
    // Each reads the agent in the account with what it wants, so one round trip tells a missing agent apart.
    putSecret: `INSERT INTO ${s}.agent_secrets (agent_id, name, sealed, updated_at)
      SELECT id, $3, $4, $5 FROM ${s}.agents WHERE account_id = $1 AND id = $2
      ON CONFLICT (agent_id, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at
      RETURNING name, updated_at`,
    secrets: `SELECT s.name, s.updated_at FROM ${s}.agents AS a
      LEFT JOIN ${s}.agent_secrets AS s ON s.agent_id = a.id
      WHERE a.account_id = $1 AND a.id = $2 ORDER BY s.name`,
    sealedSecrets: `SELECT s.name, s.sealed FROM ${s}.agents AS a
      LEFT JOIN ${s}.agent_secrets AS s ON s.agent_id = a.id AND s.name = ANY ($3::text[])
      WHERE a.account_id = $1 AND a.id = $2`,
    secretExists: `SELECT 1 FROM ${s}.agent_secrets WHERE agent_id = $1 AND name = $2`,
    deleteSecret: `WITH agent AS (SELECT id FROM ${s}.agents WHERE account_id = $1 AND id = $2),
      gone AS (DELETE FROM ${s}.agent_secrets WHERE agent_id IN (SELECT id FROM agent) AND name = $3 RETURNING 1)
      SELECT (SELECT count(*) FROM agent)::int AS agents, (SELECT count(*) FROM gone)::int AS deleted`,
    searchKnowledge: `SELECT e.position, e.text
      FROM ${s}.knowledge_entries AS e, to_tsquery('english'::regconfig, $2) AS q
      WHERE e.agent_id = $1 AND e.document @@ q
      ORDER BY ts_rank(e.document, q) DESC, e.position LIMIT $3`,
  };
}

/**
 * Agents, their secrets and the index of their knowledge. A create locks its account (`lockAccount`) before it
 * checks the quota, and every write emits its event (`emit`), in the write's transaction; a create under an
 * Idempotency-Key writes the key's record in it too (`underKey`, `completeIdempotencyKey`).
 */
export function postgresAgents(
  db: PgDatabase,
  schema: string,
  { lockAccount }: Pick<ReturnType<typeof postgresAccounts>, "lockAccount">,
  { emit }: Pick<ReturnType<typeof postgresOutbox>, "emit">,
  {
    underKey,
    completeIdempotencyKey,
  }: Pick<ReturnType<typeof postgresIdempotency>, "underKey" | "completeIdempotencyKey">,
  audit: PgAuditLog,
): AgentStore {
  const sql = statements(schema);
  async function insertAgent(
    client: pg.PoolClient,
    account: LockedAccount,
    fields: AgentFields,
  ): Promise<AgentRecord> {
    // After the lock, in a statement of its own: it sees every create committed by an earlier lock holder.
    const count = (await client.query<{ n: number }>(sql.countAgents, [account.id])).rows[0]?.n ?? 0;
    assertAgentQuota({ tier: account.tier, limitOverrides: account.limit_overrides }, count);
    const agent = newAgent(account.id, fields, now());
    await client.query(sql.insertAgent, [
      agent.id,
      agent.accountId,
      ...fieldValues(agent),
      agent.createdAt,
      agent.updatedAt,
    ]);
    await emit(client, agentCreated(agent));
    await audit.record(client, account.id, newAuditEvent(agentAudit.create(agent)));
    return agent;
  }

  return {
    async createAgent(
      accountId: string,
      fields: AgentFields,
      options?: { idempotencyKeyHash?: string },
    ): Promise<AgentRecord> {
      return db.transaction(async (client) => {
        const account = await lockAccount(client, accountId);
        const agent = await insertAgent(client, account, fields);
        if (options?.idempotencyKeyHash) {
          await client.query(completeIdempotencyKey, [
            accountId,
            options.idempotencyKeyHash,
            201,
            null,
            agent.id,
          ]);
        }
        return agent;
      });
    },
    async createAgentUnderKey(
      accountId: string,
      fields: AgentFields,
      key: CreateUnderKey,
    ): Promise<KeyedCreate<AgentRecord>> {
      return db.transaction(async (client) => {
        // Every create takes the account's lock first, so simultaneous creates under one key are decided in turn.
        const account = await lockAccount(client, accountId);
        return underKey(
          client,
          accountId,
          key,
          async () => {
            const agent = await insertAgent(client, account, fields);
            return { created: agent, record: agent };
          },
          async (made) => {
            // An agent a gateway of an earlier release created under the key is read as it is now.
            const current =
              made.createdAt === null
                ? ((await client.query<AgentRow>(sql.agent, [accountId, made.resourceId])).rows[0] ?? null)
                : null;
            return agentAsCreated(made, accountId, fields, () => (current ? toAgent(current) : null));
          },
        );
      });
    },
    async getAgent(accountId: string, id: string): Promise<AgentRecord | null> {
      const row = (await db.query<AgentRow>(sql.agent, [accountId, id]))[0];
      return row ? toAgent(row) : null;
    },
    async listAgents(accountId: string, query: ListAgentsQuery): Promise<Page<AgentRecord>> {
      const column = SORT_COLUMN[query.sortBy];
      if (!column) throw new Error(`unsupported sort ${query.sortBy}`);
      const order = query.order === "asc" ? "ASC" : "DESC";
      const { status } = query;
      const offset = (query.page - 1) * query.limit;
      // One snapshot for the page and the total, as SQLite's read transaction gives.
      return db.transaction(async (client) => {
        const rows = await client.query<AgentRow>(
          sql.list(column, order, status !== undefined),
          status === undefined ? [accountId, query.limit, offset] : [accountId, query.limit, offset, status],
        );
        const total =
          status === undefined
            ? await client.query<{ n: number }>(sql.countAgents, [accountId])
            : await client.query<{ n: number }>(sql.countAgentsWithStatus, [accountId, status]);
        return { items: rows.rows.map(toAgent), total: total.rows[0]?.n ?? 0 };
      }, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    },
    async updateAgent(
      accountId: string,
      id: string,
      patch: AgentPatch,
      expectedUpdatedAt?: string,
    ): Promise<AgentRecord | null> {
      return db.transaction(async (client) => {
        // The row is locked until the commit: a concurrent conditional write waits, then sees this one's version.
        const row = (await client.query<AgentRow>(sql.agentForUpdate, [accountId, id])).rows[0];
        if (!row) return null;
        const before = toAgent(row);
        assertVersion(before, expectedUpdatedAt);
        const after = applyAgentPatch(before, patch, now());
        await client.query(sql.updateAgent, [
          after.id,
          after.accountId,
          ...fieldValues(after),
          after.updatedAt,
        ]);
        await emit(client, agentUpdated(before, after));
        await audit.record(client, accountId, newAuditEvent(agentAudit.update(before, after)));
        return after;
      });
    },
    async reportAgentHealth(
      accountId: string,
      id: string,
      failure: StatusReason | null,
    ): Promise<AgentRecord | null> {
      return db.transaction(async (client) => {
        const row = (await client.query<AgentRow>(sql.agentForUpdate, [accountId, id])).rows[0];
        if (!row) return null;
        const before = toAgent(row);
        const after = applyHealthReport(before, failure, now());
        if (!after) return before;
        await client.query(sql.updateAgent, [
          after.id,
          after.accountId,
          ...fieldValues(after),
          after.updatedAt,
        ]);
        await emit(client, agentStatusChanged(before, after));
        return after;
      });
    },
    async deleteAgent(accountId: string, id: string, expectedUpdatedAt?: string): Promise<boolean> {
      return db.transaction(async (client) => {
        if (expectedUpdatedAt !== undefined) {
          const row = (await client.query<AgentRow>(sql.agentForUpdate, [accountId, id])).rows[0];
          if (!row) return false;
          assertVersion(toAgent(row), expectedUpdatedAt);
        }
        // Its secrets and knowledge index go with it (foreign keys); other stores purge their data from
        // agent.deleted.
        const { rowCount } = await client.query(sql.deleteAgent, [accountId, id]);
        if (!rowCount) return false;
        await emit(client, agentDeleted(accountId, id));
        await audit.record(client, accountId, newAuditEvent(agentAudit.delete(id)));
        return true;
      });
    },
    async putAgentSecret(
      accountId: string,
      agentId: string,
      name: string,
      sealed: string,
    ): Promise<SecretInfo | null> {
      return db.transaction(async (client) => {
        const replaced = ((await client.query(sql.secretExists, [agentId, name])).rowCount ?? 0) > 0;
        const row = (
          await client.query<{ name: string; updated_at: Date }>(sql.putSecret, [
            accountId,
            agentId,
            name,
            sealed,
            now(),
          ])
        ).rows[0];
        if (!row) return null;
        await audit.record(client, accountId, newAuditEvent(secretAudit.set(agentId, name, replaced)));
        return { name: row.name, updatedAt: iso(row.updated_at) };
      });
    },
    async listAgentSecrets(accountId: string, agentId: string): Promise<SecretInfo[] | null> {
      const rows = await db.query<{ name: string | null; updated_at: Date | null }>(sql.secrets, [
        accountId,
        agentId,
      ]);
      if (rows.length === 0) return null;
      return rows.flatMap((row) =>
        row.name === null || row.updated_at === null
          ? []
          : [{ name: row.name, updatedAt: iso(row.updated_at) }],
      );
    },
    async deleteAgentSecret(accountId: string, agentId: string, name: string): Promise<boolean | null> {
      return db.transaction(async (client) => {
        const row = (
          await client.query<{ agents: number; deleted: number }>(sql.deleteSecret, [
            accountId,
            agentId,
            name,
          ])
        ).rows[0];
        if (!row?.agents) return null;
        if (row.deleted === 0) return false;
        await audit.record(client, accountId, newAuditEvent(secretAudit.delete(agentId, name)));
        return true;
      });
    },
    async sealedAgentSecrets(
      accountId: string,
      agentId: string,
      names: readonly string[],
    ): Promise<Record<string, string> | null> {
      const rows = await db.query<{ name: string | null; sealed: string | null }>(sql.sealedSecrets, [
        accountId,
        agentId,
        [...names],
      ]);
      if (rows.length === 0) return null;
      const found: Record<string, string> = {};
      for (const row of rows) if (row.name !== null && row.sealed !== null) found[row.name] = row.sealed;
      return found;
    },
    async searchKnowledge(
      accountId: string,
      agentId: string,
      words: readonly string[],
      limit: number,
    ): Promise<KnowledgeHit[] | null> {
      if (!(await db.query(sql.agent, [accountId, agentId]))[0]) return null;
      if (words.length === 0) return [];
      const rows = await db.query<{ position: number; text: string }>(sql.searchKnowledge, [
        agentId,
        tsQuery(words),
        limit,
      ]);
      return rows.map((row) => ({ index: row.position, text: row.text }));
    },
  };
}
