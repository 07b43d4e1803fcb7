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
  DeliveryPage,
  DeliveryPageQuery,
  DeliveryRecord,
  DeliveryStatus,
  EndpointFields,
  EndpointRecord,
  EventRecord,
  RecordRequest,
  RecordResult,
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

/** What recording an outcome reads of an attempt. */
interface HeldRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  retry_step: number | null;
  status: DeliveryStatus;
  worker: string | null;
}

/** An attempt just taken. */
interface TakenRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  next_attempt_at: Date;
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
    interrupted: `SELECT id, endpoint_id, event_id, retry_step, status, worker FROM ${s}.deliveries
      WHERE endpoint_id = ANY($1::text[]) AND status = 'pending' AND started_at IS NOT NULL ORDER BY id`,
    markInterrupted: `UPDATE ${s}.deliveries SET status = 'failed', error = $2, next_attempt_at = $3
      WHERE id = ANY($1::text[])`,
    // Up to $4 due attempts of each endpoint, in the order they are to be made, marked started.
    takeDue: `WITH due AS (
        SELECT id, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS n
        FROM ${s}.deliveries
        WHERE endpoint_id = ANY($1::text[]) AND status = 'pending' AND started_at IS NULL
          AND next_attempt_at <= $2)
      UPDATE ${s}.deliveries d SET started_at = $2, worker = $3
      FROM due WHERE d.id = due.id AND due.n <= $4
      RETURNING d.id, d.endpoint_id, d.event_id, d.attempt, d.next_attempt_at`,
    // The endpoints in $2 leased to $3 until $4, the others of $1 let go.
    lease: `UPDATE ${s}.endpoints SET
        lease_owner = CASE WHEN id = ANY($2::text[]) THEN $3::text END,
        lease_expires_at = CASE WHEN id = ANY($2::text[]) THEN $4::timestamptz END
      WHERE id = ANY($1::text[])`,
    events: `SELECT id, account_id, type, data::text AS data, created_at FROM ${s}.events
      WHERE id = ANY($1::text[])`,
    // The endpoints of these attempts, locked in one order, so that batches of several workers never deadlock.
    lockEndpointsOf: `SELECT * FROM ${s}.endpoints
      WHERE id IN (SELECT endpoint_id FROM ${s}.deliveries WHERE id = ANY($1::text[]))
      ORDER BY id FOR UPDATE`,
    held: `SELECT id, endpoint_id, event_id, retry_step, status, worker FROM ${s}.deliveries
      WHERE id = ANY($1::text[])`,
    handBack: `UPDATE ${s}.deliveries SET started_at = NULL, worker = NULL WHERE id = ANY($1::text[])`,
    settle: `UPDATE ${s}.deliveries d SET status = t.status, response_status = t.response_status,
        duration_ms = t.duration_ms, error = t.error, response_body = decode(t.body, 'hex'),
        next_attempt_at = t.next_attempt_at
      FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::timestamptz[])
        AS t (id, status, response_status, duration_ms, error, body, next_attempt_at)
      WHERE d.id = t.id`,
    setFailingSinceMany: `UPDATE ${s}.endpoints e SET failing_since = t.failing_since
      FROM unnest($1::text[], $2::timestamptz[]) AS t (id, failing_since) WHERE e.id = t.id`,
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

  /**
   * Takes up to `count` due attempts of each endpoint (their rows locked by the caller) for the worker, in the
   * order they are to be made, and renews its lease; lets go the endpoints with none due.
   */
  private async takeNext(
    client: pg.PoolClient,
    endpoints: readonly EndpointRow[],
    worker: string,
    now: number,
    leaseMs: number,
    count: number,
  ): Promise<Claim[]> {
    if (endpoints.length === 0) return [];
    const nowIso = this.iso(now);
    const ids = endpoints.map((e) => e.id);
    const taken = (await client.query<TakenRow>(this.sql.takeDue, [ids, nowIso, worker, count])).rows;
    const leased = [...new Set(taken.map((t) => t.endpoint_id))];
    await client.query(this.sql.lease, [ids, leased, worker, this.iso(now + leaseMs)]);
    if (taken.length === 0) return [];
    const eventIds = [...new Set(taken.map((t) => t.event_id))];
    const events = new Map(
      (await client.query<EventRow>(this.sql.events, [eventIds])).rows.map((row) => [row.id, toEvent(row)]),
    );
    const claims: Claim[] = [];
    for (const row of endpoints) {
      const endpoint = {
        id: row.id,
        accountId: row.account_id,
        url: row.url,
        secrets: signingSecrets(row, now),
      };
      const own = taken
        .filter((t) => t.endpoint_id === row.id)
        .sort(
          (x, y) =>
            x.next_attempt_at.getTime() - y.next_attempt_at.getTime() ||
            (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
        );
      for (const next of own) {
        const event = events.get(next.event_id);
        if (!event) throw new Error(`event ${next.event_id} of delivery ${next.id} is missing`);
        claims.push({ endpoint, delivery: { id: next.id, attempt: next.attempt }, event });
      }
    }
    return claims;
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
      if (endpoints.length === 0) return [];
      // Their leases lapsed with these started and unrecorded: whether they arrived is unknown, so each is
      // failed as interrupted and its event attempted again at once, in the same place of the schedule.
      const lost = (
        await client.query<HeldRow>(this.sql.interrupted, [endpoints.map((endpoint) => endpoint.id)])
      ).rows;
      if (lost.length > 0) {
        await client.query(this.sql.markInterrupted, [lost.map((d) => d.id), INTERRUPTED_ERROR, nowIso]);
        await this.insertAttempts(
          client,
          lost.map((d) => ({
            endpointId: d.endpoint_id,
            eventId: d.event_id,
            retryStep: d.retry_step,
            dueAt: nowIso,
          })),
          nowIso,
        );
      }
      return this.takeNext(client, endpoints, request.worker, now, request.leaseMs, request.perEndpoint ?? 1);
    });
  }

  async record(request: RecordRequest): Promise<RecordResult> {
    const named = [...request.outcomes.map((o) => o.deliveryId), ...(request.unsent ?? [])];
    if (named.length === 0) return { recorded: [], next: [] };
    return this.db.transaction(async (client) => {
      await client.query(BOOKKEEPING);
      // The endpoints first, locked; then their attempts, read under the locks (a claim that took an endpoint
      // over may have just failed them as interrupted).
      const rows = (await client.query<EndpointRow>(this.sql.lockEndpointsOf, [named])).rows;
      const deliveries = new Map(
        (await client.query<HeldRow>(this.sql.held, [named])).rows.map((row) => [row.id, row]),
      );
      const held = new Map(
        rows
          .filter((row) => row.lease_owner === request.worker)
          .map((row) => [
            row.id,
            { row, enabled: row.enabled, failingSince: isoOrNull(row.failing_since), named: false },
          ]),
      );
      const heldAttempt = (deliveryId: string) => {
        const delivery = deliveries.get(deliveryId);
        if (delivery?.status !== "pending" || delivery.worker !== request.worker) return null;
        const endpoint = held.get(delivery.endpoint_id);
        if (!endpoint) return null;
        endpoint.named = true;
        return { delivery, endpoint };
      };
      const now = this.clock();
      const nowIso = this.iso(now);

      const unsent = (request.unsent ?? []).filter((id) => heldAttempt(id) !== null);
      if (unsent.length > 0) await client.query(this.sql.handBack, [unsent]);
      const settled: { id: string; status: string; responseStatus: number | null; durationMs: number }[] = [];
      const errors: (string | null)[] = [];
      const bodies: (string | null)[] = [];
      const nextAttempts: (string | null)[] = [];
      const retries: NewAttempt[] = [];
      const disabled: { id: string; reason: string }[] = [];
      const recorded = request.outcomes.map(({ deliveryId, outcome }) => {
        const attempt = heldAttempt(deliveryId);
        if (!attempt) return false;
        const { delivery, endpoint } = attempt;
        const settlement = settleAttempt(
          { enabled: endpoint.enabled, failingSince: endpoint.failingSince },
          { retryStep: delivery.retry_step },
          outcome,
          { now, schedule: request.schedule, ...(request.random ? { random: request.random } : {}) },
        );
        settled.push({
          id: delivery.id,
          status: settlement.status,
          responseStatus: settlement.responseStatus,
          durationMs: Math.round(outcome.durationMs),
        });
        errors.push(settlement.error);
        bodies.push(
          outcome.kind === "answered"
            ? Buffer.from(outcome.body.subarray(0, RESPONSE_BODY_KEPT_BYTES)).toString("hex")
            : null,
        );
        nextAttempts.push(settlement.retry?.dueAt ?? null);
        if (settlement.retry) {
          retries.push({
            endpointId: delivery.endpoint_id,
            eventId: delivery.event_id,
            retryStep: settlement.retry.retryStep,
            dueAt: settlement.retry.dueAt,
          });
        }
        endpoint.failingSince = settlement.failingSince;
        if (settlement.disable !== null && endpoint.enabled) {
          disabled.push({ id: delivery.endpoint_id, reason: settlement.disable });
          endpoint.enabled = false;
        }
        return true;
      });
      if (settled.length > 0) {
        await client.query(this.sql.settle, [
          settled.map((s) => s.id),
          settled.map((s) => s.status),
          settled.map((s) => s.responseStatus),
          settled.map((s) => s.durationMs),
          errors,
          bodies,
          nextAttempts,
        ]);
      }
      await this.insertAttempts(client, retries, nowIso);
      const touched = [...held.values()].filter((endpoint) => endpoint.named);
      // Written only when it changes: a healthy endpoint's deliveries leave it null.
      const changed = touched.filter((e) => e.failingSince !== isoOrNull(e.row.failing_since));
      if (changed.length > 0) {
        await client.query(this.sql.setFailingSinceMany, [
          changed.map((e) => e.row.id),
          changed.map((e) => e.failingSince),
        ]);
      }
      for (const { id, reason } of disabled) {
        await client.query(this.sql.disableEndpoint, [id, reason, nowIso]);
      }
      // Disabled, by this batch or by its owner meanwhile: what is handed back is failed, as is every other
      // attempt no worker has started, so nothing stale goes once it is enabled again.
      for (const endpoint of touched) {
        if (!endpoint.enabled)
          await client.query(this.sql.failUnstarted, [endpoint.row.id, ENDPOINT_DISABLED_ERROR]);
      }
      const continuing = request.claimNext ? touched.filter((e) => e.enabled).map((e) => e.row) : [];
      const letGo = touched.filter((e) => !continuing.includes(e.row)).map((e) => e.row.id);
      if (letGo.length > 0) await client.query(this.sql.lease, [letGo, [], null, null]);
      const next = await this.takeNext(
        client,
        continuing,
        request.worker,
        now,
        request.leaseMs,
        request.perEndpoint ?? 1,
      );
      return { recorded, next };
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
