import {
  DEFAULT_AUDIT_RETENTION_DAYS,
  pruneAuditEvents,
  type Repetition,
  removeInBatches,
  repeatEvery,
} from "@agentry/core";
import type { Logger } from "@agentry/logging";
import { traceMethods } from "@agentry/observability";
import { type guardedLookup, OutboundClient } from "@agentry/outbound";
import type { ConnectRouter } from "@connectrpc/connect";
import { DeliveryWorker } from "./delivery/worker.js";
import { DEFAULT_RETRY_SCHEDULE_MS } from "./domain/schedule.js";
import { SecretBox } from "./domain/secrets.js";
import { webhooksRoutes } from "./rpc/routes.js";
import { openWebhookStore } from "./store/open.js";
import type { Clock, WebhookStore } from "./store/types.js";

export interface Webhooks {
  routes: (router: ConnectRouter) => void;
  store: WebhookStore;
  /** Delivers due attempts; running unless built with `worker: false`. */
  worker: DeliveryWorker;
  /** Whether the store answers a trivial query: what readiness probes report as `database`. */
  ready(): Promise<boolean>;
  /**
   * Stops claiming attempts and waits up to `graceMs` for those in flight to be recorded; the RPCs keep
   * working (they only schedule). What is still in flight after the grace is attempted again after its lease.
   */
  stopDeliveries(graceMs?: number): Promise<void>;
  /** Stops deliveries (if not yet) and closes the store; in-flight calls must have finished. */
  close(): Promise<void>;
}

export interface BuildWebhooksOptions {
  dataDir: string;
  /** A Postgres URL (DATABASE_URL) for the store; without it, SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  logger: Logger;
  /** Endpoints may be http and point at loopback and private networks (ALLOW_PRIVATE_NETWORKS; never in production). */
  allowPrivateNetworks?: boolean;
  /** Delays before each retry (WEBHOOK_RETRY_SCHEDULE); the default schedule otherwise. */
  retryScheduleMs?: readonly number[];
  /** WEBHOOK_SECRETS_KEY: endpoint secrets are stored encrypted with it; without it, as they are. */
  secretsKey?: string | undefined;
  /** Whether this process delivers (default true); false serves the RPCs alone. */
  worker?: boolean;
  leaseMs?: number;
  concurrency?: number;
  pollIntervalMs?: number;
  /** WEBHOOK_LOG_RETENTION_DAYS: how long an event and its log are kept once nothing of it is pending. */
  logRetentionDays?: number;
  /** AUDIT_RETENTION_DAYS: audit events older than this are removed; 0 keeps them forever (365 by default). */
  auditRetentionDays?: number;
  /** Name resolution for endpoint URLs instead of the system's, for tests. */
  lookup?: Parameters<typeof guardedLookup>[1];
  /** The store's clock, for tests. */
  clock?: Clock;
}

/**
 * The webhooks service's composition root: its store, the handlers that serve it, and the delivery worker. The
 * all-in-one server calls it as the service's own `main` does.
 */
export async function buildWebhooks(options: BuildWebhooksOptions): Promise<Webhooks> {
  const { logger } = options;
  const secrets = new SecretBox(options.secretsKey);
  if (!secrets.encrypts) {
    logger.warn(
      "WEBHOOK_SECRETS_KEY is not set: webhook endpoint secrets are stored unencrypted in the database",
    );
  }
  const policy = { allowPrivateNetworks: options.allowPrivateNetworks ?? false };
  if (policy.allowPrivateNetworks) {
    logger.warn("ALLOW_PRIVATE_NETWORKS is set: webhooks may be sent to http URLs and private addresses");
  }
  const store = traceMethods(
    await openWebhookStore({
      dataDir: options.dataDir,
      databaseUrl: options.databaseUrl,
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
    }),
    "webhooks.store",
  );
  const outbound = new OutboundClient(policy, options.lookup ? { lookup: options.lookup } : {});
  const worker = new DeliveryWorker({
    store,
    outbound,
    secrets,
    logger,
    schedule: options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
  });
  const delivering = options.worker ?? true;
  if (delivering) worker.start();
  const sweeper = sweepExpiredEvents(
    store,
    logger,
    options.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS,
    options.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS,
    options.clock ?? Date.now,
  );
  let stopped: Promise<void> | undefined;
  const stopDeliveries = (graceMs?: number) => {
    stopped ??= Promise.all([worker.stop(graceMs), sweeper.stop()]).then(() => undefined);
    return stopped;
  };
  return {
    routes: webhooksRoutes({
      store,
      logger,
      secrets,
      urls: { policy, ...(options.lookup ? { lookup: options.lookup } : {}) },
      scheduled: () => worker.kick(),
    }),
    store,
    worker,
    ready: () => store.ping(),
    stopDeliveries,
    async close() {
      await stopDeliveries();
      await outbound.close();
      await store.close();
    },
  };
}

const DEFAULT_LOG_RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How often events past their retention are removed, and how many at a time. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
const SWEEP_BATCH = 1000;

/**
 * Removes, in the background, events (with their delivery log) older than the retention once no attempt of them
 * is pending: message events carry users' words, which no store keeps longer than it needs them. Audit events
 * go after their own retention.
 */
function sweepExpiredEvents(
  store: WebhookStore,
  logger: Logger,
  retentionDays: number,
  auditRetentionDays: number,
  clock: Clock,
): Repetition {
  return repeatEvery(SWEEP_INTERVAL_MS, async () => {
    try {
      await pruneAuditEvents(
        auditRetentionDays,
        (before, limit) => store.pruneAuditEvents(before, limit),
        clock(),
      );
    } catch (error) {
      logger.warn({ err: error }, "could not remove old audit events; trying again later");
    }
    const before = new Date(clock() - retentionDays * DAY_MS);
    try {
      await removeInBatches((limit) => store.deleteExpiredEvents(before, limit), SWEEP_BATCH);
    } catch (error) {
      logger.warn({ err: error }, "could not remove expired webhook events; trying again later");
    }
  });
}
