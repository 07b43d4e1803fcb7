import { randomUUID } from "node:crypto";
import { LimiterUnavailableError } from "./errors.js";
import { type BucketState, decide, refuses, validateBuckets, validateSlot } from "./sliding-window.js";
import type { Bucket, Decision, Lease, Limiter, SlotResult } from "./types.js";

export interface MemoryLimiterOptions {
  /** Epoch milliseconds. A reading earlier than the previous one counts as the previous one. */
  now?: () => number;
  /** Expired buckets and lease sets are dropped at most this often, during calls (default 10 s). */
  sweepIntervalMs?: number;
}

/** What callers are told to wait after `close()`. */
const CLOSED_RETRY_MS = 1000;

/** The admitted times of one bucket, oldest first; `head` skips expired ones without shifting the array. */
class Log {
  private stamps: number[] = [];
  private head = 0;

  constructor(public windowMs: number) {}

  /** Drops entries that left the window ending at `nowMs`: those at or before `nowMs - windowMs`. */
  trim(nowMs: number): void {
    const cutoff = nowMs - this.windowMs;
    while (this.head < this.stamps.length && this.stamps[this.head]! <= cutoff) this.head++;
    if (this.head > 64 && this.head * 2 > this.stamps.length) {
      this.stamps = this.stamps.slice(this.head);
      this.head = 0;
    }
  }

  get count(): number {
    return this.stamps.length - this.head;
  }

  /** The i-th oldest entry in the window (0-based). */
  at(i: number): number {
    return this.stamps[this.head + i] ?? 0;
  }

  push(nowMs: number): void {
    this.stamps.push(nowMs);
  }
}

/**
 * The limiter for a single process: exact within it, since every decision runs synchronously on the event loop.
 * Memory is bounded by the buckets and leases active within their windows; the rest is swept.
 */
export class MemoryLimiter implements Limiter {
  private readonly clock: () => number;
  private readonly sweepIntervalMs: number;
  private readonly logs = new Map<string, Log>();
  /** key → lease id → expiry. */
  private readonly slots = new Map<string, Map<string, number>>();
  private lastNow = 0;
  private lastSweep = 0;
  private closed = false;

  constructor(options: MemoryLimiterOptions = {}) {
    this.clock = options.now ?? Date.now;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
  }

  async take(buckets: readonly Bucket[]): Promise<Decision> {
    validateBuckets(buckets);
    const now = this.tick();
    const logs = buckets.map((bucket) => {
      let log = this.logs.get(bucket.key);
      if (log === undefined) {
        log = new Log(bucket.windowMs);
        this.logs.set(bucket.key, log);
      }
      log.windowMs = bucket.windowMs;
      log.trim(now);
      return log;
    });
    const allowed = buckets.every((bucket, i) => !refuses(bucket, logs[i]!.count));
    const states: BucketState[] = buckets.map((bucket, i) => {
      const log = logs[i]!;
      if (allowed) log.push(now);
      const count = log.count;
      return {
        bucket,
        count,
        newestMs: log.at(count - 1),
        freeingMs: allowed ? 0 : log.at(count - bucket.limit),
      };
    });
    return decide(allowed, states, now);
  }

  async acquireSlot(key: string, limit: number, ttlMs: number): Promise<SlotResult> {
    validateSlot(key, limit, ttlMs);
    const now = this.tick();
    let leases = this.slots.get(key);
    if (leases === undefined) {
      leases = new Map();
      this.slots.set(key, leases);
    }
    dropExpired(leases, now);
    if (leases.size < limit) {
      const id = randomUUID();
      leases.set(id, now + ttlMs);
      return { acquired: true, lease: new MemoryLease(this, key, id, ttlMs), retryAfterMs: 0 };
    }
    let earliest = Number.POSITIVE_INFINITY;
    for (const expiry of leases.values()) earliest = Math.min(earliest, expiry);
    if (leases.size === 0) this.slots.delete(key);
    return { acquired: false, retryAfterMs: Number.isFinite(earliest) ? earliest - now : ttlMs };
  }

  available(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.logs.clear();
    this.slots.clear();
  }

  /** How many buckets and slot keys are held in memory (for tests and metrics). */
  stats(): { buckets: number; slotKeys: number } {
    return { buckets: this.logs.size, slotKeys: this.slots.size };
  }

  /** @internal */
  renewLease(key: string, id: string, ttlMs: number): boolean {
    const now = this.tick();
    const leases = this.slots.get(key);
    const expiry = leases?.get(id);
    if (leases === undefined || expiry === undefined) return false;
    if (expiry <= now) {
      this.forget(leases, key, id);
      return false;
    }
    leases.set(id, now + ttlMs);
    return true;
  }

  /** @internal */
  releaseLease(key: string, id: string): void {
    this.tick();
    const leases = this.slots.get(key);
    if (leases !== undefined) this.forget(leases, key, id);
  }

  private forget(leases: Map<string, number>, key: string, id: string): void {
    leases.delete(id);
    if (leases.size === 0) this.slots.delete(key);
  }

  /** The current time for one call; sweeps now and then so idle keys do not pile up. */
  private tick(): number {
    if (this.closed) throw new LimiterUnavailableError(CLOSED_RETRY_MS, new Error("limiter closed"));
    const now = Math.max(this.clock(), this.lastNow);
    this.lastNow = now;
    if (now - this.lastSweep >= this.sweepIntervalMs) {
      this.lastSweep = now;
      this.sweep(now);
    }
    return now;
  }

  private sweep(now: number): void {
    for (const [key, log] of this.logs) {
      log.trim(now);
      if (log.count === 0) this.logs.delete(key);
    }
    for (const [key, leases] of this.slots) {
      dropExpired(leases, now);
      if (leases.size === 0) this.slots.delete(key);
    }
  }
}

function dropExpired(leases: Map<string, number>, now: number): void {
  for (const [id, expiry] of leases) if (expiry <= now) leases.delete(id);
}

class MemoryLease implements Lease {
  constructor(
    private readonly limiter: MemoryLimiter,
    readonly key: string,
    readonly id: string,
    readonly ttlMs: number,
  ) {}

  async renew(): Promise<boolean> {
    return this.limiter.renewLease(this.key, this.id, this.ttlMs);
  }

  async release(): Promise<void> {
    this.limiter.releaseLease(this.key, this.id);
  }
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  return new MemoryLimiter(options);
}
