import { AsyncLocalStorage } from "node:async_hooks";
import { newId, timeOfId } from "./ids.js";
import { removeInBatches } from "./periodic.js";

/** Who made a change: a console session's member, an API key, or the admin CLI (docs/api/audit.md). */
export const AUDIT_ACTOR_TYPES = ["member", "key", "cli"] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];
export interface AuditActor {
  type: AuditActorType;
  /** The member's or key's id; null for the CLI. */
  id: string | null;
}

/** Where a change came from, as the gateway passes it to a service with each call (AUDIT_HEADERS). */
export interface AuditStamp {
  actor: AuditActor;
  ip: string | null;
  requestId: string | null;
}

/** `{field: {from, to}}` of the fields a change changed. */
export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

/** One change to record, in the transaction that makes it. */
export interface AuditEntry {
  /** `<resource>.<verb>`: `agent.create`, `key.revoke`, `secret.set`, ... */
  action: string;
  target: { type: string; id: string };
  changes?: AuditChanges | null;
}

/** A recorded change, as the stores keep it and `GET /v1/audit-events` shows it. */
export interface AuditEvent {
  id: string;
  at: string;
  actor: AuditActor;
  action: string;
  target: { type: string; id: string };
  ip: string | null;
  requestId: string | null;
  changes: AuditChanges | null;
}

/** What stands for a value that must never be recorded: a secret's value, a key's secret, a signing secret. */
export const REDACTED = "[redacted]";

/** The headers that carry a call's AuditStamp from the gateway (or the CLI) to the service that makes the change. */
export const AUDIT_HEADERS = {
  actorType: "x-agentry-actor-type",
  actorId: "x-agentry-actor-id",
  ip: "x-agentry-client-ip",
  requestId: "x-request-id",
} as const;

/** The CLI's stamp: the admin CLI acts on the account's behalf, as no member or key. */
export const CLI_STAMP: AuditStamp = { actor: { type: "cli", id: null }, ip: null, requestId: null };

const ACTOR_ID = /^[\w-]{1,64}$/;
const IP = /^[0-9A-Fa-f:.]{1,64}$/;
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The headers that carry a stamp. */
export function auditHeaders(stamp: AuditStamp): Record<string, string> {
  const headers: Record<string, string> = { [AUDIT_HEADERS.actorType]: stamp.actor.type };
  if (stamp.actor.id) headers[AUDIT_HEADERS.actorId] = stamp.actor.id;
  if (stamp.ip) headers[AUDIT_HEADERS.ip] = stamp.ip;
  if (stamp.requestId) headers[AUDIT_HEADERS.requestId] = stamp.requestId;
  return headers;
}

const scope = new AsyncLocalStorage<AuditStamp>();

/**
 * Runs `work` as the change of `stamp`'s actor: the stores record every change made within it with this stamp.
 * Each served RPC runs in the stamp its headers carry (`auditScopeInterceptor` of @agentry/rpc).
 */
export function withAuditStamp<T>(stamp: AuditStamp, work: () => T): T {
  return scope.run(stamp, work);
}

/**
 * Who is making the current change; null for a service's own work (a schedule of a deleted agent removed, an
 * agent's health), which no one made and the audit log does not record. The admin CLI runs its commands with
 * CLI_STAMP.
 */
export function currentAuditStamp(): AuditStamp | null {
  return scope.getStore() ?? null;
}

/**
 * The stamp a call's headers carry, or null when they carry none.
 */
export function auditStampIn(headers: { get(name: string): string | null }): AuditStamp | null {
  return headers.get(AUDIT_HEADERS.actorType) === null ? null : auditStampOf(headers);
}

/**
 * The stamp a call's headers carry; an actor the headers do not name properly is the CLI (the admin tools call
 * the services with `x-agentry-actor-type: cli`).
 */
export function auditStampOf(headers: { get(name: string): string | null }): AuditStamp {
  const type = headers.get(AUDIT_HEADERS.actorType);
  const id = headers.get(AUDIT_HEADERS.actorId);
  const ip = headers.get(AUDIT_HEADERS.ip);
  const requestId = headers.get(AUDIT_HEADERS.requestId);
  const actor: AuditActor =
    (type === "member" || type === "key") && id && ACTOR_ID.test(id)
      ? { type, id }
      : { type: "cli", id: null };
  return {
    actor,
    ip: ip && IP.test(ip) ? ip : null,
    requestId: requestId && REQUEST_ID.test(requestId) ? requestId : null,
  };
}

/**
 * The fields whose values differ between two versions of a record, as `{field: {from, to}}`, or null when none
 * does. Fields named in `redacted` show `"[redacted]"` on both sides: that they changed is recorded, never what
 * to.
 */
export function auditChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  redacted: readonly string[] = [],
): AuditChanges | null {
  const changes: AuditChanges = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) === JSON.stringify(to)) continue;
    changes[field] = redacted.includes(field) ? { from: REDACTED, to: REDACTED } : { from, to };
  }
  return Object.keys(changes).length > 0 ? changes : null;
}

/**
 * A new event for an entry, stamped now (with the current change's stamp unless given); its id sorts after every
 * id this process made before it. Null when there is no stamp: nothing to record.
 */
export function newAuditEvent(
  entry: AuditEntry,
  stamp: AuditStamp | null = currentAuditStamp(),
): AuditEvent | null {
  if (stamp === null) return null;
  const id = newId("audit");
  return {
    id,
    at: new Date(timeOfId(id)).toISOString(),
    actor: stamp.actor,
    action: entry.action,
    target: entry.target,
    ip: stamp.ip,
    requestId: stamp.requestId,
    changes: entry.changes ?? null,
  };
}

/** Filters and page of an audit listing, as every store takes them. */
export interface AuditQuery {
  limit: number;
  before?: string;
  after?: string;
  ascending: boolean;
  actorType?: AuditActorType;
  actorId?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  /** ISO-8601, inclusive. */
  since?: string;
  /** ISO-8601, exclusive. */
  until?: string;
}

/** How long events are kept by default (AUDIT_RETENTION_DAYS; 0 keeps them forever). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Removes the events older than `retentionDays` (none when it is 0) through a store's `prune(before, limit)`, in
 * batches; how many it removed.
 */
export async function pruneAuditEvents(
  retentionDays: number,
  prune: (before: string, limit: number) => Promise<number>,
  now = Date.now(),
): Promise<number> {
  if (retentionDays <= 0) return 0;
  const before = new Date(now - retentionDays * DAY_MS).toISOString();
  return removeInBatches((limit) => prune(before, limit), 1000);
}
