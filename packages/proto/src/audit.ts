import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type AuditEvent, AuditEventSchema, type AuditQuery } from "./gen/agentry/registry/v1/audit_pb.js";

/*
 * Audit events and queries between their messages and the plain shapes of @agentry/core (`AuditEvent`,
 * `AuditQuery`), for the three services that record events and the gateway that reads them.
 */

/** An audit event as the stores and the public API hold it. */
export interface PlainAuditEvent {
  id: string;
  at: string;
  actor: { type: "member" | "key" | "cli"; id: string | null };
  action: string;
  target: { type: string; id: string };
  ip: string | null;
  requestId: string | null;
  changes: Record<string, { from: unknown; to: unknown }> | null;
}

/** An audit page's query in plain form; absent filters are absent. */
export interface PlainAuditQuery {
  limit: number;
  before?: string;
  after?: string;
  ascending: boolean;
  actorType?: "member" | "key" | "cli";
  actorId?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  since?: string;
  until?: string;
}

export function auditEventMessage(event: PlainAuditEvent): AuditEvent {
  return create(AuditEventSchema, {
    id: event.id,
    at: timestampFromDate(new Date(event.at)),
    actorType: event.actor.type,
    actorId: event.actor.id ?? "",
    action: event.action,
    targetType: event.target.type,
    targetId: event.target.id,
    ip: event.ip ?? "",
    requestId: event.requestId ?? "",
    changesJson: event.changes === null ? "" : JSON.stringify(event.changes),
  });
}

export function plainAuditEvent(message: AuditEvent): PlainAuditEvent {
  return {
    id: message.id,
    at: (message.at ? timestampDate(message.at) : new Date(0)).toISOString(),
    actor: {
      type: message.actorType === "member" || message.actorType === "key" ? message.actorType : "cli",
      id: message.actorId || null,
    },
    action: message.action,
    target: { type: message.targetType, id: message.targetId },
    ip: message.ip || null,
    requestId: message.requestId || null,
    changes: message.changesJson ? JSON.parse(message.changesJson) : null,
  };
}

/** The query a message carries; `accountId` is the message's too. */
export function plainAuditQuery(message: AuditQuery | undefined): PlainAuditQuery & { accountId: string } {
  const type = message?.actorType;
  return {
    accountId: message?.accountId ?? "",
    limit: message?.limit || 20,
    ascending: message?.ascending ?? false,
    ...(message?.before ? { before: message.before } : {}),
    ...(message?.after ? { after: message.after } : {}),
    ...(type === "member" || type === "key" || type === "cli" ? { actorType: type } : {}),
    ...(message?.actorId ? { actorId: message.actorId } : {}),
    ...(message?.action ? { action: message.action } : {}),
    ...(message?.targetType ? { targetType: message.targetType } : {}),
    ...(message?.targetId ? { targetId: message.targetId } : {}),
    ...(message?.since ? { since: timestampDate(message.since).toISOString() } : {}),
    ...(message?.until ? { until: timestampDate(message.until).toISOString() } : {}),
  };
}

/** The message of a query. */
export function auditQueryMessage(accountId: string, query: PlainAuditQuery) {
  return {
    accountId,
    limit: query.limit,
    ascending: query.ascending,
    before: query.before ?? "",
    after: query.after ?? "",
    actorType: query.actorType ?? "",
    actorId: query.actorId ?? "",
    action: query.action ?? "",
    targetType: query.targetType ?? "",
    targetId: query.targetId ?? "",
    ...(query.since ? { since: timestampFromDate(new Date(query.since)) } : {}),
    ...(query.until ? { until: timestampFromDate(new Date(query.until)) } : {}),
  };
}
