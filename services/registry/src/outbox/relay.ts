import type { Logger } from "@agentry/logging";
import type { OutboxEvent, RegistryStore } from "../store/types.js";

export type OutboxHandler = (event: OutboxEvent) => Promise<void>;

export interface OutboxRelayOptions {
  store: RegistryStore;
  logger: Logger;
  /** What to do with each kind of event; an event without a handler is marked published as it is. */
  handlers: Partial<Record<OutboxEvent["type"], OutboxHandler>>;
  /** How often the outbox is read when nothing kicks it. */
  intervalMs?: number;
  batchSize?: number;
}

/**
 * Delivers the outbox's events, in order, at least once. It drains at start (so an event written just before a
 * crash is delivered after the restart), after each `kick()` (a change was just committed), and every
 * `intervalMs`. A handler that fails stops the drain at that event, which is retried on the next round, so a
 * consumer that is down delays delivery and loses nothing. Handlers must be idempotent.
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

  /** Resolves once the outbox holds nothing deliverable, or a handler failed (for tests and shutdown). */
  async settle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.settle();
  }

  private async drain(): Promise<void> {
    const { store, handlers, logger } = this.options;
    try {
      for (;;) {
        const events = await store.unpublishedEvents(this.batchSize);
        if (events.length === 0) return;
        const delivered: number[] = [];
        try {
          for (const event of events) {
            await handlers[event.type]?.(event);
            delivered.push(event.seq);
          }
        } finally {
          await store.markEventsPublished(delivered);
        }
        if (this.failing) logger.info("outbox delivery resumed");
        this.failing = false;
        if (events.length < this.batchSize) return;
      }
    } catch (error) {
      if (!this.failing)
        logger.warn({ err: error }, "outbox delivery failed; it is retried until it succeeds");
      this.failing = true;
    }
  }
}
