import { type Reservation, type SpendCounter, type SpendMeter, validateAmounts } from "./spend.js";

interface Held {
  value: number;
  expiresAtMs: number;
}

/**
 * Spend counters of a single process: exact within it, since each reservation is decided synchronously once its
 * counters are seeded. Concurrent first uses of a counter share one seed.
 */
export class MemorySpendMeter implements SpendMeter {
  private readonly counters = new Map<string, Held>();
  private readonly seeding = new Map<string, Promise<void>>();

  constructor(private readonly now: () => number = Date.now) {}

  async reserve(counters: readonly SpendCounter[], amounts: readonly number[]): Promise<Reservation> {
    validateAmounts(counters, amounts);
    await Promise.all(counters.map((counter) => this.seeded(counter)));
    // From here to the end, nothing awaits: the check and the increments are one step on the event loop.
    const held = counters.map((counter) => this.held(counter.key) ?? this.start(counter, 0));
    const spent = held.map((h) => h.value);
    const refused = counters.findIndex((counter, i) => spent[i]! >= counter.limit);
    if (refused >= 0) return { allowed: false, refused, spent };
    const reserved = counters.map((counter, i) => Math.min(amounts[i]!, counter.limit - spent[i]!));
    counters.forEach((counter, i) => {
      held[i]!.value += reserved[i]!;
      held[i]!.expiresAtMs = this.now() + counter.ttlMs;
    });
    return { allowed: true, spent: held.map((h) => h.value), amounts: reserved };
  }

  async settle(keys: readonly string[], reserved: readonly number[], actual: readonly number[]) {
    return keys.map((key, i) => {
      const held = this.held(key);
      if (!held) return null;
      held.value = Math.max(0, held.value + (actual[i] ?? 0) - (reserved[i] ?? 0));
      return held.value;
    });
  }

  async peek(keys: readonly string[]) {
    return keys.map((key) => this.held(key)?.value ?? null);
  }

  private held(key: string): Held | undefined {
    const held = this.counters.get(key);
    if (held && held.expiresAtMs <= this.now()) {
      this.counters.delete(key);
      return undefined;
    }
    return held;
  }

  private start(counter: SpendCounter, value: number): Held {
    const held = { value, expiresAtMs: this.now() + counter.ttlMs };
    this.counters.set(counter.key, held);
    this.sweep();
    return held;
  }

  private seeded(counter: SpendCounter): Promise<void> {
    if (this.held(counter.key)) return Promise.resolve();
    let pending = this.seeding.get(counter.key);
    if (!pending) {
      pending = counter
        .seed()
        .then((value) => {
          if (!this.held(counter.key)) this.start(counter, value);
        })
        .finally(() => this.seeding.delete(counter.key));
      this.seeding.set(counter.key, pending);
    }
    return pending;
  }

  /** Drops expired counters now and then, so a long-lived process keeps only the periods in use. */
  private sweep(): void {
    if (this.counters.size % 1024 !== 0) return;
    for (const key of [...this.counters.keys()]) this.held(key);
  }
}
