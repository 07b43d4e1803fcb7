import type { AuditEvent, AuditQuery } from "@agentry/core";
import type { EndpointFields } from "../domain/endpoint.js";
import type { AttemptOutcome } from "../domain/schedule.js";

export type { EndpointFields };

/** An endpoint as its owner sees it; its secrets are never part of it. */
export interface EndpointRecord {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  /** Why the service disabled it; null when enabled or disabled by its owner. */
  disabledReason: string | null;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
  updatedAt: string;
}

/** An event as published: `data` is its JSON text, kept as given so that every attempt sends the same bytes. */
export interface EventRecord {
  id: string;
  type: string;
  accountId: string;
  createdAt: string;
  data: string;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

/** One attempt to deliver one event to one endpoint: one entry of the endpoint's delivery log. */
export interface DeliveryRecord {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** 1, 2, 3, ... over every attempt of the event at the endpoint. */
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  createdAt: string;
  /** Pending: when it is due. Failed: when its retry is due; null when none follows. */
  nextAttemptAt: string | null;
}

export interface DeliveryPageQuery {
  /** 1 to 100. */
  limit: number;
  /** Only deliveries with ids strictly below this one (a delivery of the endpoint). */
  before?: string;
  /** Only deliveries with ids strictly above this one (a delivery of the endpoint). */
  after?: string;
  /** How the page is presented: `desc` newest first, `asc` oldest first. */
  order: "asc" | "desc";
}

export interface DeliveryPage {
  /** In the order asked. */
  items: DeliveryRecord[];
  /** Whether more lie beyond the page in the direction of paging. */
  hasMore: boolean;
}

/** What a worker needs to make an attempt: where, with which secrets, and what. */
export interface Claim {
  endpoint: {
    id: string;
    accountId: string;
    url: string;
    /** The stored forms (see SecretBox): the current secret, and the previous one while it still signs. */
    secrets: string[];
  };
  delivery: { id: string; attempt: number };
  event: EventRecord;
}

export interface ClaimRequest {
  /** The claiming worker, unique among every worker sharing the store. */
  worker: string;
  /** Endpoints to claim at most. */
  limit: number;
  /** How long the claim holds without being renewed. */
  leaseMs: number;
  /**
   * Due attempts to take per endpoint at most (1 by default): the worker makes them one after another, in the
   * order given, and records their outcomes together.
   */
  perEndpoint?: number;
}

/** One attempt a worker made, and what came of it. */
export interface Outcome {
  deliveryId: string;
  outcome: AttemptOutcome;
}

export interface RecordRequest {
  worker: string;
  /**
   * Outcomes of attempts the worker holds, of any number of its endpoints; each endpoint's in the order they
   * were made.
   */
  outcomes: readonly Outcome[];
  /**
   * Attempts the worker took but did not make (it stopped a run: a failure, stopping, no room left in the
   * lease): handed back unstarted, so that they are taken again (or failed, if the endpoint was disabled).
   */
  unsent?: readonly string[];
  /** Delays before the 2nd, 3rd, ... attempts (before jitter). */
  schedule: readonly number[];
  leaseMs: number;
  /**
   * Whether to take, in the same transaction, each endpoint's next due attempts (up to `perEndpoint`, 1 by
   * default) and renew its lease; false once stopping, and then every endpoint named is let go.
   */
  claimNext: boolean;
  perEndpoint?: number;
  /** For the jitter of the retry delay, in [0, 1); Math.random by default. */
  random?: () => number;
}

export interface RecordResult {
  /**
   * Per outcome, in the request's order: false when the worker no longer held the attempt (its lease lapsed and
   * another took over, or the endpoint is gone): nothing of it changed.
   */
  recorded: boolean[];
  /** The next attempts of the endpoints named, claimed for the same worker: each endpoint's in order. */
  next: Claim[];
}

/**
 * Everything the webhooks service stores. Implementations: SQLite (embedded default) and Postgres; both pass the
 * one contract suite, `webhookStoreContract` of `@agentry/webhooks/testing`. Every endpoint operation is scoped
 * to an account: another account's endpoint is reported exactly like a missing one.
 *
 * Delivery is leased: a worker claims an endpoint (no other worker delivers to it until the claim is released or
 * lapses) together with its next due attempts, which are marked started; it makes them one after another, then
 * records their outcomes, with those of its other endpoints, and claims each endpoint's next attempts in one
 * transaction. A started attempt still pending when its endpoint's lease has lapsed was interrupted: the next
 * claim fails it with INTERRUPTED_ERROR and schedules the event again at once, so a worker killed mid-delivery
 * loses nothing. What an outcome means (retries, disabling) is `settleAttempt`'s.
 */
/**
 * Every change to an endpoint (create, update, secret rotation, delete) records its audit event, with the stamp of
 * the call it serves (`currentAuditStamp`), in its own transaction.
 */
export interface WebhookStore {
  /**
   * Inserts an endpoint with its stored secret. The account's endpoints are counted (`assertEndpointQuota`)
   * in the transaction of the insert, so simultaneous creates never exceed the quota.
   */
  createEndpoint(input: {
    id: string;
    accountId: string;
    fields: EndpointFields;
    secret: string;
    /** The SHA-256 of the Idempotency-Key it is made under, kept with it (`endpointMadeUnderKey`). */
    idempotencyKeyHash?: string;
  }): Promise<EndpointRecord>;
  /**
   * The newest endpoint of the account made under this Idempotency-Key's SHA-256 after `since` (ISO 8601), with
   * its current sealed secret; null when there is none.
   */
  endpointMadeUnderKey(
    accountId: string,
    keyHash: string,
    since: string,
  ): Promise<{ endpoint: EndpointRecord; secret: string } | null>;
  getEndpoint(accountId: string, id: string): Promise<EndpointRecord | null>;
  /** Newest first. */
  listEndpoints(accountId: string): Promise<EndpointRecord[]>;
  /**
   * Changes the fields given; null when the endpoint does not exist. Disabling fails its pending attempts that
   * no worker has started (ENDPOINT_DISABLED_ERROR); enabling clears the reason and the run of failures.
   */
  updateEndpoint(
    accountId: string,
    id: string,
    patch: Partial<EndpointFields>,
  ): Promise<EndpointRecord | null>;
  /** A page of the account's audit events this service recorded, in the query's order (docs/api/audit.md). */
  listAuditEvents(accountId: string, query: AuditQuery): Promise<{ items: AuditEvent[]; hasMore: boolean }>;
  /** Removes up to `limit` audit events recorded before `before` (ISO-8601); how many it removed. */
  pruneAuditEvents(before: string, limit: number): Promise<number>;
  /** Removes the endpoint with its delivery log; false when it did not exist. */
  deleteEndpoint(accountId: string, id: string): Promise<boolean>;
  /** Replaces the secret; the replaced one keeps signing until `previousValidMs` from now. */
  rotateSecret(
    accountId: string,
    id: string,
    secret: string,
    previousValidMs: number,
  ): Promise<EndpointRecord | null>;

  /**
   * Stores the events not stored before (by id) and, in the same transaction, schedules a first attempt of
   * each, due now, at every enabled endpoint of its account that `subscribes` to its type.
   */
  publishEvents(events: readonly EventRecord[]): Promise<{ accepted: number; deliveries: number }>;
  /**
   * Removes up to `limit` events received before `before` with no attempt still pending, and their attempts
   * (the delivery log's entries); how many events it removed.
   */
  deleteExpiredEvents(before: Date, limit: number): Promise<number>;
  /**
   * Removes the account's `message.completed` events of a user (their data is the reply, with its `userId`) and
   * all their attempts, pending or not; how many events it removed.
   */
  eraseUserEvents(accountId: string, userId: string): Promise<number>;
  /**
   * Stores a `webhook.test` event and schedules its first attempt at this endpoint alone. Throws
   * WEBHOOK_NOT_FOUND, or INVALID_REQUEST (field `enabled`) when the endpoint is disabled.
   */
  sendTestEvent(accountId: string, endpointId: string, event: EventRecord): Promise<DeliveryRecord>;
  /**
   * Schedules one more attempt, due now and not retried, of the event of one of the endpoint's deliveries.
   * Throws WEBHOOK_NOT_FOUND, DELIVERY_NOT_FOUND, or INVALID_REQUEST (field `enabled`) when it is disabled.
   */
  redeliver(accountId: string, endpointId: string, deliveryId: string): Promise<DeliveryRecord>;
  /**
   * One page of the endpoint's log by id (ids are time-ordered): with `before`, the entries nearest below it;
   * with `after`, those nearest above it; with neither, the newest (desc) or oldest (asc). Null when the endpoint
   * does not exist; a cursor that is not one of its deliveries is INVALID_REQUEST.
   */
  listDeliveries(
    accountId: string,
    endpointId: string,
    query: DeliveryPageQuery,
  ): Promise<DeliveryPage | null>;

  /**
   * Leases up to `limit` enabled endpoints that have a due attempt and no live lease, oldest due work first,
   * each with its next due attempts (interrupted ones recovered first), up to `perEndpoint`, in the order they
   * are to be made (the claims of one endpoint are consecutive). Never an endpoint another worker holds.
   */
  claim(request: ClaimRequest): Promise<Claim[]>;
  /**
   * Records outcomes with `settleAttempt`, in order per endpoint, hands back the attempts not made, and claims
   * each endpoint's next attempts or lets it go: one transaction for the whole batch.
   */
  record(request: RecordRequest): Promise<RecordResult>;

  /** Whether the database answers; for readiness. */
  ping(): Promise<boolean>;
  /** Closes; the store is unusable afterwards. Closing again does nothing. */
  close(): Promise<void>;
}

/** The store's clock, in epoch milliseconds; tests move it. */
export type Clock = () => number;
