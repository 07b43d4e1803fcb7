import { type Limits, newAuditEvent, newId, type Tier } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { PgAuditLog, PgDatabase } from "@agentry/pg";
import type pg from "pg";
import { accountAudit, keyAudit } from "../audit.js";
import { apiKeyAsCreated } from "../idempotency.js";
import { FIRST_OWNER_NAME, normalEmail } from "../members.js";
import { scopesColumn, scopesOfColumn } from "../scopes.js";
import type {
  AccountRecord,
  AccountStore,
  ApiKeyRecord,
  CreateUnderKey,
  KeyedCreate,
  NewApiKey,
} from "../types.js";
import type { postgresIdempotency } from "./idempotency.js";
import { iso, isoOrNull, now } from "./shared.js";

export interface AccountRow {
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
  created_by: string | null;
}

export function toAccount(row: AccountRow): AccountRecord {
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
    createdBy: row.created_by,
  };
}

function statements(s: string) {
  return {
    accountById: `SELECT * FROM ${s}.accounts WHERE id = $1`,
    accountByName: `SELECT * FROM ${s}.accounts WHERE name = $1`,
    accounts: `SELECT * FROM ${s}.accounts ORDER BY created_at, id`,
    insertAccount: `INSERT INTO ${s}.accounts (id, name, tier, limit_overrides, created_at)
      VALUES ($1, $2, $3, $4, $5)`,
    insertOwner: `INSERT INTO ${s}.members (id, account_id, email, name, role, created_at)
      VALUES ($1, $2, $3, $4, 'owner', $5)`,
    // Absent parts (null) keep their value; overrides given are replaced whole.
    updateAccount: `UPDATE ${s}.accounts
      SET tier = COALESCE($2, tier), limit_overrides = COALESCE($3::jsonb, limit_overrides)
      WHERE id = $1 RETURNING *`,
    accountForUpdate: `SELECT * FROM ${s}.accounts WHERE id = $1 FOR UPDATE`,
    lockAccount: `SELECT id, tier, limit_overrides FROM ${s}.accounts WHERE id = $1 FOR NO KEY UPDATE`,
    insertApiKey: `INSERT INTO ${s}.api_keys
        (id, account_id, name, sha256, prefix, scopes, created_at, expires_at, created_by)
      SELECT $1::text, id, $3::text, $4::text, $5::text, $6::jsonb, $7::timestamptz, $8::timestamptz, $9::text
      FROM ${s}.accounts WHERE id = $2
      RETURNING *`,
    apiKey: `SELECT * FROM ${s}.api_keys WHERE id = $1`,
    apiKeys: `SELECT * FROM ${s}.api_keys WHERE account_id = $1 ORDER BY created_at, id`,
    // COALESCE keeps the first revocation time; the whole check-and-set is one statement.
    revokeApiKey: `UPDATE ${s}.api_keys SET revoked_at = COALESCE(revoked_at, $2)
      WHERE id = $1 AND ($3::text IS NULL OR account_id = $3) RETURNING *`,
    apiKeyWithAccount: `SELECT
        k.id, k.account_id, k.name, k.prefix, k.scopes, k.created_at, k.last_used_at, k.expires_at,
        k.revoked_at, k.created_by,
        a.name AS account_name, a.tier, a.limit_overrides, a.created_at AS account_created_at
      FROM ${s}.api_keys k JOIN ${s}.accounts a ON a.id = k.account_id WHERE k.sha256 = $1`,
    // Rows are locked in id order first, so two batches touching the same keys cannot deadlock.
    lockApiKeys: `SELECT 1 FROM ${s}.api_keys WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`,
    touchApiKeys: `UPDATE ${s}.api_keys k SET last_used_at = t.at
      FROM unnest($1::text[], $2::timestamptz[]) AS t (id, at)
      WHERE k.id = t.id AND (k.last_used_at IS NULL OR k.last_used_at < t.at)`,
  };
}

/** An account as a create reads it under its lock. */
export type LockedAccount = Pick<AccountRow, "id" | "tier" | "limit_overrides">;

/**
 * Accounts and their API keys; `lockAccount` for the creates of the account's agents, and `accountById` for the
 * other aggregates' reads of an account, in their transactions.
 */
export function postgresAccounts(
  db: PgDatabase,
  schema: string,
  { underKey }: Pick<ReturnType<typeof postgresIdempotency>, "underKey">,
  audit: PgAuditLog,
) {
  const sql = statements(schema);
  /** Locks the account's row for the transaction: creates of one account are checked against its quota in turn. */
  async function lockAccount(client: pg.PoolClient, accountId: string): Promise<LockedAccount> {
    const account = (await client.query<LockedAccount>(sql.lockAccount, [accountId])).rows[0];
    if (!account) throw new AppError("UNAUTHORIZED", `Account ${accountId} does not exist.`);
    return account;
  }

  async function insertApiKey(client: pg.PoolClient, input: NewApiKey): Promise<ApiKeyRecord> {
    const row = (
      await client.query<ApiKeyRow>(sql.insertApiKey, [
        newId("key"),
        input.accountId,
        input.name,
        input.sha256,
        input.prefix,
        JSON.stringify(scopesColumn(input.scopes)),
        now(),
        input.expiresAt,
        input.createdBy ?? null,
      ])
    ).rows[0];
    if (!row) throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
    const key = toApiKey(row);
    await audit.record(client, key.accountId, newAuditEvent(keyAudit.create(key)));
    return key;
  }

  const store: AccountStore = {
    async createAccount(input: Parameters<AccountStore["createAccount"]>[0]): Promise<AccountRecord> {
      const account: AccountRecord = {
        id: newId("account"),
        name: input.name,
        tier: input.tier,
        limitOverrides: { ...input.limitOverrides },
        createdAt: now(),
      };
      try {
        await db.transaction(async (client) => {
          await client.query(sql.insertAccount, [
            account.id,
            account.name,
            account.tier,
            JSON.stringify(account.limitOverrides),
            account.createdAt,
          ]);
          await client.query(sql.insertOwner, [
            newId("member"),
            account.id,
            input.owner?.email ? normalEmail(input.owner.email) : null,
            input.owner?.name || FIRST_OWNER_NAME,
            account.createdAt,
          ]);
          await audit.record(client, account.id, newAuditEvent(accountAudit.create(account)));
        });
      } catch (error) {
        if ((error as { code?: unknown }).code === "23505") {
          throw new AppError("INVALID_REQUEST", `an account named ${input.name} already exists`);
        }
        throw error;
      }
      return account;
    },
    async getAccount(id: string): Promise<AccountRecord | null> {
      const row = (await db.query<AccountRow>(sql.accountById, [id]))[0];
      return row ? toAccount(row) : null;
    },
    async updateAccount(
      id: string,
      change: { tier?: Tier; limitOverrides?: Partial<Limits> },
    ): Promise<AccountRecord | null> {
      return db.transaction(async (client) => {
        const old = (await client.query<AccountRow>(sql.accountForUpdate, [id])).rows[0];
        if (!old) return null;
        const row = (
          await client.query<AccountRow>(sql.updateAccount, [
            id,
            change.tier ?? null,
            change.limitOverrides === undefined ? null : JSON.stringify(change.limitOverrides),
          ])
        ).rows[0]!;
        const after = toAccount(row);
        await audit.record(client, id, newAuditEvent(accountAudit.update(toAccount(old), after)));
        return after;
      });
    },
    async getAccountByName(name: string): Promise<AccountRecord | null> {
      const row = (await db.query<AccountRow>(sql.accountByName, [name]))[0];
      return row ? toAccount(row) : null;
    },
    async listAccounts(): Promise<AccountRecord[]> {
      return (await db.query<AccountRow>(sql.accounts, [])).map(toAccount);
    },
    async createApiKey(input: NewApiKey): Promise<ApiKeyRecord> {
      return db.transaction((client) => insertApiKey(client, input));
    },
    async createApiKeyUnderKey(
      input: NewApiKey,
      key: CreateUnderKey & { secret: Uint8Array },
    ): Promise<KeyedCreate<{ apiKey: ApiKeyRecord; secret: Uint8Array }>> {
      return db.transaction(async (client) => {
        // The account's lock, as every create under a key takes it.
        if ((await client.query(sql.lockAccount, [input.accountId])).rowCount === 0) {
          throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
        }
        return underKey(
          client,
          input.accountId,
          key,
          async () => {
            const apiKey = await insertApiKey(client, input);
            return { created: { apiKey, secret: key.secret }, record: apiKey, secret: key.secret };
          },
          async (made) => {
            const row = (await client.query<ApiKeyRow>(sql.apiKey, [made.resourceId])).rows[0];
            return {
              apiKey: apiKeyAsCreated(made, () =>
                row?.account_id === input.accountId ? toApiKey(row) : null,
              ),
              secret: made.secret ?? new Uint8Array(),
            };
          },
        );
      });
    },
    async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
      return (await db.query<ApiKeyRow>(sql.apiKeys, [accountId])).map(toApiKey);
    },
    async revokeApiKey(id: string, accountId?: string): Promise<ApiKeyRecord | null> {
      return db.transaction(async (client) => {
        const at = now();
        const row = (await client.query<ApiKeyRow>(sql.revokeApiKey, [id, at, accountId ?? null])).rows[0];
        if (!row) return null;
        const key = toApiKey(row);
        // Revoking again keeps the first time, and changes nothing to record.
        if (key.revokedAt === at)
          await audit.record(client, key.accountId, newAuditEvent(keyAudit.revoke(key)));
        return key;
      });
    },
    async findApiKeyBySha256(sha256: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null> {
      type Row = ApiKeyRow &
        Pick<AccountRow, "tier" | "limit_overrides"> & {
          account_name: string;
          account_created_at: Date;
        };
      const row = (await db.query<Row>(sql.apiKeyWithAccount, [sha256]))[0];
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
    },
    async touchApiKeys(lastUsed: ReadonlyMap<string, string>): Promise<void> {
      if (lastUsed.size === 0) return;
      const ids = [...lastUsed.keys()];
      // Normalised so that an offset or a missing millisecond part compares as the time it is.
      const times = ids.map((id) => new Date(lastUsed.get(id)!).toISOString());
      await db.transaction(async (client) => {
        await client.query(sql.lockApiKeys, [ids]);
        await client.query(sql.touchApiKeys, [ids, times]);
      });
    },
  };
  return { store, lockAccount, accountById: sql.accountById };
}
