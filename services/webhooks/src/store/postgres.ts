/**
 * The webhooks service on Postgres, for deployments that run several instances (and so several delivery
 * workers) on one database. It passes the same contract suite as the SQLite store and keeps its semantics.
 *
 * - Every table lives in one schema (`webhooks` by default), so the services can share a database.
 * - Times are `timestamptz`, written from and read back as ISO 8601 strings with milliseconds in UTC, as the
 *   SQLite store keeps them; the clock is the workers' (kept in step by NTP, well within a lease).
 * - Claims: `FOR UPDATE SKIP LOCKED` over endpoints with due work and no live lease, so simultaneous claims
 *   by several workers each get other endpoints and never wait on one another. Under READ COMMITTED a row
 *   locked after another worker committed its lease is re-checked against the lease condition and dropped.
 * - Every transaction that changes an endpoint's attempts locks the endpoint's row first (`FOR UPDATE`), so
 *   attempt numbers are handed out one at a time per endpoint, and a claim never races a recorded outcome.
 * - The quota: a transaction-scoped advisory lock per account, then the count, so simultaneous creates of one
 *   account take turns and never exceed it.
 */
import { type AuditQuery, newAuditEvent, newId } from "@agentry/core";
import {
  openStoreDatabase,
  type PgAuditLog,
  type PgDatabase,
  type PgStoreOptions,
  pgAuditLog,
} from "@agentry/pg";
import type pg from "pg";
import { endpointAudit } from "../domain/audit.js";
import {
  assertDeliverable,
  assertEndpointQuota,
  deliveryNotFound,
  unknownCursor,
  webhookNotFound,
} from "../domain/endpoint.js";
import { subscribes } from "../domain/events.js";
import { ENDPOINT_DISABLED_ERROR, INTERRUPTED_ERROR, settleAttempt } from "../domain/schedule.js";
import { pageOf } from "./page.js";
import { migrationTarget } from "./postgres-migrations.js";
import { RESPONSE_BODY_KEPT_BYTES } from "./sqlite.js";
import type {
  Claim,
  ClaimRequest,
  Clock,
  CompleteRequest,
  CompleteResult,
  DeliveryPage,
  DeliveryPageQuery,
  DeliveryRecord,
  DeliveryStatus,
  EndpointFields,
  EndpointRecord,
  EventRecord,
  WebhookStore,
} from "./types.js";

export interface PostgresWebhookStoreOptions extends PgStoreOptions {
  clock?: Clock;
}

export const DEFAULT_WEBHOOKS_SCHEMA = "webhooks";

/** The advisory lock class of an account's endpoint quota. */
/**
 * Delivery bookkeeping (a claim, an attempt's outcome) commits without waiting for the WAL flush: delivery is at
 * least once, and what a server crash takes back is an attempt that then looks started and unrecorded, attempted
 * again once its lease lapses (sqlite.ts, `withoutFlush`).
 */
const BOOKKEEPING = "SET LOCAL synchronous_commit = off";

const QUOTA_LOCK_CLASS = 0x41475213;

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  retry_step: number | null;
  status: DeliveryStatus;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  created_at: Date;
  next_attempt_at: Date | null;
  started_at: Date | null;
  worker: string | null;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  data: string;
  created_at: Date;
}

function isoOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

function toEndpoint(row: EndpointRow): EndpointRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function toDelivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status,
    durationMs: row.duration_ms,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    nextAttemptAt: isoOrNull(row.next_attempt_at),
  };
}

function toEvent(row: EventRow): EventRecord {
  return {
    id: row.id,
    type: row.type,
    accountId: row.account_id,
    createdAt: row.created_at.toISOString(),
    data: row.data,
  };
}

function signingSecrets(row: EndpointRow, now: number): string[] {
  const previous =
    row.previous_secret !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at.getTime() > now
      ? [row.previous_secret]
      : [];
  return [row.secret, ...previous];
}

function statements(s: string) {
  const deliveryColumns = `d.id, d.endpoint_id, d.event_id, v.type AS event_type, d.attempt, d.retry_step,
    d.status, d.response_status, d.duration_ms, d.error, d.created_at, d.next_attempt_at, d.started_at, d.worker`;
  const fromDeliveries = `FROM ${s}.deliveries d JOIN ${s}.events v ON v.id = d.event_id`;
  return {
    endpoint: `SELECT * FROM ${s}.endpoints WHERE account_id = $1 AND id = $2`,
    endpointForUpdate: `SELECT * FROM ${s}.endpoints WHERE account_id = $1 AND id = $2 FOR UPDATE`,
    endpointByIdForUpdate: `SELECT * FROM ${s}.endpoints WHERE id = $1 FOR UPDATE`,
    endpoints: `SELECT * FROM ${s}.endpoints WHERE account_id = $1 ORDER BY id DESC`,
    // FOR SHARE: an endpoint being disabled meanwhile is read once that commits, and then left out.
    enabledEndpoints: `SELECT * FROM ${s}.endpoints WHERE account_id = ANY($1::text[]) AND enabled
      ORDER BY id FOR SHARE`,
    lockQuota: `SELECT pg_advisory_xact_lock(${QUOTA_LOCK_CLASS}, hashtext($1))`,
    countEndpoints: `SELECT count(*)::int AS n FROM ${s}.endpoints WHERE account_id = $1`,
    insertEndpoint: `INSERT INTO ${s}.endpoints
        (id, account_id, url, events, description, enabled, secret, created_at, updated_at, idempotency_key_hash)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) RETURNING *`,
    endpointUnderKey: `SELECT * FROM ${s}.endpoints
      WHERE account_id = $1 AND idempotency_key_hash = $2 AND created_at > $3
      ORDER BY created_at DESC LIMIT 1`,
    updateEndpoint: `UPDATE ${s}.endpoints SET url = $2, events = $3, description = $4, enabled = $5,
        disabled_reason = $6, failing_since = $7, updated_at = $8
      WHERE id = $1 RETURNING *`,
    rotate: `UPDATE ${s}.endpoints SET previous_secret = secret, secret = $2, previous_secret_expires_at = $3,
        updated_at = $4
      WHERE account_id = $5 AND id = $1 RETURNING *`,
    deleteEndpoint: `DELETE FROM ${s}.endpoints WHERE account_id = $1 AND id = $2`,
    disableEndpoint: `UPDATE ${s}.endpoints SET enabled = false, disabled_reason = $2, updated_at = $3
      WHERE id = $1`,
    setFailingSince: `UPDATE ${s}.endpoints SET failing_since = $2 WHERE id = $1`,
    failUnstarted: `UPDATE ${s}.deliveries SET status = 'failed', error = $2, next_attempt_at = NULL
      WHERE endpoint_id = $1 AND status = 'pending' AND started_at IS NULL`,

    insertEvents: `INSERT INTO ${s}.events (id, account_id, type, data, created_at, received_at)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::json[], $5::timestamptz[])
        AS t (id, account_id, type, data, created_at), (SELECT $6::timestamptz AS received_at) r
      ON CONFLICT (id) DO NOTHING RETURNING id, account_id, type`,
    insertEvent: `INSERT INTO ${s}.events (id, account_id, type, data, created_at, received_at)
      VALUES ($1, $2, $3, $4, $5, $6)`,
    deleteEvents: `DELETE FROM ${s}.events WHERE id = ANY($1::text[])`,
    // Rows another sweep holds are skipped; an event gaining a pending attempt meanwhile is rechecked under lock.
    expiredEvents: `SELECT id FROM ${s}.events e WHERE received_at < $1
        AND NOT EXISTS (SELECT 1 FROM ${s}.deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
      ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    deleteEventDeliveries: `DELETE FROM ${s}.deliveries WHERE event_id = ANY($1::text[])`,
    userEvents: `SELECT id FROM ${s}.events WHERE account_id = $1 AND type = 'message.completed'
        AND data->>'userId' = $2 FOR UPDATE`,
    // As text: the driver would parse json, and every attempt must send the text as published.
    event: `SELECT id, account_id, type, data::text AS data, created_at FROM ${s}.events WHERE id = $1`,
    // Attempt numbers: one more than the endpoint's last attempt of the event; the endpoint's row is locked.
    insertAttempts: `INSERT INTO ${s}.deliveries
        (id, endpoint_id, event_id, attempt, retry_step, status, created_at, next_attempt_at)
      SELECT t.id, t.endpoint_id, t.event_id,
        1 + coalesce((SELECT max(attempt) FROM ${s}.deliveries x
                      WHERE x.endpoint_id = t.endpoint_id AND x.event_id = t.event_id), 0),
        t.retry_step, 'pending', $5, t.due_at
      FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $6::timestamptz[])
        AS t (id, endpoint_id, event_id, retry_step, due_at)`,
    lockEndpoints: `SELECT 1 FROM ${s}.endpoints WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
    delivery: `SELECT ${deliveryColumns} ${fromDeliveries} WHERE d.endpoint_id = $1 AND d.id = $2`,
    deliveryById: `SELECT ${deliveryColumns} ${fromDeliveries} WHERE d.id = $1`,
    newest: `SELECT ${deliveryColumns} ${fromDeliveries} WHERE d.endpoint_id = $1 ORDER BY d.id DESC LIMIT $2`,
    below: `SELECT ${deliveryColumns} ${fromDeliveries}
      WHERE d.endpoint_id = $1 AND d.id < $2 ORDER BY d.id DESC LIMIT $3`,
    oldest: `SELECT ${deliveryColumns} ${fromDeliveries} WHERE d.endpoint_id = $1 ORDER BY d.id ASC LIMIT $2`,
    above: `SELECT ${deliveryColumns} ${fromDeliveries}
      WHERE d.endpoint_id = $1 AND d.id > $2 ORDER BY d.id ASC LIMIT $3`,

    claimable: `SELECT e.* FROM ${s}.endpoints e
      JOIN (SELECT endpoint_id, min(next_attempt_at) AS due FROM ${s}.deliveries
            WHERE status = 'pending' AND next_attempt_at <= $1 GROUP BY endpoint_id) d ON d.endpoint_id = e.id
      WHERE e.enabled AND (e.lease_expires_at IS NULL OR e.lease_expires_at <= $1)
      ORDER BY d.due, e.id LIMIT $2
      FOR UPDATE OF e SKIP LOCKED`,
    lease: `UPDATE ${s}.endpoints SET lease_owner = $2, lease_expires_at = $3 WHERE id = $1`,
    interrupted: `SELECT ${deliveryColumns} ${fromDeliveries}
      WHERE d.endpoint_id = $1 AND d.status = 'pending' AND d.started_at IS NOT NULL ORDER BY d.id`,
    markInterrupted: `UPDATE ${s}.deliveries SET status = 'failed', error = $2, next_attempt_at = $3 WHERE id = $1`,
    nextDue: `SELECT ${deliveryColumns} ${fromDeliveries}
      WHERE d.endpoint_id = $1 AND d.status = 'pending' AND d.started_at IS NULL AND d.next_attempt_at <= $2
      ORDER BY d.next_attempt_at, d.id LIMIT 1`,
    start: `UPDATE ${s}.deliveries SET started_at = $2, worker = $3 WHERE id = $1`,
    settle: `UPDATE ${s}.deliveries SET status = $2, response_status = $3, duration_ms = $4, error = $5,
        response_body = $6, next_attempt_at = $7
      WHERE id = $1`,
  };
}

type Statements = ReturnType<typeof statements>;

interface NewAttempt {
  endpointId: string;
  eventId: string;
  retryStep: number | null;
  dueAt: string;
}

export class PostgresWebhookStore implements WebhookStore {
  private readonly sql: Statements;
  private readonly audit: PgAuditLog;

  /** Use `openPostgresWebhookStore`, which also migrates the schema. */
  constructor(
    private readonly db: PgDatabase,
    schema: string,
    private readonly clock: Clock = Date.now,
  ) {
    this.sql = statements(schema);
    this.audit = pgAuditLog(db, schema);
  }

  private iso(ms: number = this.clock()): string {
    return new Date(ms).toISOString();
  }

  /** Inserts attempts (their endpoints' rows locked by the caller); returns their ids in order. */
  private async insertAttempts(
    client: pg.PoolClient,
    attempts: NewAttempt[],
    now: string,
  ): Promise<string[]> {
    const ids = attempts.map(() => newId("delivery"));
    if (attempts.length === 0) return ids;
    await client.query(this.sql.insertAttempts, [
      ids,
      attempts.map((a) => a.endpointId),
      attempts.map((a) => a.eventId),
      attempts.map((a) => a.retryStep),
      now,
      attempts.map((a) => a.dueAt),
    ]);
    return ids;
  }

  private async readDelivery(client: pg.PoolClient, id: string): Promise<DeliveryRecord> {
    const row = (await client.query<DeliveryRow>(this.sql.deliveryById, [id])).rows[0];
    if (!row) throw new Error(`delivery ${id} vanished inside its transaction`);
    return toDelivery(row);
  }

  /** Takes the endpoint's next due attempt for the worker (the endpoint's row is locked), or releases it. */
  private async takeNext(
    client: pg.PoolClient,
    endpoint: EndpointRow,
    worker: string,
    now: number,
    leaseMs: number,
  ): Promise<Claim | null> {
    const nowIso = this.iso(now);
    const next = (await client.query<DeliveryRow>(this.sql.nextDue, [endpoint.id, nowIso])).rows[0];
    if (!next) {
      await client.query(this.sql.lease, [endpoint.id, null, null]);
      return null;
    }
    await client.query(this.sql.lease, [endpoint.id, worker, this.iso(now + leaseMs)]);
    await client.query(this.sql.start, [next.id, nowIso, worker]);
    const event = (await client.query<EventRow>(this.sql.event, [next.event_id])).rows[0];
    if (!event) throw new Error(`event ${next.event_id} of delivery ${next.id} is missing`);
    return {
      endpoint: {
        id: endpoint.id,
        accountId: endpoint.account_id,
        url: endpoint.url,
        secrets: signingSecrets(endpoint, now),
      },
      delivery: { id: next.id, attempt: next.attempt },
      event: toEvent(event),
    };
  }

  async endpointMadeUnderKey(
    accountId: string,
    keyHash: string,
    since: string,
  ): Promise<{ endpoint: EndpointRecord; secret: string } | null> {
    const row = (await this.db.query<EndpointRow>(this.sql.endpointUnderKey, [accountId, keyHash, since]))[0];
    return row ? { endpoint: toEndpoint(row), secret: row.secret } : null;
  }

  async createEndpoint(input: Parameters<WebhookStore["createEndpoint"]>[0]): Promise<EndpointRecord> {
    return this.db.transaction(async (client) => {
      await client.query(this.sql.lockQuota, [input.accountId]);
      // After the lock, in a statement of its own: it sees every create committed by an earlier lock holder.
      const count = (await client.query<{ n: number }>(this.sql.countEndpoints, [input.accountId])).rows[0];
      assertEndpointQuota(count?.n ?? 0);
      const { fields } = input;
      const row = (
        await client.query<EndpointRow>(this.sql.insertEndpoint, [
          input.id,
          input.accountId,
          fields.url,
          JSON.stringify(fields.events),
          fields.description,
          fields.enabled,
          input.secret,
          this.iso(),
          input.idempotencyKeyHash ?? null,
        ])
      ).rows[0];
      if (!row) throw new Error("the endpoint was not inserted");
      const endpoint = toEndpoint(row);
      await this.audit.record(client, input.accountId, newAuditEvent(endpointAudit.create(endpoint)));
      return endpoint;
    });
  }

  async getEndpoint(accountId: string, id: string): Promise<EndpointRecord | null> {
    const row = (await this.db.query<EndpointRow>(this.sql.endpoint, [accountId, id]))[0];
    return row ? toEndpoint(row) : null;
  }

  async listEndpoints(accountId: string): Promise<EndpointRecord[]> {
    return (await this.db.query<EndpointRow>(this.sql.endpoints, [accountId])).map(toEndpoint);
  }

  async updateEndpoint(
    accountId: string,
    id: string,
    patch: Partial<EndpointFields>,
  ): Promise<EndpointRecord | null> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<EndpointRow>(this.sql.endpointForUpdate, [accountId, id])).rows[0];
      if (!row) return null;
      const before = toEndpoint(row);
      const enabled = patch.enabled ?? before.enabled;
      const reenabled = enabled && !before.enabled;
      const after = (
        await client.query<EndpointRow>(this.sql.updateEndpoint, [
          id,
          patch.url ?? before.url,
          JSON.stringify(patch.events ?? before.events),
          patch.description ?? before.description,
          enabled,
          // The service's reason stays while the endpoint stays disabled; its owner enabling it starts afresh.
          enabled ? null : before.disabledReason,
          reenabled ? null : row.failing_since,
          this.iso(),
        ])
      ).rows[0];
      if (!enabled && before.enabled)
        await client.query(this.sql.failUnstarted, [id, ENDPOINT_DISABLED_ERROR]);
      if (!after) return null;
      const updated = toEndpoint(after);
      await this.audit.record(client, accountId, newAuditEvent(endpointAudit.update(before, updated)));
      return updated;
    });
  }

  async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (client) => {
      // Locked first, so a worker recording an outcome for it finishes before its rows go.
      const row = (await client.query<EndpointRow>(this.sql.endpointForUpdate, [accountId, id])).rows[0];
      if (!row) return false;
      await client.query(this.sql.deleteEndpoint, [accountId, id]);
      await this.audit.record(client, accountId, newAuditEvent(endpointAudit.delete(id)));
      return true;
    });
  }

  async rotateSecret(
    accountId: string,
    id: string,
    secret: string,
    previousValidMs: number,
  ): Promise<EndpointRecord | null> {
    const now = this.clock();
    return this.db.transaction(async (client) => {
      const row = (
        await client.query<EndpointRow>(this.sql.rotate, [
          id,
          secret,
          this.iso(now + previousValidMs),
          this.iso(now),
          accountId,
        ])
      ).rows[0];
      if (!row) return null;
      await this.audit.record(client, accountId, newAuditEvent(endpointAudit.rotateSecret(id)));
      return toEndpoint(row);
    });
  }

  async publishEvents(events: readonly EventRecord[]): Promise<{ accepted: number; deliveries: number }> {
    if (events.length === 0) return { accepted: 0, deliveries: 0 };
    return this.db.transaction(async (client) => {
      const now = this.iso();
      const inserted = (
        await client.query<{ id: string; account_id: string; type: string }>(this.sql.insertEvents, [
          events.map((e) => e.id),
          events.map((e) => e.accountId),
          events.map((e) => e.type),
          events.map((e) => e.data),
          events.map((e) => e.createdAt),
          now,
        ])
      ).rows;
      if (inserted.length === 0) return { accepted: 0, deliveries: 0 };
      const accounts = [...new Set(inserted.map((e) => e.account_id))];
      const endpoints = (await client.query<EndpointRow>(this.sql.enabledEndpoints, [accounts])).rows;
      const attempts: NewAttempt[] = [];
      const untaken: string[] = [];
      for (const event of inserted) {
        const before = attempts.length;
        for (const endpoint of endpoints) {
          if (endpoint.account_id !== event.account_id || !subscribes(endpoint.events, event.type)) continue;
          attempts.push({ endpointId: endpoint.id, eventId: event.id, retryStep: 0, dueAt: now });
        }
        if (attempts.length === before) untaken.push(event.id);
      }
      // An event no endpoint takes is not kept: nothing would ever read it, and it may hold a user's messages.
      if (untaken.length > 0) await client.query(this.sql.deleteEvents, [untaken]);
      // New events have no attempts yet, so their numbers need no lock: each is the first.
      await this.insertAttempts(client, attempts, now);
      return { accepted: inserted.length - untaken.length, deliveries: attempts.length };
    });
  }

  async deleteExpiredEvents(before: Date, limit: number): Promise<number> {
    return this.db.transaction(async (client) => {
      const ids = (await client.query<{ id: string }>(this.sql.expiredEvents, [before, limit])).rows.map(
        (r) => r.id,
      );
      if (ids.length === 0) return 0;
      await client.query(this.sql.deleteEventDeliveries, [ids]);
      await client.query(this.sql.deleteEvents, [ids]);
      return ids.length;
    });
  }

  async eraseUserEvents(accountId: string, userId: string): Promise<number> {
    return this.db.transaction(async (client) => {
      const ids = (await client.query<{ id: string }>(this.sql.userEvents, [accountId, userId])).rows.map(
        (r) => r.id,
      );
      if (ids.length === 0) return 0;
      await client.query(this.sql.deleteEventDeliveries, [ids]);
      await client.query(this.sql.deleteEvents, [ids]);
      return ids.length;
    });
  }

  async sendTestEvent(accountId: string, endpointId: string, event: EventRecord): Promise<DeliveryRecord> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<EndpointRow>(this.sql.endpointForUpdate, [accountId, endpointId]))
        .rows[0];
      if (!row) throw webhookNotFound(endpointId);
      assertDeliverable(toEndpoint(row));
      const now = this.iso();
      await client.query(this.sql.insertEvent, [
        event.id,
        accountId,
        event.type,
        event.data,
        event.createdAt,
        now,
      ]);
      const [id] = await this.insertAttempts(
        client,
        [{ endpointId, eventId: event.id, retryStep: 0, dueAt: now }],
        now,
      );
      return this.readDelivery(client, id!);
    });
  }

  async redeliver(accountId: string, endpointId: string, deliveryId: string): Promise<DeliveryRecord> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<EndpointRow>(this.sql.endpointForUpdate, [accountId, endpointId]))
        .rows[0];
      if (!row) throw webhookNotFound(endpointId);
      const original = (await client.query<DeliveryRow>(this.sql.delivery, [endpointId, deliveryId])).rows[0];
      if (!original) throw deliveryNotFound(deliveryId);
      assertDeliverable(toEndpoint(row));
      const now = this.iso();
      const [id] = await this.insertAttempts(
        client,
        [{ endpointId, eventId: original.event_id, retryStep: null, dueAt: now }],
        now,
      );
      return this.readDelivery(client, id!);
    });
  }

  async listDeliveries(
    accountId: string,
    endpointId: string,
    query: DeliveryPageQuery,
  ): Promise<DeliveryPage | null> {
    return this.db.transaction(async (client) => {
      if ((await client.query(this.sql.endpoint, [accountId, endpointId])).rowCount === 0) return null;
      const { before, after, limit } = query;
      let rows: DeliveryRow[];
      if (before !== undefined) {
        if ((await client.query(this.sql.delivery, [endpointId, before])).rowCount === 0) {
          throw unknownCursor("before");
        }
        rows = (await client.query<DeliveryRow>(this.sql.below, [endpointId, before, limit + 1])).rows;
      } else if (after !== undefined) {
        if ((await client.query(this.sql.delivery, [endpointId, after])).rowCount === 0) {
          throw unknownCursor("after");
        }
        rows = (await client.query<DeliveryRow>(this.sql.above, [endpointId, after, limit + 1])).rows;
      } else {
        const statement = query.order === "asc" ? this.sql.oldest : this.sql.newest;
        rows = (await client.query<DeliveryRow>(statement, [endpointId, limit + 1])).rows;
      }
      return pageOf(rows.map(toDelivery), query);
    }, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }

  async claim(request: ClaimRequest): Promise<Claim[]> {
    if (request.limit <= 0) return [];
    return this.db.transaction(async (client) => {
      await client.query(BOOKKEEPING);
      const now = this.clock();
      const nowIso = this.iso(now);
      const endpoints = (await client.query<EndpointRow>(this.sql.claimable, [nowIso, request.limit])).rows;
      const claims: Claim[] = [];
      for (const endpoint of endpoints) {
        // Its lease lapsed with these started and unrecorded: whether they arrived is unknown, so each is
        // failed as interrupted and its event attempted again at once, in the same place of the schedule.
        const lost = (await client.query<DeliveryRow>(this.sql.interrupted, [endpoint.id])).rows;
        for (const delivery of lost) {
          await client.query(this.sql.markInterrupted, [delivery.id, INTERRUPTED_ERROR, nowIso]);
        }
        await this.insertAttempts(
          client,
          lost.map((d) => ({
            endpointId: endpoint.id,
            eventId: d.event_id,
            retryStep: d.retry_step,
            dueAt: nowIso,
          })),
          nowIso,
        );
        const taken = await this.takeNext(client, endpoint, request.worker, now, request.leaseMs);
        if (taken) claims.push(taken);
      }
      return claims;
    });
  }

  async complete(request: CompleteRequest): Promise<CompleteResult> {
    return this.db.transaction(async (client) => {
      await client.query(BOOKKEEPING);
      const found = (await client.query<DeliveryRow>(this.sql.deliveryById, [request.deliveryId])).rows[0];
      if (!found) return { recorded: false, next: null };
      const endpoint = (await client.query<EndpointRow>(this.sql.endpointByIdForUpdate, [found.endpoint_id]))
        .rows[0];
      // Read again under the endpoint's lock: a claim that took the endpoint over may have just settled it.
      const delivery = (await client.query<DeliveryRow>(this.sql.deliveryById, [request.deliveryId])).rows[0];
      if (
        !delivery ||
        !endpoint ||
        delivery.status !== "pending" ||
        delivery.worker !== request.worker ||
        endpoint.lease_owner !== request.worker
      ) {
        return { recorded: false, next: null };
      }
      const now = this.clock();
      const nowIso = this.iso(now);
      const settlement = settleAttempt(
        { enabled: endpoint.enabled, failingSince: isoOrNull(endpoint.failing_since) },
        { retryStep: delivery.retry_step },
        request.outcome,
        { now, schedule: request.schedule, ...(request.random ? { random: request.random } : {}) },
      );
      const { outcome } = request;
      await client.query(this.sql.settle, [
        delivery.id,
        settlement.status,
        settlement.responseStatus,
        Math.round(outcome.durationMs),
        settlement.error,
        outcome.kind === "answered" ? Buffer.from(outcome.body.subarray(0, RESPONSE_BODY_KEPT_BYTES)) : null,
        settlement.retry?.dueAt ?? null,
      ]);
      if (settlement.retry) {
        await this.insertAttempts(
          client,
          [
            {
              endpointId: endpoint.id,
              eventId: delivery.event_id,
              retryStep: settlement.retry.retryStep,
              dueAt: settlement.retry.dueAt,
            },
          ],
          nowIso,
        );
      }
      // Written only when it changes: a healthy endpoint's deliveries leave it null.
      if (settlement.failingSince !== isoOrNull(endpoint.failing_since)) {
        await client.query(this.sql.setFailingSince, [endpoint.id, settlement.failingSince]);
      }
      if (settlement.disable !== null) {
        await client.query(this.sql.disableEndpoint, [endpoint.id, settlement.disable, nowIso]);
        await client.query(this.sql.failUnstarted, [endpoint.id, ENDPOINT_DISABLED_ERROR]);
      }
      if (!request.claimNext || settlement.disable !== null || !endpoint.enabled) {
        await client.query(this.sql.lease, [endpoint.id, null, null]);
        return { recorded: true, next: null };
      }
      return {
        recorded: true,
        next: await this.takeNext(client, endpoint, request.worker, now, request.leaseMs),
      };
    });
  }

  async listAuditEvents(accountId: string, query: AuditQuery) {
    return this.audit.list(accountId, query);
  }

  async pruneAuditEvents(before: string, limit: number): Promise<number> {
    return this.audit.prune(before, limit);
  }

  async ping(): Promise<boolean> {
    try {
      await this.db.query("SELECT 1", []);
      return true;
    } catch {
      return false;
    }
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }
}

/** Opens the store on Postgres and brings its schema up to date. */
export async function openPostgresWebhookStore(
  options: PostgresWebhookStoreOptions,
): Promise<PostgresWebhookStore> {
  const { db, schema } = await openStoreDatabase(options, {
    defaultSchema: DEFAULT_WEBHOOKS_SCHEMA,
    applicationName: "agentry-webhooks",
    description: "The webhooks service's database",
    migrations: migrationTarget,
  });
  return new PostgresWebhookStore(db, schema, options.clock);
}
