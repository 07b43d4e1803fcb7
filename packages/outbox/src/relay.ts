import type { Logger } from "@agentry/logging";

/**
 * Where a relay reads its events: an outbox table, written in the transaction of each change. `pending` answers
 * the oldest events not yet delivered; `delivered` is told which of them the consumer has (a first part of what
 * `pending` answered), after the consumer confirmed them and never before, so an event is offered again until it
 * has been delivered.
 */
export interface OutboxSource<E> {
  pending(limit: number): Promise<E[]>;
  delivered(events: readonly E[]): Promise<void>;
}

/**
 * Delivers a batch of events, oldest first, and says how many of them, from the first, were delivered; with an
 * `error` when it stopped short. Events after that point are offered again on the next round.
 */
export type OutboxConsumer<E> = (events: readonly E[]) => Promise<{ delivered: number; error?: unknown }>;

/** A consumer that hands events one by one to `handle`: a failure stops the batch there, what came before stays. */
export function eachEvent<E>(handle: (event: E) => Promise<void>): OutboxConsumer<E> {
  return async (events) => {
    let delivered = 0;
    try {
      for (const event of events) {
        await handle(event);
        delivered += 1;
      }
      return { delivered };
    } catch (error) {
      return { delivered, error };
    }
  };
}

/** A consumer that delivers a whole batch at once, or none of it. */
export function wholeBatches<E>(deliver: (events: readonly E[]) => Promise<void>): OutboxConsumer<E> {
  return async (events) => {
    try {
      await deliver(events);
      return { delivered: events.length };
    } catch (error) {
      return { delivered: 0, error };
    }
  };
}

export interface OutboxRelayOptions<E> {
  source: OutboxSource<E>;
  consumer: OutboxConsumer<E>;
  logger: Logger;
  /** Names the outbox (or the consumer's place in it) in log lines. */
  name: string;
  /** How often the outbox is read when nothing kicks it; 1 s by default. */
  intervalMs?: number;
  /** Events read at a time; 100 by default. */
  batchSize?: number;
}

/**
 * Delivers an outbox's events to one consumer, in order, at least once. It drains at start (so an event written
 * just before a crash is delivered after the restart), after each `kick()` (a change was just committed), and
 * every `intervalMs`. A delivery that fails stops the drain at that event, which is offered again on the next
 * round, so a consumer that is down delays delivery and loses nothing. Consumers must be idempotent: an event
 * whose confirmation was lost (a crash between the consumer's answer and `delivered`) is delivered again.
 */
export class OutboxRelay<E> {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** A consumer that stays down is reported once, not on every retry. */
  private failing = false;

  constructor(private readonly options: OutboxRelayOptions<E>) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.batchSize = options.batchSize ?? 100;
  }

  start(): void {
    this.kick();
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.timer.unref();
  }

  /**
   * Asks for a drain soon; drains never overlap. The drain starts on the event loop's next turn, not within the
   * caller's: a change is kicked for right after its commit, and reading the outbox, publishing and the durable
   * delete of what was published would otherwise run before the caller's answer (a reply, a created agent) has
   * left, each blocking the loop for as long as its database call takes.
   */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const nextTurn = new Promise<void>((resolve) => setImmediate(resolve));
    this.running = nextTurn
      .then(() => (this.stopped ? undefined : this.drain()))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves once the outbox holds nothing deliverable, or a delivery failed (for tests and shutdown). */
  async settle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops reading the outbox; what is left in it waits for the next relay. Resolves once a drain under way ends. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.settle();
  }

  private async drain(): Promise<void> {
    const { source, consumer, name, logger } = this.options;
    try {
      for (;;) {
        const events = await source.pending(this.batchSize);
        if (events.length === 0) return;
        const { delivered, error } = await consumer(events);
        if (delivered > 0) await source.delivered(events.slice(0, delivered));
        if (delivered < events.length) throw error ?? new Error("the consumer stopped short");
        if (this.failing) logger.info({ outbox: name }, "outbox delivery resumed");
        this.failing = false;
        if (events.length < this.batchSize) return;
      }
    } catch (error) {
      if (!this.failing)
        logger.warn({ err: error, outbox: name }, "outbox delivery failed; it is retried until it succeeds");
      this.failing = true;
    }
  }
}
