/**
 * The registry on Postgres, for deployments that run several instances on one database. It passes the same
 * contract suite as the SQLite store and keeps its semantics exactly.
 *
 * Schema choices:
 * - Every table lives in one schema (`registry` by default), so the registry and the conversation service can
 *   share a database; `<schema>.schema_migrations` records the applied migrations (postgres-migrations.ts).
 * - Identifiers, names and statuses use `COLLATE "C"`: lists sort names by code point and break ties by id in
 *   byte order, whatever the database's default collation.
 * - Times are `timestamptz`; they are written from and read back as ISO 8601 strings with milliseconds in
 *   UTC, the form the SQLite store keeps as text, so both return identical records.
 * - Agent fields, limit overrides, scopes and event payloads are `jsonb`. Postgres cannot store U+0000 in
 *   text or jsonb; such a value is refused with INVALID_REQUEST instead of failing as an internal error.
 * - The outbox orders events by `seq bigserial`. Sequence numbers are handed out before commit, so a reader
 *   may see a later event before an earlier one commits; the relay reads "not yet published" rather than
 *   "after the last seq", so a late commit is delivered on a following round. Several registry instances may
 *   read the same events at once and deliver them twice: delivery is at least once and handlers are
 *   idempotent.
 *
 * Concurrency: a create locks its account's row (`FOR NO KEY UPDATE`) and only then counts the account's
 * agents, in a new statement and so a new snapshot, which makes the `maxAgents` check exact across every
 * connection and process. Updates lock the agent's row (`FOR UPDATE`) for their read-modify-write.
 * Transactions run at READ COMMITTED; a deadlock or serialization failure is retried twice.
 */
import { type Limits, newId, type Tier } from "@agentry/core";
import { AppError, idempotencyKeyInUse } from "@agentry/errors";
import { openStoreDatabase, type PgDatabase, type PgStoreOptions } from "@agentry/pg";
import type pg from "pg";
import { linkRedeemable, sessionUsable } from "./console-sessions.js";
import { agentCreated, agentDeleted, agentStatusChanged, agentUpdated } from "./events.js";
import {
  agentAsCreated,
  apiKeyAsCreated,
  claimedRecord,
  createdRecord,
  decideClaim,
  decideCreate,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type MadeUnderKey,
} from "./idempotency.js";
import { tsQuery } from "./knowledge.js";
import { nameOutboxEvents } from "./outbox-ids.js";
import { applyAgentPatch } from "./patch.js";
import { migrationTarget } from "./postgres-migrations.js";
import { assertAgentQuota } from "./quota.js";
import { scopesColumn, scopesOfColumn } from "./scopes.js";
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
  JsonValue,
  KeyedCreate,
  KnowledgeHit,
  ListAgentsQuery,
  NewApiKey,
  NewConsoleSession,
  NewOutboxEvent,
  OutboxChannel,
  OutboxEvent,
  Page,
  RegistryStore,
  SecretInfo,
  StatusReason,
} from "./types.js";

/** What the registry store opens with (`openStoreDatabase`). */
export type PostgresRegistryStoreOptions = PgStoreOptions;

export const DEFAULT_REGISTRY_SCHEMA = "registry";

interface AccountRow {
  id: string;
  name: string;
  tier: Tier;
  limit_overrides: Partial<Limits>;
  created_at: Date;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
}

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

interface OutboxRow {
  seq: string;
  event_id: string | null;
  type: OutboxEvent["type"];
  account_id: string;
  agent_id: string;
  payload: JsonObject;
  created_at: Date;
}

const SORT_COLUMN: Record<AgentSortField, string> = {
  createdAt: "created_at",
  name: "name",
  status: "status",
};

function now(): string {
  return new Date().toISOString();
}

function iso(value: Date): string {
  return value.toISOString();
}

function isoOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

function toAccount(row: AccountRow): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier,
    limitOverrides: row.limit_overrides,
    createdAt: iso(row.created_at),
  };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    ...scopesOfColumn(row.scopes),
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    expiresAt: isoOrNull(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

interface ConsoleLinkRow {
  account_id: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

interface ConsoleSessionRow {
  id: string;
  account_id: string;
  created_at: Date;
  expires_at: Date;
  idle_timeout_ms: string;
  last_seen_at: Date;
  ended_at: Date | null;
}

function toConsoleLink(row: ConsoleLinkRow): ConsoleLinkRecord {
  return {
    accountId: row.account_id,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    usedAt: isoOrNull(row.used_at),
  };
}

function toConsoleSession(row: ConsoleSessionRow): ConsoleSessionRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    idleTimeoutMs: Number(row.idle_timeout_ms),
    lastSeenAt: iso(row.last_seen_at),
    endedAt: isoOrNull(row.ended_at),
  };
}

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
    accountById: `SELECT * FROM ${s}.accounts WHERE id = $1`,
    accountByName: `SELECT * FROM ${s}.accounts WHERE name = $1`,
    accounts: `SELECT * FROM ${s}.accounts ORDER BY created_at, id`,
    insertAccount: `INSERT INTO ${s}.accounts (id, name, tier, limit_overrides, created_at)
      VALUES ($1, $2, $3, $4, $5)`,
    // Absent parts (null) keep their value; overrides given are replaced whole.
    updateAccount: `UPDATE ${s}.accounts
      SET tier = COALESCE($2, tier), limit_overrides = COALESCE($3::jsonb, limit_overrides)
      WHERE id = $1 RETURNING *`,
    lockAccount: `SELECT id, tier, limit_overrides FROM ${s}.accounts WHERE id = $1 FOR NO KEY UPDATE`,

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
    deleteSecret: `WITH agent AS (SELECT id FROM ${s}.agents WHERE account_id = $1 AND id = $2),
      gone AS (DELETE FROM ${s}.agent_secrets WHERE agent_id IN (SELECT id FROM agent) AND name = $3 RETURNING 1)
      SELECT (SELECT count(*) FROM agent)::int AS agents, (SELECT count(*) FROM gone)::int AS deleted`,
    searchKnowledge: `SELECT e.position, e.text
      FROM ${s}.knowledge_entries AS e, to_tsquery('english'::regconfig, $2) AS q
      WHERE e.agent_id = $1 AND e.document @@ q
      ORDER BY ts_rank(e.document, q) DESC, e.position LIMIT $3`,

    insertApiKey: `INSERT INTO ${s}.api_keys
        (id, account_id, name, sha256, prefix, scopes, created_at, expires_at)
      SELECT $1::text, id, $3::text, $4::text, $5::text, $6::jsonb, $7::timestamptz, $8::timestamptz
      FROM ${s}.accounts WHERE id = $2
      RETURNING *`,
    apiKey: `SELECT * FROM ${s}.api_keys WHERE id = $1`,
    apiKeys: `SELECT * FROM ${s}.api_keys WHERE account_id = $1 ORDER BY created_at, id`,
    // COALESCE keeps the first revocation time; the whole check-and-set is one statement.
    revokeApiKey: `UPDATE ${s}.api_keys SET revoked_at = COALESCE(revoked_at, $2)
      WHERE id = $1 AND ($3::text IS NULL OR account_id = $3) RETURNING *`,
    apiKeyWithAccount: `SELECT
        k.id, k.account_id, k.name, k.prefix, k.scopes, k.created_at, k.last_used_at, k.expires_at,
        k.revoked_at,
        a.name AS account_name, a.tier, a.limit_overrides, a.created_at AS account_created_at
      FROM ${s}.api_keys k JOIN ${s}.accounts a ON a.id = k.account_id WHERE k.sha256 = $1`,
    // Rows are locked in id order first, so two batches touching the same keys cannot deadlock.
    lockApiKeys: `SELECT 1 FROM ${s}.api_keys WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`,
    touchApiKeys: `UPDATE ${s}.api_keys k SET last_used_at = t.at
      FROM unnest($1::text[], $2::timestamptz[]) AS t (id, at)
      WHERE k.id = t.id AND (k.last_used_at IS NULL OR k.last_used_at < t.at)`,

    insertConsoleLink: `INSERT INTO ${s}.console_links (sha256, account_id, created_at, expires_at)
      SELECT $1::text, id, $3::timestamptz, $4::timestamptz FROM ${s}.accounts WHERE id = $2 RETURNING sha256`,
    consoleLinkForUpdate: `SELECT * FROM ${s}.console_links WHERE sha256 = $1 FOR UPDATE`,
    useConsoleLink: `UPDATE ${s}.console_links SET used_at = $2 WHERE sha256 = $1`,
    insertConsoleSession: `INSERT INTO ${s}.console_sessions
        (sha256, id, account_id, created_at, expires_at, idle_timeout_ms, last_seen_at)
      VALUES ($1, $2, $3, $4, $5, $6, $4)`,
    consoleSessionForUpdate: `SELECT * FROM ${s}.console_sessions WHERE sha256 = $1 FOR UPDATE`,
    touchConsoleSession: `UPDATE ${s}.console_sessions SET last_seen_at = $2 WHERE sha256 = $1`,
    endConsoleSession: `UPDATE ${s}.console_sessions SET ended_at = COALESCE(ended_at, $2) WHERE sha256 = $1
      RETURNING sha256`,

    insertEvent: `INSERT INTO ${s}.outbox (event_id, type, account_id, agent_id, payload, created_at)
      VALUES ($1, $2, $3, $4, $5, $6)`,
    // One statement per channel, each reading its own column (and partial index).
    unpublished: {
      conversation: `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM ${s}.outbox
        WHERE published_at IS NULL ORDER BY seq LIMIT $1`,
      webhooks: `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM ${s}.outbox
        WHERE webhooks_published_at IS NULL ORDER BY seq LIMIT $1`,
    } satisfies Record<OutboxChannel, string>,
    markPublished: {
      conversation: `UPDATE ${s}.outbox SET published_at = $2
        WHERE seq = ANY($1::bigint[]) AND published_at IS NULL`,
      webhooks: `UPDATE ${s}.outbox SET webhooks_published_at = $2
        WHERE seq = ANY($1::bigint[]) AND webhooks_published_at IS NULL`,
    } satisfies Record<OutboxChannel, string>,
    // COALESCE keeps an id another reader gave first; either way the statement answers the one that stays.
    nameEvents: `UPDATE ${s}.outbox o SET event_id = COALESCE(o.event_id, t.id)
      FROM unnest($1::bigint[], $2::text[]) AS t (seq, id)
      WHERE o.seq = t.seq RETURNING o.seq, o.event_id`,

    idempotencyKeyForUpdate: `SELECT fingerprint, lease_until, expires_at, status, sealed, resource_id, created_at, secret
      FROM ${s}.idempotency_keys WHERE account_id = $1 AND key_hash = $2 FOR UPDATE`,
    insertIdempotencyKey: `INSERT INTO ${s}.idempotency_keys
        (account_id, key_hash, fingerprint, lease_until, expires_at, status, sealed, resource_id, created_at, secret)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
      ON CONFLICT (account_id, key_hash) DO NOTHING RETURNING 1`,
    updateIdempotencyKey: `UPDATE ${s}.idempotency_keys SET fingerprint = $3, lease_until = $4, expires_at = $5,
        status = $6, sealed = $7, resource_id = $8, created_at = $9, secret = $10
      WHERE account_id = $1 AND key_hash = $2`,
    // A record the create's transaction completed (its resource id, no response yet) takes the response later.
    completeIdempotencyKey: `UPDATE ${s}.idempotency_keys SET lease_until = NULL, status = $3,
        sealed = COALESCE($4, sealed), resource_id = COALESCE($5, resource_id)
      WHERE account_id = $1 AND key_hash = $2
        AND (status IS NULL OR (resource_id IS NOT NULL AND sealed IS NULL))`,
    releaseIdempotencyKey: `DELETE FROM ${s}.idempotency_keys
      WHERE account_id = $1 AND key_hash = $2 AND status IS NULL`,
    deleteExpiredConsoleLinks: `DELETE FROM ${s}.console_links WHERE sha256 IN (
        SELECT sha256 FROM ${s}.console_links WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    deleteExpiredConsoleSessions: `DELETE FROM ${s}.console_sessions WHERE sha256 IN (
        SELECT sha256 FROM ${s}.console_sessions WHERE expires_at <= $1 OR ended_at IS NOT NULL
        LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    deleteExpiredIdempotencyKeys: `DELETE FROM ${s}.idempotency_keys WHERE (account_id, key_hash) IN (
        SELECT account_id, key_hash FROM ${s}.idempotency_keys WHERE expires_at <= $1
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  };
}

interface IdempotencyRow {
  fingerprint: string;
  lease_until: string | null;
  expires_at: string;
  status: number | null;
  sealed: Buffer | null;
  resource_id: string | null;
  created_at: string | null;
  secret: Buffer | null;
}

function toIdempotencyRecord(row: IdempotencyRow): IdempotencyRecord {
  return {
    fingerprint: row.fingerprint,
    leaseUntil: row.lease_until === null ? null : Number(row.lease_until),
    expiresAt: Number(row.expires_at),
    status: row.status,
    sealed: row.sealed === null ? null : new Uint8Array(row.sealed),
    resourceId: row.resource_id,
    createdAt: row.created_at === null ? null : Number(row.created_at),
    secret: row.secret === null ? null : new Uint8Array(row.secret),
  };
}

/** A record's columns after the key, in statement order. */
function idempotencyValues(
  claim: Pick<IdempotencyClaim, "accountId" | "keyHash">,
  record: IdempotencyRecord,
): unknown[] {
  return [
    claim.accountId,
    claim.keyHash,
    record.fingerprint,
    record.leaseUntil,
    record.expiresAt,
    record.status,
    record.sealed === null ? null : Buffer.from(record.sealed),
    record.resourceId,
    record.createdAt,
    record.secret === null ? null : Buffer.from(record.secret),
  ];
}

type Statements = ReturnType<typeof statements>;

/** An account as a create reads it under its lock. */
type LockedAccount = Pick<AccountRow, "id" | "tier" | "limit_overrides">;

export class PostgresRegistryStore implements RegistryStore {
  private readonly sql: Statements;
  private closed = false;

  /** Use `openPostgresRegistryStore`, which also migrates the schema. */
  constructor(
    private readonly db: PgDatabase,
    schema: string,
  ) {
    this.sql = statements(schema);
  }

  async createAgent(
    accountId: string,
    fields: AgentFields,
    options?: { idempotencyKeyHash?: string },
  ): Promise<AgentRecord> {
    return this.db.transaction(async (client) => {
      const account = await this.lockAccount(client, accountId);
      const agent = await this.insertAgent(client, account, fields);
      if (options?.idempotencyKeyHash) {
        await client.query(this.sql.completeIdempotencyKey, [
          accountId,
          options.idempotencyKeyHash,
          201,
          null,
          agent.id,
        ]);
      }
      return agent;
    });
  }

  async createAgentUnderKey(
    accountId: string,
    fields: AgentFields,
    key: CreateUnderKey,
  ): Promise<KeyedCreate<AgentRecord>> {
    return this.db.transaction(async (client) => {
      // Every create takes the account's lock first, so simultaneous creates under one key are decided in turn.
      const account = await this.lockAccount(client, accountId);
      return this.underKey(
        client,
        accountId,
        key,
        async () => {
          const agent = await this.insertAgent(client, account, fields);
          return { created: agent, record: agent };
        },
        async (made) => {
          // An agent a gateway of an earlier release created under the key is read as it is now.
          const current =
            made.createdAt === null
              ? ((await client.query<AgentRow>(this.sql.agent, [accountId, made.resourceId])).rows[0] ?? null)
              : null;
          return agentAsCreated(made, accountId, fields, () => (current ? toAgent(current) : null));
        },
      );
    });
  }

  async createApiKeyUnderKey(
    input: NewApiKey,
    key: CreateUnderKey & { secret: Uint8Array },
  ): Promise<KeyedCreate<{ apiKey: ApiKeyRecord; secret: Uint8Array }>> {
    return this.db.transaction(async (client) => {
      // The account's lock, as every create under a key takes it.
      if ((await client.query(this.sql.lockAccount, [input.accountId])).rowCount === 0) {
        throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
      }
      return this.underKey(
        client,
        input.accountId,
        key,
        async () => {
          const apiKey = await this.insertApiKey(client, input);
          return { created: { apiKey, secret: key.secret }, record: apiKey, secret: key.secret };
        },
        async (made) => {
          const row = (await client.query<ApiKeyRow>(this.sql.apiKey, [made.resourceId])).rows[0];
          return {
            apiKey: apiKeyAsCreated(made, () => (row?.account_id === input.accountId ? toApiKey(row) : null)),
            secret: made.secret ?? new Uint8Array(),
          };
        },
      );
    });
  }

  /**
   * Decides a create under `key` in the transaction of `client`, which holds the account's lock (`decideCreate`),
   * then runs `create` and writes the key's finished record with it, or answers what the key's own create made
   * (`replay`) or kept.
   */
  private async underKey<T>(
    client: pg.PoolClient,
    accountId: string,
    key: CreateUnderKey,
    create: () => Promise<{ created: T; record: { id: string; createdAt: string }; secret?: Uint8Array }>,
    replay: (made: MadeUnderKey) => Promise<T>,
  ): Promise<KeyedCreate<T>> {
    const row = (
      await client.query<IdempotencyRow>(this.sql.idempotencyKeyForUpdate, [accountId, key.keyHash])
    ).rows[0];
    const at = Date.now();
    const decision = decideCreate(row ? toIdempotencyRecord(row) : null, { ...key, accountId }, at);
    if (decision !== "create") {
      if (decision.outcome === "stored") return decision;
      return { outcome: "replayed", created: await replay(decision.made) };
    }
    const { created, record, secret } = await create();
    const values = idempotencyValues(
      { accountId, keyHash: key.keyHash },
      createdRecord(key.fingerprint, record, at, secret ?? null),
    );
    if (row) await client.query(this.sql.updateIdempotencyKey, values);
    else if ((await client.query(this.sql.insertIdempotencyKey, values)).rowCount !== 1) {
      // A claim made through IdempotencyService (which takes no account lock) got the key first.
      throw idempotencyKeyInUse();
    }
    return { outcome: "created", created };
  }

  /** Locks the account's row for the transaction: creates of one account are checked against its quota in turn. */
  private async lockAccount(client: pg.PoolClient, accountId: string): Promise<LockedAccount> {
    const account = (await client.query<LockedAccount>(this.sql.lockAccount, [accountId])).rows[0];
    if (!account) throw new AppError("UNAUTHORIZED", `Account ${accountId} does not exist.`);
    return account;
  }

  private async insertAgent(
    client: pg.PoolClient,
    account: LockedAccount,
    fields: AgentFields,
  ): Promise<AgentRecord> {
    // After the lock, in a statement of its own: it sees every create committed by an earlier lock holder.
    const count = (await client.query<{ n: number }>(this.sql.countAgents, [account.id])).rows[0]?.n ?? 0;
    assertAgentQuota({ tier: account.tier, limitOverrides: account.limit_overrides }, count);
    const agent = newAgent(account.id, fields, now());
    await client.query(this.sql.insertAgent, [
      agent.id,
      agent.accountId,
      ...fieldValues(agent),
      agent.createdAt,
      agent.updatedAt,
    ]);
    await this.emit(client, agentCreated(agent));
    return agent;
  }

  async getAgent(accountId: string, id: string): Promise<AgentRecord | null> {
    const row = (await this.db.query<AgentRow>(this.sql.agent, [accountId, id]))[0];
    return row ? toAgent(row) : null;
  }

  async listAgents(accountId: string, query: ListAgentsQuery): Promise<Page<AgentRecord>> {
    const column = SORT_COLUMN[query.sortBy];
    if (!column) throw new Error(`unsupported sort ${query.sortBy}`);
    const order = query.order === "asc" ? "ASC" : "DESC";
    const { status } = query;
    const offset = (query.page - 1) * query.limit;
    // One snapshot for the page and the total, as SQLite's read transaction gives.
    return this.db.transaction(async (client) => {
      const rows = await client.query<AgentRow>(
        this.sql.list(column, order, status !== undefined),
        status === undefined ? [accountId, query.limit, offset] : [accountId, query.limit, offset, status],
      );
      const total =
        status === undefined
          ? await client.query<{ n: number }>(this.sql.countAgents, [accountId])
          : await client.query<{ n: number }>(this.sql.countAgentsWithStatus, [accountId, status]);
      return { items: rows.rows.map(toAgent), total: total.rows[0]?.n ?? 0 };
    }, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }

  async updateAgent(accountId: string, id: string, patch: AgentPatch): Promise<AgentRecord | null> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<AgentRow>(this.sql.agentForUpdate, [accountId, id])).rows[0];
      if (!row) return null;
      const before = toAgent(row);
      const after = applyAgentPatch(before, patch, now());
      await client.query(this.sql.updateAgent, [
        after.id,
        after.accountId,
        ...fieldValues(after),
        after.updatedAt,
      ]);
      await this.emit(client, agentUpdated(before, after));
      return after;
    });
  }

  async reportAgentHealth(
    accountId: string,
    id: string,
    failure: StatusReason | null,
  ): Promise<AgentRecord | null> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<AgentRow>(this.sql.agentForUpdate, [accountId, id])).rows[0];
      if (!row) return null;
      const before = toAgent(row);
      const after = applyHealthReport(before, failure, now());
      if (!after) return before;
      await client.query(this.sql.updateAgent, [
        after.id,
        after.accountId,
        ...fieldValues(after),
        after.updatedAt,
      ]);
      await this.emit(client, agentStatusChanged(before, after));
      return after;
    });
  }

  async deleteAgent(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (client) => {
      // Its secrets and knowledge index go with it (foreign keys); other stores purge their data from
      // agent.deleted.
      const { rowCount } = await client.query(this.sql.deleteAgent, [accountId, id]);
      if (!rowCount) return false;
      await this.emit(client, agentDeleted(accountId, id));
      return true;
    });
  }

  async createAccount(input: {
    name: string;
    tier: Tier;
    limitOverrides: Partial<Limits>;
  }): Promise<AccountRecord> {
    const account: AccountRecord = {
      id: newId("account"),
      name: input.name,
      tier: input.tier,
      limitOverrides: { ...input.limitOverrides },
      createdAt: now(),
    };
    try {
      await this.db.query(this.sql.insertAccount, [
        account.id,
        account.name,
        account.tier,
        JSON.stringify(account.limitOverrides),
        account.createdAt,
      ]);
    } catch (error) {
      if ((error as { code?: unknown }).code === "23505") {
        throw new AppError("INVALID_REQUEST", `an account named ${input.name} already exists`);
      }
      throw error;
    }
    return account;
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const row = (await this.db.query<AccountRow>(this.sql.accountById, [id]))[0];
    return row ? toAccount(row) : null;
  }

  async updateAccount(
    id: string,
    change: { tier?: Tier; limitOverrides?: Partial<Limits> },
  ): Promise<AccountRecord | null> {
    const row = (
      await this.db.query<AccountRow>(this.sql.updateAccount, [
        id,
        change.tier ?? null,
        change.limitOverrides === undefined ? null : JSON.stringify(change.limitOverrides),
      ])
    )[0];
    return row ? toAccount(row) : null;
  }

  async getAccountByName(name: string): Promise<AccountRecord | null> {
    const row = (await this.db.query<AccountRow>(this.sql.accountByName, [name]))[0];
    return row ? toAccount(row) : null;
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return (await this.db.query<AccountRow>(this.sql.accounts, [])).map(toAccount);
  }

  async createApiKey(input: NewApiKey): Promise<ApiKeyRecord> {
    return this.db.transaction((client) => this.insertApiKey(client, input));
  }

  private async insertApiKey(client: pg.PoolClient, input: NewApiKey): Promise<ApiKeyRecord> {
    const row = (
      await client.query<ApiKeyRow>(this.sql.insertApiKey, [
        newId("key"),
        input.accountId,
        input.name,
        input.sha256,
        input.prefix,
        JSON.stringify(scopesColumn(input.scopes)),
        now(),
        input.expiresAt,
      ])
    ).rows[0];
    if (!row) throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
    return toApiKey(row);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return (await this.db.query<ApiKeyRow>(this.sql.apiKeys, [accountId])).map(toApiKey);
  }

  async revokeApiKey(id: string, accountId?: string): Promise<ApiKeyRecord | null> {
    const row = (await this.db.query<ApiKeyRow>(this.sql.revokeApiKey, [id, now(), accountId ?? null]))[0];
    return row ? toApiKey(row) : null;
  }

  async findApiKeyBySha256(sha256: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null> {
    type Row = ApiKeyRow &
      Pick<AccountRow, "tier" | "limit_overrides"> & {
        account_name: string;
        account_created_at: Date;
      };
    const row = (await this.db.query<Row>(this.sql.apiKeyWithAccount, [sha256]))[0];
    if (!row) return null;
    return {
      key: toApiKey(row),
      account: toAccount({
        id: row.account_id,
        name: row.account_name,
        tier: row.tier,
        limit_overrides: row.limit_overrides,
        created_at: row.account_created_at,
      }),
    };
  }

  async touchApiKeys(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    if (lastUsed.size === 0) return;
    const ids = [...lastUsed.keys()];
    // Normalised so that an offset or a missing millisecond part compares as the time it is.
    const times = ids.map((id) => new Date(lastUsed.get(id)!).toISOString());
    await this.db.transaction(async (client) => {
      await client.query(this.sql.lockApiKeys, [ids]);
      await client.query(this.sql.touchApiKeys, [ids, times]);
    });
  }

  async createConsoleLink(input: { accountId: string; sha256: string; expiresAt: string }): Promise<void> {
    const rows = await this.db.query(this.sql.insertConsoleLink, [
      input.sha256,
      input.accountId,
      now(),
      new Date(input.expiresAt).toISOString(),
    ]);
    if (rows.length === 0) throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
  }

  async redeemConsoleLink(
    linkSha256: string,
    input: NewConsoleSession,
  ): Promise<{ session: ConsoleSessionRecord; account: AccountRecord } | null> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<ConsoleLinkRow>(this.sql.consoleLinkForUpdate, [linkSha256])).rows[0];
      const at = now();
      if (!row || !linkRedeemable(toConsoleLink(row), Date.parse(at))) return null;
      const account = (await client.query<AccountRow>(this.sql.accountById, [row.account_id])).rows[0];
      if (!account) return null;
      await client.query(this.sql.useConsoleLink, [linkSha256, at]);
      const session: ConsoleSessionRecord = {
        id: newId("session"),
        accountId: row.account_id,
        createdAt: at,
        expiresAt: new Date(input.expiresAt).toISOString(),
        idleTimeoutMs: input.idleTimeoutMs,
        lastSeenAt: at,
        endedAt: null,
      };
      await client.query(this.sql.insertConsoleSession, [
        input.sha256,
        session.id,
        session.accountId,
        session.createdAt,
        session.expiresAt,
        session.idleTimeoutMs,
      ]);
      return { session, account: toAccount(account) };
    });
  }

  async useConsoleSession(
    sha256: string,
  ): Promise<{ session: ConsoleSessionRecord; account: AccountRecord } | null> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<ConsoleSessionRow>(this.sql.consoleSessionForUpdate, [sha256])).rows[0];
      if (!row) return null;
      const account = (await client.query<AccountRow>(this.sql.accountById, [row.account_id])).rows[0];
      if (!account) return null;
      const session = toConsoleSession(row);
      const at = now();
      if (sessionUsable(session, Date.parse(at))) {
        await client.query(this.sql.touchConsoleSession, [sha256, at]);
        session.lastSeenAt = at;
      }
      return { session, account: toAccount(account) };
    });
  }

  async endConsoleSession(sha256: string): Promise<boolean> {
    return (await this.db.query(this.sql.endConsoleSession, [sha256, now()])).length > 0;
  }

  async beginIdempotentRequest(claim: IdempotencyClaim): Promise<IdempotencyBegin> {
    return this.db.transaction(async (client) => {
      const read = async () =>
        (
          await client.query<IdempotencyRow>(this.sql.idempotencyKeyForUpdate, [
            claim.accountId,
            claim.keyHash,
          ])
        ).rows[0];
      let row = await read();
      if (!row) {
        const first = claimedRecord(claim, Date.now());
        const inserted = await client.query(this.sql.insertIdempotencyKey, idempotencyValues(claim, first));
        if (inserted.rowCount === 1) return { outcome: "started" } as const;
        // Another claim inserted it first and has committed: its row is now there to lock and decide on.
        row = await read();
      }
      const decision = decideClaim(row ? toIdempotencyRecord(row) : null, claim, Date.now());
      if (decision.write) {
        await client.query(
          row ? this.sql.updateIdempotencyKey : this.sql.insertIdempotencyKey,
          idempotencyValues(claim, decision.write),
        );
      }
      return decision.answer;
    });
  }

  async completeIdempotentRequest(
    accountId: string,
    keyHash: string,
    response: { status: number; sealed: Uint8Array },
  ): Promise<void> {
    await this.db.query(this.sql.completeIdempotencyKey, [
      accountId,
      keyHash,
      response.status,
      Buffer.from(response.sealed),
      null,
    ]);
  }

  async releaseIdempotentRequest(accountId: string, keyHash: string): Promise<void> {
    await this.db.query(this.sql.releaseIdempotencyKey, [accountId, keyHash]);
  }

  async deleteExpiredConsoleSessions(limit: number): Promise<number> {
    const at = now();
    return this.db.transaction(async (client) => {
      const links = (await client.query(this.sql.deleteExpiredConsoleLinks, [at, limit])).rowCount ?? 0;
      return links + ((await client.query(this.sql.deleteExpiredConsoleSessions, [at, limit])).rowCount ?? 0);
    });
  }

  async deleteExpiredIdempotencyKeys(limit: number): Promise<number> {
    return this.db.transaction(
      async (client) =>
        (await client.query(this.sql.deleteExpiredIdempotencyKeys, [Date.now(), limit])).rowCount ?? 0,
    );
  }

  async unpublishedEvents(channel: OutboxChannel, limit: number): Promise<OutboxEvent[]> {
    const rows = await this.db.query<OutboxRow>(this.sql.unpublished[channel], [limit]);
    const unnamed = rows.filter((row) => row.event_id === null);
    if (unnamed.length > 0) {
      // Rows an older version wrote without an event id get one, the first reader's.
      const names = nameOutboxEvents(unnamed);
      const named = await this.db.query<{ seq: string; event_id: string }>(this.sql.nameEvents, [
        names.map(([seq]) => seq),
        names.map(([, id]) => id),
      ]);
      const ids = new Map(named.map((row) => [row.seq, row.event_id]));
      for (const row of unnamed) row.event_id = ids.get(row.seq) ?? null;
    }
    return rows.map((row) => ({
      seq: Number(row.seq),
      id: row.event_id!,
      type: row.type,
      accountId: row.account_id,
      agentId: row.agent_id,
      payload: row.payload,
      createdAt: iso(row.created_at),
    }));
  }

  async markEventsPublished(channel: OutboxChannel, seqs: number[]): Promise<void> {
    if (seqs.length > 0) await this.db.query(this.sql.markPublished[channel], [seqs, now()]);
  }

  async putAgentSecret(
    accountId: string,
    agentId: string,
    name: string,
    sealed: string,
  ): Promise<SecretInfo | null> {
    const row = (
      await this.db.query<{ name: string; updated_at: Date }>(this.sql.putSecret, [
        accountId,
        agentId,
        name,
        sealed,
        now(),
      ])
    )[0];
    return row ? { name: row.name, updatedAt: iso(row.updated_at) } : null;
  }

  async listAgentSecrets(accountId: string, agentId: string): Promise<SecretInfo[] | null> {
    const rows = await this.db.query<{ name: string | null; updated_at: Date | null }>(this.sql.secrets, [
      accountId,
      agentId,
    ]);
    if (rows.length === 0) return null;
    return rows.flatMap((row) =>
      row.name === null || row.updated_at === null
        ? []
        : [{ name: row.name, updatedAt: iso(row.updated_at) }],
    );
  }

  async deleteAgentSecret(accountId: string, agentId: string, name: string): Promise<boolean | null> {
    const row = (
      await this.db.query<{ agents: number; deleted: number }>(this.sql.deleteSecret, [
        accountId,
        agentId,
        name,
      ])
    )[0];
    if (!row?.agents) return null;
    return row.deleted > 0;
  }

  async sealedAgentSecrets(
    accountId: string,
    agentId: string,
    names: readonly string[],
  ): Promise<Record<string, string> | null> {
    const rows = await this.db.query<{ name: string | null; sealed: string | null }>(this.sql.sealedSecrets, [
      accountId,
      agentId,
      [...names],
    ]);
    if (rows.length === 0) return null;
    const found: Record<string, string> = {};
    for (const row of rows) if (row.name !== null && row.sealed !== null) found[row.name] = row.sealed;
    return found;
  }

  async searchKnowledge(
    accountId: string,
    agentId: string,
    words: readonly string[],
    limit: number,
  ): Promise<KnowledgeHit[] | null> {
    if (!(await this.db.query(this.sql.agent, [accountId, agentId]))[0]) return null;
    if (words.length === 0) return [];
    const rows = await this.db.query<{ position: number; text: string }>(this.sql.searchKnowledge, [
      agentId,
      tsQuery(words),
      limit,
    ]);
    return rows.map((row) => ({ index: row.position, text: row.text }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }

  private async emit(client: pg.PoolClient, events: readonly NewOutboxEvent[]): Promise<void> {
    for (const event of events) {
      await client.query(this.sql.insertEvent, [
        event.id,
        event.type,
        event.accountId,
        event.agentId,
        JSON.stringify(event.payload),
        now(),
      ]);
    }
  }
}

/**
 * Opens a pool on the database and brings the service's schema up to date (safe when instances start at once).
 * While the database cannot be reached it waits for it, reporting the outage.
 */
export async function openPostgresRegistryStore(
  options: PostgresRegistryStoreOptions,
): Promise<PostgresRegistryStore> {
  const { db, schema } = await openStoreDatabase(options, {
    defaultSchema: DEFAULT_REGISTRY_SCHEMA,
    applicationName: "agentry-registry",
    description: "The registry's database",
    migrations: migrationTarget,
  });
  return new PostgresRegistryStore(db, schema);
}
