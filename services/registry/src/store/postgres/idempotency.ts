import { idempotencyKeyInUse } from "@agentry/errors";
import type { PgDatabase } from "@agentry/pg";
import type pg from "pg";
import {
  claimedRecord,
  createdRecord,
  decideClaim,
  decideCreate,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type MadeUnderKey,
} from "../idempotency.js";
import type { CreateUnderKey, IdempotencyBegin, IdempotencyStore, KeyedCreate } from "../types.js";

function statements(s: string) {
  return {
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

/**
 * The records of Idempotency-Keys, and the creates made under one (`underKey`), for the agents' and the API keys'
 * transactions.
 */
export function postgresIdempotency(db: PgDatabase, schema: string) {
  const sql = statements(schema);
  /**
   * Decides a create under `key` in the transaction of `client`, which holds the account's lock (`decideCreate`),
   * then runs `create` and writes the key's finished record with it, or answers what the key's own create made
   * (`replay`) or kept.
   */
  async function underKey<T>(
    client: pg.PoolClient,
    accountId: string,
    key: CreateUnderKey,
    create: () => Promise<{ created: T; record: { id: string; createdAt: string }; secret?: Uint8Array }>,
    replay: (made: MadeUnderKey) => Promise<T>,
  ): Promise<KeyedCreate<T>> {
    const row = (await client.query<IdempotencyRow>(sql.idempotencyKeyForUpdate, [accountId, key.keyHash]))
      .rows[0];
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
    if (row) await client.query(sql.updateIdempotencyKey, values);
    else if ((await client.query(sql.insertIdempotencyKey, values)).rowCount !== 1) {
      // A claim made through IdempotencyService (which takes no account lock) got the key first.
      throw idempotencyKeyInUse();
    }
    return { outcome: "created", created };
  }

  const store: IdempotencyStore = {
    async beginIdempotentRequest(claim: IdempotencyClaim): Promise<IdempotencyBegin> {
      return db.transaction(async (client) => {
        const read = async () =>
          (await client.query<IdempotencyRow>(sql.idempotencyKeyForUpdate, [claim.accountId, claim.keyHash]))
            .rows[0];
        let row = await read();
        if (!row) {
          const first = claimedRecord(claim, Date.now());
          const inserted = await client.query(sql.insertIdempotencyKey, idempotencyValues(claim, first));
          if (inserted.rowCount === 1) return { outcome: "started" } as const;
          // Another claim inserted it first and has committed: its row is now there to lock and decide on.
          row = await read();
        }
        const decision = decideClaim(row ? toIdempotencyRecord(row) : null, claim, Date.now());
        if (decision.write) {
          await client.query(
            row ? sql.updateIdempotencyKey : sql.insertIdempotencyKey,
            idempotencyValues(claim, decision.write),
          );
        }
        return decision.answer;
      });
    },
    async completeIdempotentRequest(
      accountId: string,
      keyHash: string,
      response: { status: number; sealed: Uint8Array },
    ): Promise<void> {
      await db.query(sql.completeIdempotencyKey, [
        accountId,
        keyHash,
        response.status,
        Buffer.from(response.sealed),
        null,
      ]);
    },
    async releaseIdempotentRequest(accountId: string, keyHash: string): Promise<void> {
      await db.query(sql.releaseIdempotencyKey, [accountId, keyHash]);
    },
    async deleteExpiredIdempotencyKeys(limit: number): Promise<number> {
      return db.transaction(
        async (client) =>
          (await client.query(sql.deleteExpiredIdempotencyKeys, [Date.now(), limit])).rowCount ?? 0,
      );
    },
  };
  return { store, underKey, completeIdempotencyKey: sql.completeIdempotencyKey };
}
