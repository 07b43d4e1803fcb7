import type { GroupCommit } from "@agentry/sqlite";
import type Database from "better-sqlite3";
import {
  createdRecord,
  decideClaim,
  decideCreate,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type MadeUnderKey,
} from "../idempotency.js";
import type { CreateUnderKey, IdempotencyBegin, IdempotencyStore, KeyedCreate } from "../types.js";
import { BOOKKEEPING, preparer } from "./shared.js";

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

/**
 * The records of Idempotency-Keys, and the creates made under one (`underKey`), for the agents' and the API keys'
 * transactions.
 */
export function sqliteIdempotency(db: Database.Database, group: GroupCommit) {
  const prepare = preparer(db);
  const sql = {
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

  const beginIdempotentRequest = db.transaction((claim: IdempotencyClaim): IdempotencyBegin => {
    const row = sql.idempotencyKey.get(claim.accountId, claim.keyHash);
    const decision = decideClaim(row ? toIdempotencyRecord(row) : null, claim, Date.now());
    if (decision.write) sql.writeIdempotencyKey.run(idempotencyBind(claim, decision.write));
    return decision.answer;
  });

  const store: IdempotencyStore = {
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
  };
  return { store, underKey, completeIdempotencyKey: sql.completeIdempotencyKey };
}
