/**
 * The rules of Idempotency-Key records (docs/api/messages-and-streams.md,
 * "Idempotency"), above the stores: each store reads the record under a lock, asks `decideClaim` what to do, and
 * writes what it says in the same transaction.
 */

import { IDEMPOTENCY_KEY_TTL_MS } from "@agentry/core";
import { AppError, idempotencyKeyInUse, idempotencyKeyReused } from "@agentry/errors";
import { newAgent } from "./status.js";
import type { AgentFields, AgentRecord, ApiKeyRecord } from "./types.js";

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
  /** When a create under the key made its resource (`createdRecord`), epoch milliseconds; null for any other request. */
  createdAt: number | null;
  /** A new API key's secret, sealed by the caller (`createdRecord`); null for any other request. */
  secret: Uint8Array | null;
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
    expiresAt: now + IDEMPOTENCY_KEY_TTL_MS,
    status: null,
    sealed: null,
    resourceId: null,
    createdAt: null,
    secret: null,
  };
}

/**
 * The record a create leaves when it claims its key in its own transaction (`createAgentUnderKey`,
 * `createApiKeyUnderKey`): finished at once, with the resource's id and creation time, and an API key's secret
 * sealed by the caller. A retry is the same request, byte for byte, so its fields with these make an agent as it
 * was created (`decideCreate`): nothing else of the resource is kept with the key.
 */
export function createdRecord(
  fingerprint: string,
  created: { id: string; createdAt: string },
  now: number,
  secret: Uint8Array | null = null,
): IdempotencyRecord {
  return {
    fingerprint,
    leaseUntil: null,
    expiresAt: now + IDEMPOTENCY_KEY_TTL_MS,
    status: 201,
    sealed: null,
    resourceId: created.id,
    createdAt: Date.parse(created.createdAt),
    secret,
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

/** A create's claim on its Idempotency-Key, made in the create's own transaction. */
export interface CreateUnderKey {
  /** The SHA-256 of the key, in lowercase hex. */
  keyHash: string;
  fingerprint: string;
}

/** How a create under a key was answered. */
export type KeyedCreate<T> =
  | { outcome: "created"; created: T }
  /** The key's create had made this (as it was created); nothing was made now. */
  | { outcome: "replayed"; created: T }
  /** The key holds another answer of the same request (a refusal kept through `completeIdempotentRequest`). */
  | { outcome: "stored"; response: StoredIdempotentResponse };

/** What the key's own create made, as its record keeps it (`createdRecord`, or an earlier release's id alone). */
export interface MadeUnderKey {
  resourceId: string;
  /** Epoch milliseconds; null in a record of an earlier release. */
  createdAt: number | null;
  secret: Uint8Array | null;
}

/**
 * Decides a create under a key given the key's record, as `decideClaim` decides a claim: "create" when the key is
 * free (no record, an expired one, or a claim whose lease ran out), what the key's create made, or another answer
 * kept under the key. Another request's key and a running claim are refused with AppError IDEMPOTENCY_KEY_REUSED
 * and IDEMPOTENCY_KEY_IN_USE.
 */
export function decideCreate(
  record: IdempotencyRecord | null,
  claim: CreateUnderKey & { accountId: string },
  now: number,
):
  | "create"
  | { outcome: "made"; made: MadeUnderKey }
  | { outcome: "stored"; response: StoredIdempotentResponse } {
  const { answer } = decideClaim(record, { ...claim, leaseMs: 0 }, now);
  switch (answer.outcome) {
    case "started":
      return "create";
    case "reused":
      throw idempotencyKeyReused();
    case "in_use":
      throw idempotencyKeyInUse();
  }
  const { response } = answer;
  if (response.resourceId !== null && (record?.createdAt != null || response.sealed === null)) {
    const made = {
      resourceId: response.resourceId,
      createdAt: record?.createdAt ?? null,
      secret: record?.secret ?? null,
    };
    return { outcome: "made", made };
  }
  return { outcome: "stored", response };
}

/**
 * The agent a key's create made, as it was created: made again from `fields`, the same request's, with its id and
 * creation time; one kept by a gateway of an earlier release (its id alone) is read as it is now with `current`.
 */
export function agentAsCreated(
  made: MadeUnderKey,
  accountId: string,
  fields: AgentFields,
  current: (agentId: string) => AgentRecord | null,
): AgentRecord {
  if (made.createdAt !== null) {
    return newAgent(accountId, fields, new Date(made.createdAt).toISOString(), made.resourceId);
  }
  const agent = current(made.resourceId);
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${made.resourceId} does not exist.`);
  return agent;
}

/** The API key a key's create made, as it was created (never used, not revoked), read with `current`. */
export function apiKeyAsCreated(
  made: MadeUnderKey,
  current: (id: string) => ApiKeyRecord | null,
): ApiKeyRecord {
  const key = current(made.resourceId);
  // An API key is removed only with its account, and its records with it.
  if (!key) throw new AppError("INTERNAL_ERROR", `API key ${made.resourceId} of an Idempotency-Key is gone.`);
  return { ...key, lastUsedAt: null, revokedAt: null };
}
