import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "@agentry/logging";
import type { OutboundClient } from "@agentry/outbound";
import type { AttemptOutcome } from "../domain/schedule.js";
import type { SecretBox } from "../domain/secrets.js";
import { deliveryBody } from "../domain/signing.js";
import type {
  Claim,
  EventRecord,
  Outcome,
  RecordRequest,
  RecordResult,
  WebhookStore,
} from "../store/types.js";
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
  /**
   * Due attempts of one endpoint taken at a time (10 by default): made one after another, their outcomes
   * recorded together.
   */
  perEndpoint?: number;
}

/** Resolves after the I/O the event loop already has waiting. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Attempts at recording outcomes before the worker leaves them to the lease's lapse (and so to a retry). */
const RECORD_TRIES = 3;

/**
 * How long the first outcome waiting to be recorded waits for the other endpoints' (each of which is at most one
 * attempt away), so that one transaction records them all.
 */
const GATHER_MS = 2;

/** What an attempt must leave of its lease, besides its own timeout, for the recording of its outcome. */
const LEASE_MARGIN_MS = 5_000;

/** An endpoint's run of attempts, made, waiting to be recorded with the others'. */
interface Finished {
  endpointId: string;
  outcomes: Outcome[];
  unsent: string[];
  done(result: { recorded: boolean[]; next: Claim[] } | undefined): void;
}

const succeeded = (outcome: AttemptOutcome) =>
  outcome.kind === "answered" && outcome.status >= 200 && outcome.status < 300;

/**
 * Delivers due attempts. Each round it claims endpoints with due work (up to its free slots), each with a run of
 * its due attempts; for each endpoint it makes the run's attempts one after another, stopping at the first
 * failure (what follows a failure is the store's to decide: a retry, or disabling the endpoint), then records the
 * outcomes and takes the endpoint's next run, until the endpoint has nothing due, then lets it go. Outcomes of
 * all the endpoints that finish a run together are recorded in one transaction. So one endpoint is delivered to
 * by one worker at a time, its attempts one after another, while a slow endpoint holds up no other. Any number
 * of workers, in any number of processes, share one store.
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
  private readonly perEndpoint: number;
  /** Each event's body, made once for all its endpoints' attempts (the store shares an event's record). */
  private readonly bodies = new WeakMap<EventRecord, string>();
  /** Runs waiting to be recorded, and the recording under way. */
  private finished: Finished[] = [];
  private recording: Promise<void> | undefined;
  /** When the queue is to be recorded: on the loop's next turn, or once the others had a moment to finish. */
  private gathering: { immediate: NodeJS.Immediate } | { timeout: NodeJS.Timeout } | undefined;
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
    this.perEndpoint = options.perEndpoint ?? 10;
    // An attempt and the recording of its outcome must fit in the lease, or another worker would take over
    // an endpoint whose attempt is still running.
    if (this.leaseMs < this.attemptTimeoutMs + LEASE_MARGIN_MS) {
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
      claims = await this.options.store.claim({
        worker: this.id,
        limit: free,
        leaseMs: this.leaseMs,
        perEndpoint: this.perEndpoint,
      });
      if (this.failing) this.options.logger.info("webhook deliveries resumed");
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        this.options.logger.warn({ err: error }, "claiming webhook deliveries failed; retrying every round");
      }
      this.failing = true;
      return;
    }
    for (const run of byEndpoint(claims)) {
      const endpointId = run[0]!.endpoint.id;
      const task = this.deliver(run)
        .catch((error: unknown) => {
          // A bug, not an outcome (those are all recorded): the attempts are taken up again after the lease.
          this.options.logger.error({ err: error, endpointId }, "webhook delivery failed");
        })
        .finally(() => {
          this.active.delete(task);
          this.kick();
        });
      this.active.add(task);
    }
    // A full round may have left more due work than slots: the next round takes it as slots free up.
  }

  /**
   * Makes the endpoint's claimed run of attempts, one after another, then its next runs, until none is due or
   * the worker stops. A run stops at its first failure, when the worker stops, or when the lease has no room left
   * for another attempt; its other attempts are handed back.
   */
  private async deliver(first: Claim[]): Promise<void> {
    const { logger } = this.options;
    let run = first;
    while (run.length > 0) {
      const claimed = performance.now();
      const outcomes: Outcome[] = [];
      const unsent: string[] = [];
      let going = true;
      for (const [i, claim] of run.entries()) {
        // The first attempt fits in a fresh lease (the constructor checks it); each further one needs the room.
        going &&=
          !this.stopping &&
          (i === 0 || performance.now() - claimed + this.attemptTimeoutMs + LEASE_MARGIN_MS <= this.leaseMs);
        if (!going) {
          unsent.push(claim.delivery.id);
          continue;
        }
        // Each attempt waits for what the loop already has to do: requests that arrived meanwhile (the next
        // agent create, when the service is embedded) are served before another delivery of the fan-out.
        await nextTurn();
        const outcome = await sendAttempt(
          this.options.outbound,
          {
            url: claim.endpoint.url,
            eventId: claim.event.id,
            body: this.bodyOf(claim.event),
            secrets: this.openSecrets(claim),
          },
          this.attemptTimeoutMs,
        );
        outcomes.push({ deliveryId: claim.delivery.id, outcome });
        logger.debug(
          {
            endpointId: claim.endpoint.id,
            deliveryId: claim.delivery.id,
            eventId: claim.event.id,
            attempt: claim.delivery.attempt,
            ...(outcome.kind === "answered" ? { status: outcome.status } : { error: outcome.error }),
          },
          "webhook attempt",
        );
        going = succeeded(outcome);
      }
      const result = await new Promise<{ recorded: boolean[]; next: Claim[] } | undefined>((done) =>
        this.finish({ endpointId: run[0]!.endpoint.id, outcomes, unsent, done }),
      );
      const lost = result ? outcomes.filter((_, i) => !result.recorded[i]) : [];
      if (lost.length > 0) {
        logger.warn(
          { endpointId: run[0]!.endpoint.id, deliveryIds: lost.map((o) => o.deliveryId) },
          "webhook attempts' outcomes were not recorded: their endpoint was deleted, or its lease lapsed and " +
            "another worker took the endpoint over",
        );
      }
      run = result?.next ?? [];
    }
  }

  private bodyOf(event: EventRecord): string {
    let body = this.bodies.get(event);
    if (body === undefined) {
      body = deliveryBody(event);
      this.bodies.set(event, body);
    }
    return body;
  }

  /**
   * Queues a finished run for recording. The queue is recorded in one transaction once every endpoint in flight
   * has finished its run, or `GATHER_MS` after the first came; one recording at a time, the next takes what
   * queued meanwhile.
   */
  private finish(run: Finished): void {
    this.finished.push(run);
    this.gather();
  }

  private gather(): void {
    if (this.recording || this.finished.length === 0) return;
    if (this.finished.length >= this.active.size) {
      // Everyone is waiting: record on the loop's next turn, after the I/O already waiting.
      if (this.gathering && "immediate" in this.gathering) return;
      if (this.gathering) clearTimeout(this.gathering.timeout);
      this.gathering = { immediate: setImmediate(() => this.recordFinished()) };
    } else {
      this.gathering ??= { timeout: setTimeout(() => this.recordFinished(), GATHER_MS) };
    }
  }

  private recordFinished(): void {
    this.gathering = undefined;
    const batch = this.finished;
    if (this.recording || batch.length === 0) return;
    this.finished = [];
    this.recording = this.recordBatch(batch).finally(() => {
      this.recording = undefined;
      this.gather();
    });
  }

  private async recordBatch(batch: Finished[]): Promise<void> {
    const result = await this.record({
      worker: this.id,
      outcomes: batch.flatMap((run) => run.outcomes),
      unsent: batch.flatMap((run) => run.unsent),
      schedule: this.options.schedule,
      leaseMs: this.leaseMs,
      claimNext: !this.stopping,
      perEndpoint: this.perEndpoint,
    });
    const next = new Map<string, Claim[]>();
    for (const claim of result?.next ?? []) {
      const own = next.get(claim.endpoint.id);
      if (own) own.push(claim);
      else next.set(claim.endpoint.id, [claim]);
    }
    let offset = 0;
    for (const run of batch) {
      const recorded = result?.recorded.slice(offset, offset + run.outcomes.length);
      offset += run.outcomes.length;
      run.done(result && recorded ? { recorded, next: next.get(run.endpointId) ?? [] } : undefined);
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
   * Records outcomes, trying again for a moment while the store is unreachable. Undefined when it could not: the
   * attempts stay started, and are failed as interrupted and attempted again once the lease lapses.
   */
  private async record(request: RecordRequest): Promise<RecordResult | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.options.store.record(request);
      } catch (error) {
        if (attempt >= RECORD_TRIES) {
          this.options.logger.error(
            { err: error, deliveryIds: request.outcomes.map((o) => o.deliveryId) },
            "recording webhook attempts failed; they are attempted again once their lease lapses",
          );
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      }
    }
  }
}

/** Claims grouped by endpoint, each group in the order given (the store gives an endpoint's claims together). */
function byEndpoint(claims: readonly Claim[]): Claim[][] {
  const runs = new Map<string, Claim[]>();
  for (const claim of claims) {
    const run = runs.get(claim.endpoint.id);
    if (run) run.push(claim);
    else runs.set(claim.endpoint.id, [claim]);
  }
  return [...runs.values()];
}
