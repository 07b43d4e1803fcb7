import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "@agentry/logging";
import type { OutboundClient } from "@agentry/outbound";
import type { SecretBox } from "../domain/secrets.js";
import { deliveryBody } from "../domain/signing.js";
import type { Claim, CompleteRequest, CompleteResult, WebhookStore } from "../store/types.js";
import { ATTEMPT_TIMEOUT_MS, sendAttempt } from "./send.js";

export interface DeliveryWorkerOptions {
  store: WebhookStore;
  outbound: OutboundClient;
  secrets: SecretBox;
  logger: Logger;
  /** Delays before the 2nd, 3rd, ... attempts, before jitter. */
  schedule: readonly number[];
  /**
   * How long a claim of an endpoint holds unless renewed (each recorded attempt renews it); 60 s by default,
   * at least 5 s more than an attempt's timeout.
   */
  leaseMs?: number;
  /** Endpoints delivered to at once by this worker; 16 by default. */
  concurrency?: number;
  /** How often the store is asked for due work when nothing kicks the worker; 1 s by default. */
  pollIntervalMs?: number;
  /** Per attempt; 10 s by default. */
  attemptTimeoutMs?: number;
}

/** Resolves after the I/O the event loop already has waiting. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Attempts at recording an outcome before the worker leaves it to the lease's lapse (and so to a retry). */
const RECORD_TRIES = 3;

/**
 * Delivers due attempts. Each round it claims endpoints with due work (up to its free slots); for each it makes
 * the claimed attempt, records the outcome and takes the endpoint's next due attempt in one transaction, until
 * the endpoint has nothing due, then lets it go. So one endpoint is delivered to by one worker at a time, its
 * attempts one after another, while a slow endpoint holds up no other. Any number of workers, in any number of
 * processes, share one store.
 *
 * At least once: an attempt is marked started when claimed and settled after its answer. A worker that dies
 * between the two leaves it started; when the lease lapses, the next claim records it as interrupted and makes
 * the event's next attempt at once, with the same webhook-id, so receivers can drop the repeat.
 */
export class DeliveryWorker {
  /** Unique among every worker sharing the store: it names the holder of each lease. */
  readonly id = `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly attemptTimeoutMs: number;
  private readonly active = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private filling: Promise<void> | undefined;
  private again = false;
  private stopping = false;
  /** A store that stays down is reported once, not every round. */
  private failing = false;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.concurrency = options.concurrency ?? 16;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
    // An attempt and the recording of its outcome must fit in the lease, or another worker would take over
    // an endpoint whose attempt is still running.
    if (this.leaseMs < this.attemptTimeoutMs + 5_000) {
      throw new RangeError("the lease must last at least 5 s longer than an attempt's timeout");
    }
  }

  start(): void {
    this.kick();
    this.timer = setInterval(() => this.kick(), this.pollIntervalMs);
    this.timer.unref();
  }

  /** Asks for a claim round soon (new work was just scheduled); rounds never overlap. */
  kick(): void {
    if (this.stopping) return;
    if (this.filling) {
      this.again = true;
      return;
    }
    // The round starts on the next turn of the loop: a kick comes from whoever just scheduled work (an event
    // published in answer to an API call), which should not also pay for the claim.
    this.filling = nextTurn()
      .then(() => this.fill())
      .finally(() => {
        this.filling = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves once nothing is in flight (for tests). */
  async idle(): Promise<void> {
    while (this.filling || this.active.size > 0) {
      await Promise.all([this.filling, ...this.active]);
    }
  }

  /**
   * Stops claiming, and lets the attempts in flight finish and be recorded (their endpoints' next attempts are
   * left to other workers). Resolves when they have, or after `graceMs`: what is still in flight then is left
   * to its lease, and attempted again once it lapses.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
      timer.unref();
    });
    await Promise.race([this.idle(), grace]);
    clearTimeout(timer);
  }

  private async fill(): Promise<void> {
    // Asked to stop while this round waited for its turn.
    if (this.stopping) return;
    const free = this.concurrency - this.active.size;
    if (free <= 0) return;
    let claims: Claim[];
    try {
      claims = await this.options.store.claim({ worker: this.id, limit: free, leaseMs: this.leaseMs });
      if (this.failing) this.options.logger.info("webhook deliveries resumed");
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        this.options.logger.warn({ err: error }, "claiming webhook deliveries failed; retrying every round");
      }
      this.failing = true;
      return;
    }
    for (const claim of claims) {
      const task = this.deliver(claim)
        .catch((error: unknown) => {
          // A bug, not an outcome (those are all recorded): the attempt is taken up again after its lease.
          this.options.logger.error({ err: error, endpointId: claim.endpoint.id }, "webhook delivery failed");
        })
        .finally(() => {
          this.active.delete(task);
          this.kick();
        });
      this.active.add(task);
    }
    // A full round may have left more due work than slots: the next round takes it as slots free up.
  }

  /** Delivers the claimed attempt, then the endpoint's next ones, until none is due or the worker stops. */
  private async deliver(first: Claim): Promise<void> {
    const { logger } = this.options;
    let claim: Claim | null = first;
    while (claim) {
      // Each attempt waits for what the loop already has to do: requests that arrived meanwhile (the next agent
      // create, when the service is embedded) are served before another delivery of the fan-out.
      await nextTurn();
      const outcome = await sendAttempt(
        this.options.outbound,
        {
          url: claim.endpoint.url,
          eventId: claim.event.id,
          body: deliveryBody(claim.event),
          secrets: this.openSecrets(claim),
        },
        this.attemptTimeoutMs,
      );
      const result = await this.record({
        worker: this.id,
        deliveryId: claim.delivery.id,
        outcome,
        schedule: this.options.schedule,
        leaseMs: this.leaseMs,
        claimNext: !this.stopping,
      });
      logger.debug(
        {
          endpointId: claim.endpoint.id,
          deliveryId: claim.delivery.id,
          eventId: claim.event.id,
          attempt: claim.delivery.attempt,
          ...(outcome.kind === "answered" ? { status: outcome.status } : { error: outcome.error }),
          recorded: result?.recorded ?? false,
        },
        "webhook attempt",
      );
      if (result && !result.recorded) {
        logger.warn(
          { endpointId: claim.endpoint.id, deliveryId: claim.delivery.id },
          "a webhook attempt's outcome was not recorded: its endpoint was deleted, or its lease lapsed and " +
            "another worker took the endpoint over",
        );
      }
      claim = result?.next ?? null;
    }
  }

  private openSecrets(claim: Claim): string[] {
    try {
      return claim.endpoint.secrets.map((stored) => this.options.secrets.open(claim.endpoint.id, stored));
    } catch (error) {
      this.options.logger.error(
        { err: error, endpointId: claim.endpoint.id },
        "an endpoint's secret could not be opened; check WEBHOOK_SECRETS_KEY",
      );
      return [];
    }
  }

  /**
   * Records an outcome, trying again for a moment while the store is unreachable. Undefined when it could not:
   * the attempt stays started, and is failed as interrupted and attempted again once the lease lapses.
   */
  private async record(request: CompleteRequest): Promise<CompleteResult | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.options.store.complete(request);
      } catch (error) {
        if (attempt >= RECORD_TRIES) {
          this.options.logger.error(
            { err: error, deliveryId: request.deliveryId },
            "recording a webhook attempt failed; it is attempted again once its lease lapses",
          );
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      }
    }
  }
}
