import { join } from "node:path";
import { newAuditEvent, newId } from "@agentry/core";
import { openSqliteDatabase, sqliteAuditLog } from "@agentry/sqlite";
import type Database from "better-sqlite3";
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
import { MIGRATION_TARGET } from "./sqlite-migrations.js";
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

export const WEBHOOKS_DB_FILE = "webhooks.db";

/** The first KiB of an answer is kept; the rest is never read. */
export const RESPONSE_BODY_KEPT_BYTES = 1024;

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  events: string;
  description: string;
  enabled: 0 | 1;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
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
  created_at: string;
  next_attempt_at: string | null;
  started_at: string | null;
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

/** An attempt about to be taken. */
interface DueRow {
  id: string;
  event_id: string;
  attempt: number;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  data: string;
  created_at: string;
}

function toEndpoint(row: EndpointRow): EndpointRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
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
    createdAt: row.created_at,
    nextAttemptAt: row.next_attempt_at,
  };
}

function toEvent(row: EventRow): EventRecord {
  return { id: row.id, type: row.type, accountId: row.account_id, createdAt: row.created_at, data: row.data };
}

/** The secrets an endpoint signs with at `now`: the current one, and the previous one until it expires. */
function signingSecrets(row: EndpointRow, now: string): string[] {
  const previous =
    row.previous_secret !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at > now
      ? [row.previous_secret]
      : [];
  return [row.secret, ...previous];
}

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, v.type AS event_type, d.attempt, d.retry_step, d.status,
  d.response_status, d.duration_ms, d.error, d.created_at, d.next_attempt_at, d.started_at, d.worker`;

function prepareStatements(db: Database.Database) {
  const prepare = <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
  return {
    endpoint: prepare<[string, string], EndpointRow>(
      "SELECT * FROM endpoints WHERE account_id = ? AND id = ?",
    ),
    endpointById: prepare<[string], EndpointRow>("SELECT * FROM endpoints WHERE id = ?"),
    endpointUnderKey: prepare<[string, string, string], EndpointRow>(
      `SELECT * FROM endpoints WHERE account_id = ? AND idempotency_key_hash = ? AND created_at > ?
       ORDER BY created_at DESC LIMIT 1`,
    ),
    endpoints: prepare<[string], EndpointRow>(
      "SELECT * FROM endpoints WHERE account_id = ? ORDER BY id DESC",
    ),
    enabledEndpoints: prepare<[string], EndpointRow>(
      "SELECT * FROM endpoints WHERE account_id = ? AND enabled = 1 ORDER BY id",
    ),
    countEndpoints: prepare<[string], number>("SELECT count(*) FROM endpoints WHERE account_id = ?").pluck(),
    insertEndpoint: prepare<[Record<string, unknown>]>(
      `INSERT INTO endpoints (id, account_id, url, events, description, enabled, secret, created_at, updated_at,
         idempotency_key_hash)
       VALUES (@id, @accountId, @url, @events, @description, @enabled, @secret, @now, @now, @idempotencyKeyHash)`,
    ),
    updateEndpoint: prepare<[Record<string, unknown>]>(
      `UPDATE endpoints SET url = @url, events = @events, description = @description, enabled = @enabled,
         disabled_reason = @disabledReason, failing_since = @failingSince, updated_at = @now
       WHERE id = @id`,
    ),
    rotate: prepare<[string, string, string, string]>(
      `UPDATE endpoints SET previous_secret = secret, secret = ?, previous_secret_expires_at = ?, updated_at = ?
       WHERE id = ?`,
    ),
    deleteEndpoint: prepare<[string, string]>("DELETE FROM endpoints WHERE account_id = ? AND id = ?"),
    disableEndpoint: prepare<[string, string, string]>(
      "UPDATE endpoints SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?",
    ),
    setFailingSince: prepare<[string | null, string]>("UPDATE endpoints SET failing_since = ? WHERE id = ?"),
    failUnstarted: prepare<[string, string]>(
      `UPDATE deliveries SET status = 'failed', error = ?, next_attempt_at = NULL
       WHERE endpoint_id = ? AND status = 'pending' AND started_at IS NULL`,
    ),

    insertEvent: prepare<[string, string, string, string, string, string]>(
      `INSERT INTO events (id, account_id, type, data, created_at, received_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ),
    event: prepare<[string], EventRow>("SELECT * FROM events WHERE id = ?"),
    insertDelivery: prepare<[Record<string, unknown>]>(
      `INSERT INTO deliveries (id, endpoint_id, event_id, attempt, retry_step, status, created_at, next_attempt_at)
       VALUES (@id, @endpointId, @eventId, @attempt, @retryStep, 'pending', @now, @dueAt)`,
    ),
    lastAttempt: prepare<[string, string], number>(
      "SELECT coalesce(max(attempt), 0) FROM deliveries WHERE endpoint_id = ? AND event_id = ?",
    ).pluck(),
    delivery: prepare<[string, string], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events v ON v.id = d.event_id
       WHERE d.endpoint_id = ? AND d.id = ?`,
    ),
    deliveryById: prepare<[string], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events v ON v.id = d.event_id WHERE d.id = ?`,
    ),
    newest: prepare<[string, number], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events v ON v.id = d.event_id
       WHERE d.endpoint_id = ? ORDER BY d.id DESC LIMIT ?`,
    ),
    below: prepare<[string, string, number], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events v ON v.id = d.event_id
       WHERE d.endpoint_id = ? AND d.id < ? ORDER BY d.id DESC LIMIT ?`,
    ),
    oldest: prepare<[string, number], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events v ON v.id = d.event_id
       WHERE d.endpoint_id = ? ORDER BY d.id ASC LIMIT ?`,
    ),
    above: prepare<[string, string, number], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events v ON v.id = d.event_id
       WHERE d.endpoint_id = ? AND d.id > ? ORDER BY d.id ASC LIMIT ?`,
    ),

    claimable: prepare<[{ now: string; limit: number }], EndpointRow>(
      `SELECT e.* FROM endpoints e
       JOIN (SELECT endpoint_id, min(next_attempt_at) AS due FROM deliveries
             WHERE status = 'pending' AND next_attempt_at <= @now GROUP BY endpoint_id) d ON d.endpoint_id = e.id
       WHERE e.enabled = 1 AND (e.lease_expires_at IS NULL OR e.lease_expires_at <= @now)
       ORDER BY d.due, e.id LIMIT @limit`,
    ),
    lease: prepare<[string | null, string | null, string]>(
      "UPDATE endpoints SET lease_owner = ?, lease_expires_at = ? WHERE id = ?",
    ),
    interrupted: prepare<[string], HeldRow>(
      `SELECT id, endpoint_id, event_id, retry_step, status, worker FROM deliveries
       WHERE endpoint_id = ? AND status = 'pending' AND started_at IS NOT NULL
       ORDER BY next_attempt_at, id`,
    ),
    markInterrupted: prepare<[string, string, string]>(
      "UPDATE deliveries SET status = 'failed', error = ?, next_attempt_at = ? WHERE id = ?",
    ),
    nextDue: prepare<[string, string, number], DueRow>(
      `SELECT id, event_id, attempt FROM deliveries
       WHERE endpoint_id = ? AND status = 'pending' AND started_at IS NULL AND next_attempt_at <= ?
       ORDER BY next_attempt_at, id LIMIT ?`,
    ),
    start: prepare<[string, string, string]>("UPDATE deliveries SET started_at = ?, worker = ? WHERE id = ?"),
    held: prepare<[string], HeldRow>(
      "SELECT id, endpoint_id, event_id, retry_step, status, worker FROM deliveries WHERE id = ?",
    ),
    handBack: prepare<[string]>("UPDATE deliveries SET started_at = NULL, worker = NULL WHERE id = ?"),
    settle: prepare<[Record<string, unknown>]>(
      `UPDATE deliveries SET status = @status, response_status = @responseStatus, duration_ms = @durationMs,
         error = @error, response_body = @body, next_attempt_at = @nextAttemptAt
       WHERE id = @id`,
    ),
    // Prepared once: \`db.pragma\` prepares its statement on every call, and bookkeeping switches twice a transaction.
    noFlush: prepare<[]>("PRAGMA synchronous = NORMAL"),
    flush: prepare<[]>("PRAGMA synchronous = FULL"),
    anyDue: prepare<[string], number>(
      "SELECT 1 FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ? LIMIT 1",
    ).pluck(),
    ping: prepare<[], number>("SELECT 1").pluck(),
    expiredEvents: prepare<[string, number], string>(
      `SELECT id FROM events e WHERE received_at < ?
         AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
       ORDER BY received_at LIMIT ?`,
    ).pluck(),
    deleteEventDeliveries: prepare<[string]>("DELETE FROM deliveries WHERE event_id = ?"),
    userEvents: prepare<[string, string], string>(
      `SELECT id FROM events WHERE account_id = ? AND type = 'message.completed'
         AND json_extract(data, '$.userId') = ?`,
    ).pluck(),
    deleteEvent: prepare<[string]>("DELETE FROM events WHERE id = ?"),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/**
 * The webhooks service in one SQLite file. better-sqlite3 is synchronous, so every method runs to completion
 * inside one call; transactions that read before they write take the write lock first (BEGIN IMMEDIATE), which
 * makes them serial across every connection and process sharing the file: that is what makes a claim exclusive
 * (no two workers can both see an endpoint's lease free), and the quota exact.
 */
function sqliteWebhookStore(db: Database.Database, clock: Clock): WebhookStore {
  const sql: Statements = prepareStatements(db);
  const audit = sqliteAuditLog(db);
  const iso = (ms: number) => new Date(ms).toISOString();

  const insertAttempt = (input: {
    endpointId: string;
    eventId: string;
    retryStep: number | null;
    now: string;
    dueAt: string;
  }): string => {
    const id = newId("delivery");
    const attempt = (sql.lastAttempt.get(input.endpointId, input.eventId) ?? 0) + 1;
    sql.insertDelivery.run({ id, attempt, ...input });
    return id;
  };

  const readDelivery = (id: string): DeliveryRecord => {
    const row = sql.deliveryById.get(id);
    if (!row) throw new Error(`delivery ${id} vanished inside its transaction`);
    return toDelivery(row);
  };

  /** The events of one transaction's claims, each read once and shared by every claim of it. */
  const eventReader = () => {
    const read = new Map<string, EventRecord>();
    return (id: string): EventRecord => {
      let event = read.get(id);
      if (!event) {
        const row = sql.event.get(id);
        if (!row) throw new Error(`event ${id} of a due delivery is missing`);
        event = toEvent(row);
        read.set(id, event);
      }
      return event;
    };
  };

  /**
   * Takes up to `count` of the endpoint's due attempts for the worker, in the order they are to be made, and
   * renews its lease; lets it go when none is due.
   */
  const takeNext = (
    row: EndpointRow,
    worker: string,
    now: number,
    leaseMs: number,
    count: number,
    eventOf: (id: string) => EventRecord,
  ): Claim[] => {
    const nowIso = iso(now);
    const due = sql.nextDue.all(row.id, nowIso, count);
    if (due.length === 0) {
      sql.lease.run(null, null, row.id);
      return [];
    }
    sql.lease.run(worker, iso(now + leaseMs), row.id);
    const endpoint = {
      id: row.id,
      accountId: row.account_id,
      url: row.url,
      secrets: signingSecrets(row, nowIso),
    };
    return due.map((next) => {
      sql.start.run(nowIso, worker, next.id);
      return { endpoint, delivery: { id: next.id, attempt: next.attempt }, event: eventOf(next.event_id) };
    });
  };

  const createEndpoint = db.transaction(
    (input: Parameters<WebhookStore["createEndpoint"]>[0]): EndpointRecord => {
      assertEndpointQuota(sql.countEndpoints.get(input.accountId) ?? 0);
      const { fields } = input;
      sql.insertEndpoint.run({
        id: input.id,
        accountId: input.accountId,
        url: fields.url,
        events: JSON.stringify(fields.events),
        description: fields.description,
        enabled: fields.enabled ? 1 : 0,
        secret: input.secret,
        now: iso(clock()),
        idempotencyKeyHash: input.idempotencyKeyHash ?? null,
      });
      const row = sql.endpointById.get(input.id);
      if (!row) throw new Error("the endpoint vanished inside its transaction");
      const endpoint = toEndpoint(row);
      audit.record(input.accountId, newAuditEvent(endpointAudit.create(endpoint)));
      return endpoint;
    },
  );

  const updateEndpoint = db.transaction(
    (accountId: string, id: string, patch: Partial<EndpointFields>): EndpointRecord | null => {
      const row = sql.endpoint.get(accountId, id);
      if (!row) return null;
      const before = toEndpoint(row);
      const enabled = patch.enabled ?? before.enabled;
      const reenabled = enabled && !before.enabled;
      sql.updateEndpoint.run({
        id,
        url: patch.url ?? before.url,
        events: JSON.stringify(patch.events ?? before.events),
        description: patch.description ?? before.description,
        enabled: enabled ? 1 : 0,
        // The service's reason stays while the endpoint stays disabled; its owner enabling it starts afresh.
        disabledReason: enabled ? null : before.disabledReason,
        failingSince: reenabled ? null : row.failing_since,
        now: iso(clock()),
      });
      if (!enabled && before.enabled) sql.failUnstarted.run(ENDPOINT_DISABLED_ERROR, id);
      const after = toEndpoint(sql.endpointById.get(id)!);
      audit.record(accountId, newAuditEvent(endpointAudit.update(before, after)));
      return after;
    },
  );

  const rotateSecret = db.transaction(
    (accountId: string, id: string, secret: string, previousValidMs: number): EndpointRecord | null => {
      if (!sql.endpoint.get(accountId, id)) return null;
      const now = clock();
      sql.rotate.run(secret, iso(now + previousValidMs), iso(now), id);
      audit.record(accountId, newAuditEvent(endpointAudit.rotateSecret(id)));
      const row = sql.endpointById.get(id);
      return row ? toEndpoint(row) : null;
    },
  );

  const publishEvents = db.transaction((events: readonly EventRecord[]) => {
    const now = iso(clock());
    let accepted = 0;
    let deliveries = 0;
    const endpointsOf = new Map<string, EndpointRow[]>();
    for (const event of events) {
      let endpoints = endpointsOf.get(event.accountId);
      if (!endpoints) {
        endpoints = sql.enabledEndpoints.all(event.accountId);
        endpointsOf.set(event.accountId, endpoints);
      }
      const subscribed = endpoints.filter((endpoint) =>
        subscribes(JSON.parse(endpoint.events) as string[], event.type),
      );
      // An event no endpoint takes is not kept: nothing would ever read it, and it may hold a user's messages.
      if (subscribed.length === 0) continue;
      const { changes } = sql.insertEvent.run(
        event.id,
        event.accountId,
        event.type,
        event.data,
        event.createdAt,
        now,
      );
      if (changes === 0) continue;
      accepted += 1;
      for (const endpoint of subscribed) {
        insertAttempt({ endpointId: endpoint.id, eventId: event.id, retryStep: 0, now, dueAt: now });
        deliveries += 1;
      }
    }
    return { accepted, deliveries };
  });

  const deleteExpiredEvents = db.transaction((before: Date, limit: number) => {
    const ids = sql.expiredEvents.all(iso(before.getTime()), limit);
    for (const id of ids) {
      sql.deleteEventDeliveries.run(id);
      sql.deleteEvent.run(id);
    }
    return ids.length;
  });

  const eraseUserEvents = db.transaction((accountId: string, userId: string) => {
    const ids = sql.userEvents.all(accountId, userId);
    for (const id of ids) {
      sql.deleteEventDeliveries.run(id);
      sql.deleteEvent.run(id);
    }
    return ids.length;
  });

  const sendTestEvent = db.transaction((accountId: string, endpointId: string, event: EventRecord) => {
    const row = sql.endpoint.get(accountId, endpointId);
    if (!row) throw webhookNotFound(endpointId);
    assertDeliverable(toEndpoint(row));
    const now = iso(clock());
    sql.insertEvent.run(event.id, accountId, event.type, event.data, event.createdAt, now);
    return readDelivery(insertAttempt({ endpointId, eventId: event.id, retryStep: 0, now, dueAt: now }));
  });

  const redeliver = db.transaction((accountId: string, endpointId: string, deliveryId: string) => {
    const row = sql.endpoint.get(accountId, endpointId);
    if (!row) throw webhookNotFound(endpointId);
    const original = sql.delivery.get(endpointId, deliveryId);
    if (!original) throw deliveryNotFound(deliveryId);
    assertDeliverable(toEndpoint(row));
    const now = iso(clock());
    return readDelivery(
      insertAttempt({ endpointId, eventId: original.event_id, retryStep: null, now, dueAt: now }),
    );
  });

  const listDeliveries = db.transaction(
    (accountId: string, endpointId: string, query: DeliveryPageQuery): DeliveryPage | null => {
      if (!sql.endpoint.get(accountId, endpointId)) return null;
      const { before, after, limit } = query;
      let rows: DeliveryRow[];
      if (before !== undefined) {
        if (!sql.delivery.get(endpointId, before)) throw unknownCursor("before");
        rows = sql.below.all(endpointId, before, limit + 1);
      } else if (after !== undefined) {
        if (!sql.delivery.get(endpointId, after)) throw unknownCursor("after");
        rows = sql.above.all(endpointId, after, limit + 1);
      } else {
        rows = (query.order === "asc" ? sql.oldest : sql.newest).all(endpointId, limit + 1);
      }
      return pageOf(rows.map(toDelivery), query);
    },
  );

  /**
   * Runs a transaction of delivery bookkeeping (a claim, an attempt's outcome) without waiting for the disk
   * (`synchronous = NORMAL`, which in WAL mode still survives the process being killed): delivery is at least once,
   * and what a power loss takes back of it is an attempt that then looks started and unrecorded, attempted again
   * once its lease lapses, as after a crash. Each delivery otherwise paid two flushes, on the loop that also answers
   * the API. The event and its attempts are stored durably (`publishEvents`), as the sender drops its copy then.
   */
  const withoutFlush = <T>(work: () => T): T => {
    sql.noFlush.run();
    try {
      return work();
    } finally {
      sql.flush.run();
    }
  };

  const claim = db.transaction((request: ClaimRequest): Claim[] => {
    const now = clock();
    const nowIso = iso(now);
    const eventOf = eventReader();
    const claims: Claim[] = [];
    for (const row of sql.claimable.all({ now: nowIso, limit: request.limit })) {
      // Its lease lapsed with these started and unrecorded: whether they arrived is unknown, so each is
      // failed as interrupted and its event attempted again at once, in the same place of the schedule.
      for (const lost of sql.interrupted.all(row.id)) {
        sql.markInterrupted.run(INTERRUPTED_ERROR, nowIso, lost.id);
        insertAttempt({
          endpointId: row.id,
          eventId: lost.event_id,
          retryStep: lost.retry_step,
          now: nowIso,
          dueAt: nowIso,
        });
      }
      claims.push(...takeNext(row, request.worker, now, request.leaseMs, request.perEndpoint ?? 1, eventOf));
    }
    return claims;
  });

  const record = db.transaction((request: RecordRequest): RecordResult => {
    const now = clock();
    const nowIso = iso(now);
    /** The endpoints named, in the order first named, each read once; null when the worker does not hold it. */
    const held = new Map<
      string,
      { row: EndpointRow; enabled: boolean; failingSince: string | null } | null
    >();
    const holding = (endpointId: string) => {
      let state = held.get(endpointId);
      if (state === undefined) {
        const row = sql.endpointById.get(endpointId);
        state =
          row && row.lease_owner === request.worker
            ? { row, enabled: row.enabled === 1, failingSince: row.failing_since }
            : null;
        held.set(endpointId, state);
      }
      return state;
    };
    /** The attempt with its endpoint when this worker still holds both, as started. */
    const heldAttempt = (deliveryId: string) => {
      const delivery = sql.held.get(deliveryId);
      if (delivery?.status !== "pending" || delivery.worker !== request.worker) return null;
      const endpoint = holding(delivery.endpoint_id);
      return endpoint ? { delivery, endpoint } : null;
    };

    for (const id of request.unsent ?? []) {
      if (heldAttempt(id)) sql.handBack.run(id);
    }
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
      sql.settle.run({
        id: delivery.id,
        status: settlement.status,
        responseStatus: settlement.responseStatus,
        durationMs: Math.round(outcome.durationMs),
        error: settlement.error,
        body:
          outcome.kind === "answered"
            ? Buffer.from(outcome.body.subarray(0, RESPONSE_BODY_KEPT_BYTES))
            : null,
        nextAttemptAt: settlement.retry?.dueAt ?? null,
      });
      if (settlement.retry) {
        insertAttempt({
          endpointId: delivery.endpoint_id,
          eventId: delivery.event_id,
          retryStep: settlement.retry.retryStep,
          now: nowIso,
          dueAt: settlement.retry.dueAt,
        });
      }
      endpoint.failingSince = settlement.failingSince;
      if (settlement.disable !== null && endpoint.enabled) {
        sql.disableEndpoint.run(settlement.disable, nowIso, delivery.endpoint_id);
        endpoint.enabled = false;
      }
      return true;
    });

    const eventOf = eventReader();
    const next: Claim[] = [];
    for (const [id, endpoint] of held) {
      if (!endpoint) continue;
      // Written once, and only when it changes: a healthy endpoint's deliveries leave it null.
      if (endpoint.failingSince !== endpoint.row.failing_since) {
        sql.setFailingSince.run(endpoint.failingSince, id);
      }
      if (!endpoint.enabled) {
        // Disabled, by this batch or by its owner meanwhile: what is handed back is failed, as is every other
        // attempt no worker has started, so nothing stale goes once it is enabled again.
        sql.failUnstarted.run(ENDPOINT_DISABLED_ERROR, id);
        sql.lease.run(null, null, id);
      } else if (!request.claimNext) {
        sql.lease.run(null, null, id);
      } else {
        next.push(
          ...takeNext(endpoint.row, request.worker, now, request.leaseMs, request.perEndpoint ?? 1, eventOf),
        );
      }
    }
    return { recorded, next };
  });

  const deleteEndpoint = db.transaction((accountId: string, id: string): boolean => {
    if (sql.deleteEndpoint.run(accountId, id).changes === 0) return false;
    audit.record(accountId, newAuditEvent(endpointAudit.delete(id)));
    return true;
  });

  return {
    async createEndpoint(input) {
      return createEndpoint.immediate(input);
    },
    async endpointMadeUnderKey(accountId, keyHash, since) {
      const row = sql.endpointUnderKey.get(accountId, keyHash, since);
      return row ? { endpoint: toEndpoint(row), secret: row.secret } : null;
    },
    async getEndpoint(accountId, id) {
      const row = sql.endpoint.get(accountId, id);
      return row ? toEndpoint(row) : null;
    },
    async listEndpoints(accountId) {
      return sql.endpoints.all(accountId).map(toEndpoint);
    },
    async updateEndpoint(accountId, id, patch) {
      return updateEndpoint.immediate(accountId, id, patch);
    },
    async deleteEndpoint(accountId, id) {
      return deleteEndpoint.immediate(accountId, id);
    },
    async rotateSecret(accountId, id, secret, previousValidMs) {
      return rotateSecret.immediate(accountId, id, secret, previousValidMs);
    },
    async publishEvents(events) {
      return events.length === 0 ? { accepted: 0, deliveries: 0 } : publishEvents.immediate(events);
    },
    async deleteExpiredEvents(before, limit) {
      return deleteExpiredEvents.immediate(before, limit);
    },
    async eraseUserEvents(accountId, userId) {
      return eraseUserEvents.immediate(accountId, userId);
    },
    async sendTestEvent(accountId, endpointId, event) {
      return sendTestEvent.immediate(accountId, endpointId, event);
    },
    async redeliver(accountId, endpointId, deliveryId) {
      return redeliver.immediate(accountId, endpointId, deliveryId);
    },
    async listDeliveries(accountId, endpointId, query) {
      // A read transaction, so the cursor's check and the page come from one snapshot.
      return listDeliveries.deferred(accountId, endpointId, query);
    },
    async claim(request) {
      if (request.limit <= 0) return [];
      // Workers poll every second: a look without the write lock first, so idle polls never contend for it.
      if (sql.anyDue.get(iso(clock())) === undefined) return [];
      return withoutFlush(() => claim.immediate(request));
    },
    async record(request) {
      return withoutFlush(() => record.immediate(request));
    },
    async listAuditEvents(accountId, query) {
      return audit.list(accountId, query);
    },
    async pruneAuditEvents(before, limit) {
      return audit.prune(before, limit);
    },
    async ping() {
      return sql.ping.get() === 1;
    },
    async close() {
      if (db.open) db.close();
    },
  };
}

/** Opens (creating if needed) the webhooks database at `<dataDir>/webhooks.db`. */
export function openSqliteWebhookStore(options: { dataDir: string; clock?: Clock }): WebhookStore {
  return sqliteWebhookStore(
    openSqliteDatabase(join(options.dataDir, WEBHOOKS_DB_FILE), MIGRATION_TARGET),
    options.clock ?? Date.now,
  );
}
