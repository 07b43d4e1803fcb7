import type Database from "better-sqlite3";

/*
 * An audit log table, the same in every service's SQLite store: each service records the changes it makes in its
 * own database, in the transaction of the change (docs/api/audit.md).
 */

/** An audit event as the stores keep it (the shape of `AuditEvent` in @agentry/core). */
export interface AuditRecord {
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
export interface AuditPageQuery {
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

/** The table, for a service's migration. */
export const SQLITE_AUDIT_TABLE = `
  CREATE TABLE audit_events (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor_type TEXT NOT NULL CHECK (actor_type IN ('member', 'key', 'cli')),
    actor_id TEXT,
    action TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id TEXT NOT NULL,
    ip TEXT,
    request_id TEXT,
    changes TEXT
  ) STRICT;
  CREATE INDEX audit_events_by_account ON audit_events (account_id, id);
  CREATE INDEX audit_events_by_time ON audit_events (at);
`;

interface AuditRow {
  id: string;
  account_id: string;
  at: string;
  actor_type: AuditRecord["actor"]["type"];
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  ip: string | null;
  request_id: string | null;
  changes: string | null;
}

function toRecord(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    at: row.at,
    actor: { type: row.actor_type, id: row.actor_id },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    ip: row.ip,
    requestId: row.request_id,
    changes: row.changes === null ? null : JSON.parse(row.changes),
  };
}

/** The conditions and order of a page: shared by the SQLite and Postgres stores through `auditPageSql`. */
export function auditPageSql(
  query: AuditPageQuery,
  placeholder: (index: number) => string,
  time: (value: string) => unknown = (value) => value,
): { where: string; order: "ASC" | "DESC"; reverse: boolean; values: unknown[] } {
  const values: unknown[] = [];
  const conditions: string[] = [];
  const add = (condition: (p: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(condition(placeholder(values.length)));
  };
  const equal: [string, string | undefined][] = [
    ["actor_type", query.actorType],
    ["actor_id", query.actorId],
    ["action", query.action],
    ["target_type", query.targetType],
    ["target_id", query.targetId],
  ];
  for (const [column, value] of equal) if (value) add((p) => `${column} = ${p}`, value);
  if (query.since) add((p) => `at >= ${p}`, time(query.since));
  if (query.until) add((p) => `at < ${p}`, time(query.until));
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

/** The page of rows read with one more than `limit`, in the query's order. */
export function auditPageOf<T>(rows: T[], limit: number, reverse: boolean): { items: T[]; hasMore: boolean } {
  const items = rows.slice(0, limit);
  if (reverse) items.reverse();
  return { items, hasMore: rows.length > limit };
}

/** A service's audit log in its SQLite database. `record` runs inside the caller's transaction; a null event (no one made the change) records nothing. */
export function sqliteAuditLog(db: Database.Database) {
  const insert = db.prepare(
    `INSERT INTO audit_events (id, account_id, at, actor_type, actor_id, action, target_type, target_id, ip,
      request_id, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const prune = db.prepare<[string, number]>(
    "DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < ? LIMIT ?)",
  );
  return {
    record(accountId: string, event: AuditRecord | null): void {
      if (event === null) return;
      insert.run(
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
      );
    },
    list(accountId: string, query: AuditPageQuery): { items: AuditRecord[]; hasMore: boolean } {
      const page = auditPageSql(query, () => "?");
      const rows = db
        .prepare<unknown[], AuditRow>(
          `SELECT * FROM audit_events WHERE account_id = ?${page.where} ORDER BY id ${page.order} LIMIT ?`,
        )
        .all(accountId, ...page.values, query.limit + 1);
      return auditPageOf(rows.map(toRecord), query.limit, page.reverse);
    },
    /** Removes up to `limit` events older than `before` (ISO-8601); how many it removed. */
    prune(before: string, limit: number): number {
      return prune.run(before, limit).changes;
    },
  };
}

export type SqliteAuditLog = ReturnType<typeof sqliteAuditLog>;
