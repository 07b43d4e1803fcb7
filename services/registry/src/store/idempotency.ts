/**
 * The rules of Idempotency-Key records (decisions.md, "Idempotency, background messages, resumable streams,
 * fallbacks"), above the stores: each store reads the record under a lock, asks `decideClaim` what to do, and
 * writes what it says in the same transaction.
 */

/** How long a key's record is kept: 24 hours from the request that first claimed it. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** A request's claim on a key (IdempotencyService.BeginRequest). */
export interface IdempotencyClaim {
  accountId: string;
  /** The SHA-256 of the key, in lowercase hex. */
  keyHash: string;
  fingerprint: string;
  /** How long the claim holds before another request may take the key over. */
  leaseMs: number;
}

/** A key's record as a store holds it. Times are epoch milliseconds. */
export interface IdempotencyRecord {
  fingerprint: string;
  /** Until when the claiming request holds the key; null once its response is stored. */
  leaseUntil: number | null;
  expiresAt: number;
  status: number | null;
  sealed: Uint8Array | null;
  resourceId: string | null;
}

/** The response a finished request left under its key. */
export interface StoredIdempotentResponse {
  status: number;
  /** The response, sealed by the gateway; null when only the created resource's id was stored with it. */
  sealed: Uint8Array | null;
  resourceId: string | null;
}

export type IdempotencyBegin =
  | { outcome: "started" }
  | { outcome: "stored"; response: StoredIdempotentResponse }
  | { outcome: "in_use" }
  | { outcome: "reused" };

/** What a store does with a claim: the answer, and the record to write (none when it stays as it is). */
export interface ClaimDecision {
  answer: IdempotencyBegin;
  write: IdempotencyRecord | null;
}

/** A fresh claim's record: held for the lease, kept for 24 hours. */
export function claimedRecord(claim: IdempotencyClaim, now: number): IdempotencyRecord {
  return {
    fingerprint: claim.fingerprint,
    leaseUntil: now + claim.leaseMs,
    expiresAt: now + IDEMPOTENCY_TTL_MS,
    status: null,
    sealed: null,
    resourceId: null,
  };
}

/**
 * Decides a claim on a key given its record (null when there is none). An expired record counts as none. Another
 * fingerprint is REUSED whatever the record's state; a finished request's response is replayed; a running one is
 * IN_USE until its lease runs out, after which the claim takes the key over (the request that held it is presumed
 * lost with its process) and keeps its 24 hours.
 */
export function decideClaim(
  record: IdempotencyRecord | null,
  claim: IdempotencyClaim,
  now: number,
): ClaimDecision {
  if (record === null || record.expiresAt <= now) {
    return { answer: { outcome: "started" }, write: claimedRecord(claim, now) };
  }
  if (record.fingerprint !== claim.fingerprint) return { answer: { outcome: "reused" }, write: null };
  if (record.status !== null) {
    return {
      answer: {
        outcome: "stored",
        response: { status: record.status, sealed: record.sealed, resourceId: record.resourceId },
      },
      write: null,
    };
  }
  if (record.leaseUntil !== null && record.leaseUntil > now)
    return { answer: { outcome: "in_use" }, write: null };
  return { answer: { outcome: "started" }, write: { ...record, leaseUntil: now + claim.leaseMs } };
}
