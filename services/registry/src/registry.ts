import {
  DEFAULT_AUDIT_RETENTION_DAYS,
  pruneAuditEvents,
  type Repetition,
  removeInBatches,
  repeatEvery,
} from "@agentry/core";
import type { Logger } from "@agentry/logging";
import { traceMethods } from "@agentry/observability";
import {
  eachEvent,
  type OutboxConsumer,
  OutboxRelay,
  type PublishEvents,
  wholeBatches,
} from "@agentry/outbox";
import type { ConnectRouter } from "@connectrpc/connect";
import { webhooksConsumer } from "./outbox/webhooks.js";
import { registryRoutes } from "./rpc/routes.js";
import { SecretVault } from "./secrets.js";
import { openRegistryStore } from "./store/open.js";
import type { OutboxChannel, OutboxEvent, RegistryStore } from "./store/types.js";

export interface Registry {
  routes: (router: ConnectRouter) => void;
  store: RegistryStore;
  /**
   * Deliver outbox events to the other services, one relay per consumer: the purge of a deleted agent's
   * conversations, and every event to the webhooks service.
   */
  relays: Record<OutboxChannel, OutboxRelay<OutboxEvent>>;
  /** Whether the store answers a trivial query: what readiness probes report. */
  ready(): Promise<boolean>;
  /** Stops the relays and closes the store; in-flight calls must have finished. */
  close(): Promise<void>;
}

export interface BuildRegistryOptions {
  dataDir: string;
  /** A Postgres URL (DATABASE_URL) for the store; without it, SQLite in `dataDir`. */
  databaseUrl?: string;
  logger: Logger;
  /**
   * Removes everything other services hold for a deleted agent (its conversations, metrics and logs). Called
   * from the outbox at least once per deletion, also after a crash; it must be idempotent. Without it, deletion
   * events wait in the outbox until a registry that has it delivers them.
   */
  purgeAgent?: (accountId: string, agentId: string) => Promise<void>;
  /**
   * Where agent events go for webhooks, at least once each (`publishWith` makes `publish` of a WebhookService
   * client), and the public base URL their agents' `apiEndpoint` is built from (the gateways' PUBLIC_BASE_URL).
   * Without it, the events wait in the outbox until a registry that has it publishes them.
   */
  webhooks?: { publish: PublishEvents; publicBaseUrl: string };
  /** SECRETS_KEY, the base64 of 32 bytes: agent secrets are sealed with it (see `keyInDataDir` of @agentry/config). */
  secretsKey: string;
  /** How often the outbox is read besides right after each change. */
  outboxIntervalMs?: number;
  /** AUDIT_RETENTION_DAYS: audit events older than this are removed; 0 keeps them forever (365 by default). */
  auditRetentionDays?: number;
}

/** The registry's composition root: its store, the handlers that serve it, and the outbox relays. */
export async function buildRegistry(options: BuildRegistryOptions): Promise<Registry> {
  const secrets = new SecretVault(options.secretsKey);
  const store = traceMethods(
    await openRegistryStore({
      dataDir: options.dataDir,
      databaseUrl: options.databaseUrl,
      logger: options.logger,
    }),
    "registry.store",
  );
  const { purgeAgent, webhooks } = options;
  // Each channel keeps its own place in the one outbox, so one consumer being down holds up no other.
  const relay = (channel: OutboxChannel, consumer: OutboxConsumer<OutboxEvent>) =>
    new OutboxRelay<OutboxEvent>({
      source: {
        pending: (limit) => store.unpublishedEvents(channel, limit),
        delivered: (events) =>
          store.markEventsPublished(
            channel,
            events.map((event) => event.seq),
          ),
      },
      consumer,
      logger: options.logger,
      name: channel,
      ...(options.outboxIntervalMs !== undefined ? { intervalMs: options.outboxIntervalMs } : {}),
    });
  const relays: Record<OutboxChannel, OutboxRelay<OutboxEvent>> = {
    conversation: relay(
      "conversation",
      eachEvent(async (event) => {
        if (event.type !== "agent.deleted") return;
        if (!purgeAgent) throw new Error("no conversation service is configured to purge deleted agents");
        await purgeAgent(event.accountId, event.agentId);
      }),
    ),
    webhooks: relay(
      "webhooks",
      webhooks
        ? webhooksConsumer(webhooks.publish, webhooks.publicBaseUrl)
        : wholeBatches(() =>
            Promise.reject(new Error("no webhooks service is configured to publish events to")),
          ),
    ),
  };
  for (const each of Object.values(relays)) each.start();
  const sweeper = sweepIdempotencyKeys(
    store,
    options.logger,
    options.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS,
  );
  return {
    routes: registryRoutes({
      store,
      logger: options.logger,
      secrets,
      changed: () => {
        for (const each of Object.values(relays)) each.kick();
      },
    }),
    store,
    relays,
    async ready() {
      try {
        // Any lookup by primary key will do; the answer does not matter, only that one comes.
        await store.getAccount("acct_readiness_probe");
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await sweeper.stop();
      await Promise.all(Object.values(relays).map((each) => each.stop()));
      await store.close();
    },
  };
}

/** How often Idempotency-Key records whose 24 hours are over are removed, and how many at a time. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
const SWEEP_BATCH = 1000;

/**
 * Removes expired Idempotency-Key records, console sign-in links and console sessions in the background (lookups
 * already ignore them; this only keeps the tables small), and audit events past their retention. Every registry
 * instance sweeps; batches skip rows another is removing.
 */
function sweepIdempotencyKeys(store: RegistryStore, logger: Logger, auditRetentionDays: number): Repetition {
  return repeatEvery(SWEEP_INTERVAL_MS, async () => {
    try {
      await pruneAuditEvents(auditRetentionDays, (before, limit) => store.pruneAuditEvents(before, limit));
    } catch (error) {
      logger.warn({ err: error }, "could not remove old audit events; trying again later");
    }
    try {
      await removeInBatches((limit) => store.deleteExpiredIdempotencyKeys(limit), SWEEP_BATCH);
    } catch (error) {
      logger.warn({ err: error }, "could not remove expired idempotency keys; trying again later");
    }
    try {
      await removeInBatches((limit) => store.deleteExpiredConsoleSessions(limit), SWEEP_BATCH);
    } catch (error) {
      logger.warn({ err: error }, "could not remove expired console sessions; trying again later");
    }
  });
}
