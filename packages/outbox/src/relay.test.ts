import type { PublicEvent } from "@agentry/events";
import { silentLogger } from "@agentry/logging";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { eachEvent, type OutboxConsumer, OutboxRelay, type OutboxSource, wholeBatches } from "./relay.js";
import { publishingConsumer } from "./webhooks.js";

/** An outbox in memory: rows leave it when they are reported delivered, as the stores' outboxes do. */
class MemoryOutbox implements OutboxSource<number> {
  rows: number[] = [];
  reads = 0;
  failDelivered = 0;
  pendingWhenDelivered: number[][] = [];

  add(...rows: number[]): void {
    this.rows.push(...rows);
  }

  async pending(limit: number): Promise<number[]> {
    this.reads += 1;
    return this.rows.slice(0, limit);
  }

  async delivered(events: readonly number[]): Promise<void> {
    if (this.failDelivered > 0) {
      this.failDelivered -= 1;
      throw new Error("database unavailable");
    }
    this.pendingWhenDelivered.push([...this.rows]);
    this.rows = this.rows.filter((row) => !events.includes(row));
  }
}

function relayOf(
  source: MemoryOutbox,
  consumer: OutboxConsumer<number>,
  options: { batchSize?: number } = {},
) {
  return new OutboxRelay({
    source,
    consumer,
    logger: silentLogger(),
    name: "test",
    intervalMs: 10,
    ...options,
  });
}

describe("OutboxRelay", () => {
  it("delivers every event in order, batch after batch, and removes each only once the consumer confirmed it", async () => {
    const outbox = new MemoryOutbox();
    outbox.add(1, 2, 3, 4, 5);
    const batches: number[][] = [];
    const relay = relayOf(
      outbox,
      wholeBatches(async (events) => {
        // Still in the outbox while being delivered.
        for (const event of events) expect(outbox.rows).toContain(event);
        batches.push([...events]);
      }),
      { batchSize: 2 },
    );
    relay.kick();
    await relay.settle();
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    expect(outbox.rows).toEqual([]);
    await relay.stop();
  });

  it("offers events again after a failing delivery until it succeeds, losing none and keeping the order", async () => {
    const outbox = new MemoryOutbox();
    outbox.add(1, 2, 3);
    const attempts: number[][] = [];
    let up = false;
    const relay = relayOf(
      outbox,
      wholeBatches(async (events) => {
        attempts.push([...events]);
        if (!up) throw new Error("webhooks service down");
      }),
    );
    relay.start();
    await vi.waitFor(() => expect(attempts.length).toBeGreaterThanOrEqual(3));
    expect(outbox.rows).toEqual([1, 2, 3]);
    outbox.add(4);
    up = true;
    await vi.waitFor(() => expect(outbox.rows).toEqual([]));
    await relay.stop();
    for (const attempt of attempts.slice(0, 3)) expect(attempt).toEqual([1, 2, 3]);
    expect(attempts.at(-1)).toEqual([1, 2, 3, 4]);
  });

  it("keeps what a consumer delivered before it failed, and starts the next round at the failed event", async () => {
    const outbox = new MemoryOutbox();
    outbox.add(1, 2, 3, 4);
    const handled: number[] = [];
    let failures = 1;
    const relay = relayOf(
      outbox,
      eachEvent(async (event) => {
        if (event === 3 && failures-- > 0) throw new Error("down");
        handled.push(event);
      }),
    );
    relay.kick();
    await relay.settle();
    expect(handled).toEqual([1, 2]);
    expect(outbox.rows).toEqual([3, 4]);
    relay.kick();
    await relay.settle();
    expect(handled).toEqual([1, 2, 3, 4]);
    expect(outbox.rows).toEqual([]);
  });

  it("delivers again an event whose confirmation could not be recorded: at least once", async () => {
    const outbox = new MemoryOutbox();
    outbox.add(1);
    outbox.failDelivered = 1;
    const handled: number[] = [];
    const relay = relayOf(
      outbox,
      eachEvent(async (event) => {
        handled.push(event);
      }),
    );
    relay.kick();
    await relay.settle();
    expect(outbox.rows).toEqual([1]);
    relay.kick();
    await relay.settle();
    expect(handled).toEqual([1, 1]);
    expect(outbox.rows).toEqual([]);
  });

  it("drains on the event loop's next turn, after what the caller does in its own", async () => {
    const outbox = new MemoryOutbox();
    outbox.add(1);
    const relay = relayOf(
      outbox,
      wholeBatches(async () => {}),
    );
    relay.kick();
    // The caller's turn: its promise callbacks (a reply on its way) run before the outbox is read.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(outbox.reads).toBe(0);
    await relay.settle();
    expect(outbox.reads).toBeGreaterThan(0);
    expect(outbox.rows).toEqual([]);
  });

  it("never runs two drains at once; a kick during a drain asks for one more after it", async () => {
    const outbox = new MemoryOutbox();
    outbox.add(1);
    let inFlight = 0;
    let most = 0;
    const relay = relayOf(
      outbox,
      eachEvent(async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 20));
        inFlight -= 1;
      }),
    );
    relay.kick();
    outbox.add(2);
    relay.kick();
    relay.kick();
    await relay.settle();
    expect(most).toBe(1);
    expect(outbox.rows).toEqual([]);
  });

  it("reports a consumer that stays down once, and its recovery once", async () => {
    const lines: { msg: string }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const outbox = new MemoryOutbox();
    outbox.add(1);
    let up = false;
    const relay = new OutboxRelay({
      source: outbox,
      consumer: wholeBatches(async () => {
        if (!up) throw new Error("down");
      }),
      logger,
      name: "test",
    });
    for (let i = 0; i < 3; i++) {
      relay.kick();
      await relay.settle();
    }
    up = true;
    relay.kick();
    await relay.settle();
    expect(lines.map((line) => line.msg)).toEqual([
      "outbox delivery failed; it is retried until it succeeds",
      "outbox delivery resumed",
    ]);
  });

  it("reads nothing more once stopped", async () => {
    const outbox = new MemoryOutbox();
    const relay = relayOf(
      outbox,
      wholeBatches(async () => {}),
    );
    relay.start();
    await relay.stop();
    const reads = outbox.reads;
    outbox.add(1);
    relay.kick();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(outbox.reads).toBe(reads);
    expect(outbox.rows).toEqual([1]);
  });
});

describe("publishingConsumer", () => {
  const event = (id: string, size = 10): PublicEvent => ({
    id,
    type: "message.completed",
    accountId: "acct_1",
    createdAt: "2026-01-01T00:00:00.000Z",
    data: { text: "x".repeat(size) },
  });

  it("publishes what the presentation gives, in calls of at most 4 MiB of data, skipping events it has none for", async () => {
    const calls: string[][] = [];
    const consumer = publishingConsumer<string>(
      async (events) => {
        calls.push(events.map((e) => e.id));
      },
      (id) => (id === "skip" ? undefined : event(id, 1024 * 1024)),
    );
    expect(await consumer(["a", "skip", "b", "c", "d", "e"])).toEqual({ delivered: 6 });
    expect(calls).toEqual([
      ["a", "b", "c"],
      ["d", "e"],
    ]);
  });

  it("counts the batch delivered only when every call was confirmed", async () => {
    let call = 0;
    const consumer = publishingConsumer<string>(
      async () => {
        call += 1;
        if (call === 2) throw new Error("webhooks service down");
      },
      (id) => event(id, 3 * 1024 * 1024),
    );
    const result = await consumer(["a", "b"]);
    expect(result.delivered).toBe(0);
    expect(result.error).toBeInstanceOf(Error);
  });
});
