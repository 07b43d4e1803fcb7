import {
  type AuditStamp,
  currentAuditStamp,
  type Limits,
  newAuditEvent,
  newId,
  type Tier,
} from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { GroupCommit, SqliteAuditLog } from "@agentry/sqlite";
import Database from "better-sqlite3";
import { accountAudit, keyAudit } from "../audit.js";
import { apiKeyAsCreated } from "../idempotency.js";
import { FIRST_OWNER_NAME, normalEmail } from "../members.js";
import { scopesColumn, scopesOfColumn } from "../scopes.js";
import type { AccountRecord, AccountStore, ApiKeyRecord, CreateUnderKey, NewApiKey } from "../types.js";
import type { sqliteIdempotency } from "./idempotency.js";
import { memberStatements } from "./members.js";
import { BOOKKEEPING, now, preparer } from "./shared.js";

export interface AccountRow {
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
  created_by: string | null;
}

export function toAccount(row: AccountRow): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier,
    limitOverrides: JSON.parse(row.limit_overrides) as Partial<Limits>,
    createdAt: row.created_at,
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
    createdBy: row.created_by,
  };
}

/**
 * Accounts and their API keys; `accountById` for the other aggregates' checks of an account, in their
 * transactions.
 */
export function sqliteAccounts(
  db: Database.Database,
  group: GroupCommit,
  { underKey }: Pick<ReturnType<typeof sqliteIdempotency>, "underKey">,
  audit: SqliteAuditLog,
) {
  const prepare = preparer(db);
  const sql = {
    accountById: prepare<[string], AccountRow>("SELECT * FROM accounts WHERE id = ?"),
    accountByName: prepare<[string], AccountRow>("SELECT * FROM accounts WHERE name = ?"),
    accounts: prepare<[], AccountRow>("SELECT * FROM accounts ORDER BY created_at, id"),
    insertAccount: prepare<[string, string, string, string, string]>(
      "INSERT INTO accounts (id, name, tier, limit_overrides, created_at) VALUES (?, ?, ?, ?, ?)",
    ),
    updateAccount: prepare<[string, string, string]>(
      "UPDATE accounts SET tier = ?, limit_overrides = ? WHERE id = ?",
    ),
    insertApiKey: prepare<
      [string, string, string, string, string, string, string, string | null, string | null]
    >(
      `INSERT INTO api_keys (id, account_id, name, sha256, prefix, scopes, created_at, expires_at, created_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    apiKey: prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE id = ?"),
    apiKeyBySha256: prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE sha256 = ?"),
    apiKeys: prepare<[string], ApiKeyRow>(
      "SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id",
    ),
    revokeApiKey: prepare<[string, string]>(
      "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    ),
    touchApiKey: prepare<[{ id: string; at: string }]>(
      "UPDATE api_keys SET last_used_at = @at WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @at)",
    ),
  };

  const updateAccount = db.transaction(
    (
      id: string,
      change: { tier?: Tier; limitOverrides?: Partial<Limits> },
      stamp: AuditStamp | null,
    ): AccountRecord | null => {
      const row = sql.accountById.get(id);
      if (!row) return null;
      const before = toAccount(row);
      const after: AccountRecord = {
        ...before,
        tier: change.tier ?? before.tier,
        limitOverrides: { ...(change.limitOverrides ?? before.limitOverrides) },
      };
      sql.updateAccount.run(after.tier, JSON.stringify(after.limitOverrides), id);
      audit.record(id, newAuditEvent(accountAudit.update(before, after), stamp));
      return after;
    },
  );

  const insertApiKey = (input: NewApiKey, stamp: AuditStamp | null): ApiKeyRecord => {
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
      createdBy: input.createdBy ?? null,
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
      key.createdBy,
    );
    audit.record(key.accountId, newAuditEvent(keyAudit.create(key), stamp));
    return key;
  };

  const createApiKey = db.transaction(insertApiKey);

  const createApiKeyUnderKey = db.transaction(
    (input: NewApiKey, key: CreateUnderKey & { secret: Uint8Array }, stamp: AuditStamp | null) =>
      underKey(
        input.accountId,
        key,
        () => {
          const apiKey = insertApiKey(input, stamp);
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

  const revokeApiKey = db.transaction(
    (id: string, accountId: string | undefined, stamp: AuditStamp | null): ApiKeyRecord | null => {
      const row = sql.apiKey.get(id);
      if (!row || (accountId !== undefined && row.account_id !== accountId)) return null;
      const revoked = sql.revokeApiKey.run(now(), id).changes > 0;
      const key = toApiKey(sql.apiKey.get(id)!);
      if (revoked) audit.record(key.accountId, newAuditEvent(keyAudit.revoke(key), stamp));
      return key;
    },
  );

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

  const members = memberStatements(db);
  const createAccount = db.transaction(
    (input: Parameters<AccountStore["createAccount"]>[0], stamp: AuditStamp | null) => {
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
      members.insertMember.run(
        newId("member"),
        account.id,
        input.owner?.email ? normalEmail(input.owner.email) : null,
        input.owner?.name || FIRST_OWNER_NAME,
        "owner",
        account.createdAt,
      );
      audit.record(account.id, newAuditEvent(accountAudit.create(account), stamp));
      return account;
    },
  );

  const store: AccountStore = {
    async createAccount(input) {
      return createAccount.immediate(input, currentAuditStamp());
    },
    async getAccount(id) {
      const row = sql.accountById.get(id);
      return row ? toAccount(row) : null;
    },
    async updateAccount(id, change) {
      return updateAccount.immediate(id, change, currentAuditStamp());
    },
    async getAccountByName(name) {
      const row = sql.accountByName.get(name);
      return row ? toAccount(row) : null;
    },
    async listAccounts() {
      return sql.accounts.all().map(toAccount);
    },

    async createApiKey(input) {
      const stamp = currentAuditStamp();
      return group.run(() => createApiKey(input, stamp));
    },
    async createApiKeyUnderKey(input, key) {
      const stamp = currentAuditStamp();
      return group.run(() => createApiKeyUnderKey(input, key, stamp));
    },
    async listApiKeys(accountId) {
      return sql.apiKeys.all(accountId).map(toApiKey);
    },
    async revokeApiKey(id, accountId) {
      const stamp = currentAuditStamp();
      return group.run(() => revokeApiKey(id, accountId, stamp));
    },
    async findApiKeyBySha256(sha256) {
      return findApiKey.deferred(sha256);
    },
    async touchApiKeys(lastUsed) {
      if (lastUsed.size > 0) await group.run(() => touchApiKeys(lastUsed), BOOKKEEPING);
    },
  };
  return { store, accountById: sql.accountById };
}
