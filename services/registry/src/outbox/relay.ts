import type { Logger } from "@agentry/logging";
import type { OutboxChannel, OutboxEvent, RegistryStore } from "../store/types.js";

export type OutboxHandler = (event: OutboxEvent) => Promise<void>;

/**
 * Delivers a batch of events, oldest first, and says how many of them, from the first, were delivered; with an
 * `error` when it stopped short. Events after that point are offered again on the next round.
 */
export type OutboxConsumer = (
  events: readonly OutboxEvent[],
) => Promise<{ delivered: number; error?: unknown }>;

/**
 * A consumer that hands events one by one to the handler of their type (an event without one is passed over):
 * a handler that fails stops the batch there, and what came before it stays delivered.
 */
export function eachEvent(handlers: Partial<Record<OutboxEvent["type"], OutboxHandler>>): OutboxConsumer {
  return async (events) => {
    let delivered = 0;
    try {
      for (const event of events) {
        await handlers[event.type]?.(event);
        delivered += 1;
      }
      return { delivered };
    } catch (error) {
      return { delivered, error };
    }
  };
}

/** A consumer that delivers a whole batch at once, or none of it. */
export function wholeBatches(deliver: (events: readonly OutboxEvent[]) => Promise<void>): OutboxConsumer {
  return async (events) => {
    try {
      await deliver(events);
      return { delivered: events.length };
    } catch (error) {
      return { delivered: 0, error };
    }
  };
}

export interface OutboxRelayOptions {
  store: RegistryStore;
  logger: Logger;
  /** Whose place in the outbox this relay keeps. */
  channel: OutboxChannel;
  consumer: OutboxConsumer;
  /** How often the outbox is read when nothing kicks it. */
  intervalMs?: number;
  batchSize?: number;
}

/**
 * Delivers the outbox's events to one consumer, in order, at least once. It drains at start (so an event written
 * just before a crash is delivered after the restart), after each `kick()` (a change was just committed), and
 * every `intervalMs`. A delivery that fails stops the drain at that event, which is offered again on the next
 * round, so a consumer that is down delays delivery and loses nothing. Consumers must be idempotent. Each channel
 * has a relay of its own, so one consumer being down holds up no other.
 */
export class OutboxRelay {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** A consumer that stays down is reported once, not on every retry. */
  private failing = false;

  constructor(private readonly options: OutboxRelayOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.batchSize = options.batchSize ?? 100;
  }

  start(): void {
    this.kick();
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.timer.unref();
  }

  /** Asks for a drain soon; drains never overlap. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
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

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.settle();
  }

  private async drain(): Promise<void> {
    const { store, consumer, channel, logger } = this.options;
    try {
      for (;;) {
        const events = await store.unpublishedEvents(channel, this.batchSize);
        if (events.length === 0) return;
        const { delivered, error } = await consumer(events);
        await store.markEventsPublished(
          channel,
          events.slice(0, delivered).map((event) => event.seq),
        );
        if (delivered < events.length) throw error ?? new Error("the consumer stopped short");
        if (this.failing) logger.info({ channel }, "outbox delivery resumed");
        this.failing = false;
        if (events.length < this.batchSize) return;
      }
    } catch (error) {
      if (!this.failing)
        logger.warn({ err: error, channel }, "outbox delivery failed; it is retried until it succeeds");
      this.failing = true;
    }
  }
}
