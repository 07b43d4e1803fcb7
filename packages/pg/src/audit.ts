import type pg from "pg";
import type { PgDatabase } from "./database.js";

/*
 * An audit log table, the same in every service's Postgres schema: each service records the changes it makes in
 * its own schema, in the transaction of the change (docs/api/audit.md).
 */

/** An audit event as the stores keep it (the shape of `AuditEvent` in @agentry/core). */
export interface PgAuditRecord {
  id: string;
  at: string;
  actor: { type: "member" | "key" | "cli"; id: string | null };
  action: string;
  target: { type: string; id: string };
  ip: string | null;
  requestId: string | null;
  changes: Record<string, { from: unknown; to: unknown }> | null;
}

/** A page of an account's events and its filters (the shape of `AuditQuery` in @agentry/core). */
export interface PgAuditPageQuery {
  limit: number;
  before?: string;
  after?: string;
  ascending: boolean;
  actorType?: string;
  actorId?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  since?: string;
  until?: string;
}

/** The table, for a service's migration in schema `s`. */
export function pgAuditTable(s: string): string {
  return `
    CREATE TABLE ${s}.audit_events (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      at TIMESTAMPTZ NOT NULL,
      actor_type TEXT NOT NULL CHECK (actor_type IN ('member', 'key', 'cli')),
      actor_id TEXT,
      action TEXT NOT NULL,
      target_type TEXT NOT NULL,
      target_id TEXT NOT NULL,
      ip TEXT,
      request_id TEXT,
      changes JSONB
    );
    CREATE INDEX audit_events_by_account ON ${s}.audit_events (account_id, id);
    CREATE INDEX audit_events_by_time ON ${s}.audit_events (at);
  `;
}

interface AuditRow {
  id: string;
  account_id: string;
  at: Date;
  actor_type: PgAuditRecord["actor"]["type"];
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  ip: string | null;
  request_id: string | null;
  changes: PgAuditRecord["changes"];
}

function toRecord(row: AuditRow): PgAuditRecord {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: { type: row.actor_type, id: row.actor_id },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    ip: row.ip,
    requestId: row.request_id,
    changes: row.changes,
  };
}

function pageSql(query: PgAuditPageQuery, first: number) {
  const values: unknown[] = [];
  const conditions: string[] = [];
  const add = (condition: (p: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(condition(`$${first + values.length - 1}`));
  };
  const equal: [string, string | undefined][] = [
    ["actor_type", query.actorType],
    ["actor_id", query.actorId],
    ["action", query.action],
    ["target_type", query.targetType],
    ["target_id", query.targetId],
  ];
  for (const [column, value] of equal) if (value) add((p) => `${column} = ${p}`, value);
  if (query.since) add((p) => `at >= ${p}::timestamptz`, query.since);
  if (query.until) add((p) => `at < ${p}::timestamptz`, query.until);
  let order: "ASC" | "DESC" = query.ascending ? "ASC" : "DESC";
  let reverse = false;
  if (query.after) {
    add((p) => `id > ${p}`, query.after);
    order = "ASC";
    reverse = !query.ascending;
  } else if (query.before) {
    add((p) => `id < ${p}`, query.before);
    order = "DESC";
    reverse = query.ascending;
  }
  return { where: conditions.map((c) => ` AND ${c}`).join(""), order, reverse, values };
}

/** A service's audit log in its Postgres schema. `record` runs on the caller's transaction's connection; a null event (no one made the change) records nothing. */
export function pgAuditLog(db: PgDatabase, s: string) {
  const insert = `INSERT INTO ${s}.audit_events (id, account_id, at, actor_type, actor_id, action, target_type,
    target_id, ip, request_id, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;
  return {
    async record(client: pg.PoolClient, accountId: string, event: PgAuditRecord | null): Promise<void> {
      if (event === null) return;
      await client.query(insert, [
        event.id,
        accountId,
        event.at,
        event.actor.type,
        event.actor.id,
        event.action,
        event.target.type,
        event.target.id,
        event.ip,
        event.requestId,
        event.changes === null ? null : JSON.stringify(event.changes),
      ]);
    },
    async list(accountId: string, query: PgAuditPageQuery) {
      const page = pageSql(query, 2);
      const rows = await db.query<AuditRow>(
        `SELECT * FROM ${s}.audit_events WHERE account_id = $1${page.where}
          ORDER BY id ${page.order} LIMIT $${page.values.length + 2}`,
        [accountId, ...page.values, query.limit + 1],
      );
      const items = rows.slice(0, query.limit).map(toRecord);
      if (page.reverse) items.reverse();
      return { items, hasMore: rows.length > query.limit };
    },
    /** Removes up to `limit` events older than `before` (ISO-8601); how many it removed. */
    async prune(before: string, limit: number): Promise<number> {
      const rows = await db.query(
        `DELETE FROM ${s}.audit_events WHERE id IN
          (SELECT id FROM ${s}.audit_events WHERE at < $1::timestamptz LIMIT $2) RETURNING id`,
        [before, limit],
      );
      return rows.length;
    },
  };
}

export type PgAuditLog = ReturnType<typeof pgAuditLog>;
