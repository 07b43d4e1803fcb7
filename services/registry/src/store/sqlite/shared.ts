import type Database from "better-sqlite3";

export function now(): string {
  return new Date().toISOString();
}

/** Prepares statements on `db` with their parameter and row types. */
export function preparer(db: Database.Database) {
  return <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
}

/**
 * Writes a power loss may take back without much harm, committed without waiting for the disk when nothing
 * else waits with them (they still survive the process being killed): a key's last use, and an Idempotency-Key's
 * claim and stored answer. After a power loss a retry with the key runs its request again, except a create,
 * which finds the agent its key was stored with in the create's own (durable) transaction.
 */
export const BOOKKEEPING = { durable: false };
