import { randomUUID } from "node:crypto";
import { commonJsExports } from "@agentry/core";
import type { Availability } from "@agentry/logging";
import type { createClient } from "redis";
import { LimiterUnavailableError } from "./errors.js";
import { ACQUIRE, RELEASE, RENEW, type Script, TAKE } from "./redis-scripts.js";
import { type BucketState, decide, validateBuckets, validateSlot } from "./sliding-window.js";
import type { Bucket, Decision, Lease, Limiter, SlotResult } from "./types.js";

export interface RedisLimiterOptions {
  /** `redis://[[user][:password]@]host[:port][/db]` (or `rediss://`). */
  url: string;
  /** Prepended to every key, so several deployments can share one Redis (default `agentry:limits:`). */
  keyPrefix?: string;
  /**
   * A call without an answer within this time fails with LimiterUnavailableError (default 1000 ms). The script may
   * still run later; it then spends units for a request that was refused, which errs on the safe side.
   */
  commandTimeoutMs?: number;
  /** Per connection attempt (default 2000 ms). */
  connectTimeoutMs?: number;
  /** Reconnection backs off exponentially up to this delay, and keeps trying forever (default 2000 ms). */
  maxReconnectDelayMs?: number;
  /** The wait suggested to callers while Redis is unavailable (default 1000 ms). */
  unavailableRetryAfterMs?: number;
  /**
   * Told whether Redis answers: every connection error and failed call, and every recovery (an outage log fits).
   * Errors are never thrown from here; calls fail with LimiterUnavailableError.
   */
  availability?: Availability;
}

type Client = ReturnType<typeof createClient>;
type Reply = Awaited<ReturnType<Client["evalSha"]>>;

/**
 * The limiter for several gateway instances: every decision is one Lua script on one Redis, run on the server's
 * clock, so limits are exact across all of them. Fails closed: when Redis cannot answer, calls throw
 * LimiterUnavailableError instead of hanging or letting requests through.
 */
export class RedisLimiter implements Limiter {
  /** Set once the Redis client is loaded: it is imported on first use, so a process without Redis never loads it. */
  private client: Client | undefined;
  private readonly prefix: string;
  private readonly unavailableRetryAfterMs: number;
  private readonly commandTimeoutMs: number;
  private readonly connected: Promise<void>;
  private readonly availability: Availability | undefined;
  private closed = false;
  /** Whether the client has ever been ready: until then a call waits for the first connection (briefly). */
  private connectedOnce = false;

  constructor(options: RedisLimiterOptions) {
    this.prefix = options.keyPrefix ?? "agentry:limits:";
    this.unavailableRetryAfterMs = options.unavailableRetryAfterMs ?? 1000;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 1000;
    const maxDelay = options.maxReconnectDelayMs ?? 2000;
    const availability = options.availability;
    this.availability = availability;
    const onError = (error: Error) => availability?.failed(error);
    // Connects in the background (retrying forever), so a gateway can start before its Redis does.
    this.connected = import("redis")
      .then(commonJsExports)
      .then(({ createClient }) => {
        if (this.closed) return;
        const client: Client = createClient({
          url: options.url,
          // Without a connection, fail at once rather than queue requests behind an outage.
          disableOfflineQueue: true,
          socket: {
            connectTimeout: options.connectTimeoutMs ?? 2000,
            reconnectStrategy: (retries) =>
              Math.min(50 * 2 ** Math.min(retries, 16), maxDelay) + Math.floor(Math.random() * 100),
          },
        });
        // node-redis emits every connection failure as 'error'; an EventEmitter without a listener would crash.
        client.on("error", onError);
        client.on("ready", () => {
          this.connectedOnce = true;
          availability?.recovered();
        });
        this.client = client;
        return client.connect().then(() => {});
      })
      .catch((error: unknown) => {
        if (!this.closed) onError(error instanceof Error ? error : new Error(String(error)));
      });
  }

  async take(buckets: readonly Bucket[]): Promise<Decision> {
    validateBuckets(buckets);
    const args: string[] = [];
    for (const { limit, windowMs } of buckets) args.push(String(limit), String(windowMs));
    const reply = numbers(
      await this.run(
        TAKE,
        buckets.map((b) => this.rateKey(b.key)),
        args,
      ),
    );
    const [allowed, now] = reply;
    const states: BucketState[] = buckets.map((bucket, i) => ({
      bucket,
      count: reply[2 + 3 * i] ?? 0,
      newestMs: reply[3 + 3 * i] ?? 0,
      freeingMs: reply[4 + 3 * i] ?? 0,
    }));
    return decide(allowed === 1, states, now ?? 0);
  }

  async acquireSlot(key: string, limit: number, ttlMs: number): Promise<SlotResult> {
    validateSlot(key, limit, ttlMs);
    const id = randomUUID();
    const slotKey = this.slotKey(key);
    const [acquired, retryAfterMs] = numbers(
      await this.run(ACQUIRE, [slotKey], [String(limit), String(ttlMs), id]),
    );
    if (acquired === 1)
      return { acquired: true, lease: new RedisLease(this, slotKey, key, id, ttlMs), retryAfterMs: 0 };
    return { acquired: false, retryAfterMs: Math.max(1, retryAfterMs ?? ttlMs) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const client = this.client;
    if (client?.isReady) {
      // close() waits for pending replies, which a hung server never sends.
      await withDeadline(client.close(), this.commandTimeoutMs).catch(() => {});
    }
    if (client?.isOpen) client.destroy();
    await this.connected;
  }

  available(): boolean {
    return !this.closed && this.client?.isReady === true;
  }

  /** Resolves once first connected; never rejects, and stays pending while Redis is down. */
  ready(): Promise<void> {
    return this.connected;
  }

  /** @internal */
  async renewLease(slotKey: string, id: string, ttlMs: number): Promise<boolean> {
    return (await this.run(RENEW, [slotKey], [id, String(ttlMs)])) === 1;
  }

  /** @internal */
  async releaseLease(slotKey: string, id: string): Promise<void> {
    await this.run(RELEASE, [slotKey], [id]);
  }

  private rateKey(key: string): string {
    return `${this.prefix}rate:${key}`;
  }

  private slotKey(key: string): string {
    return `${this.prefix}slot:${key}`;
  }

  /**
   * One round trip in the common case: EVALSHA, and EVAL (which also caches the script) when Redis lost it. Also
   * what the spend meter runs its scripts with, on this limiter's connection.
   * @internal
   */
  async run(script: Script, keys: string[], args: string[]): Promise<Reply> {
    if (this.closed)
      throw new LimiterUnavailableError(this.unavailableRetryAfterMs, new Error("limiter closed"));
    try {
      // A process that has just started answers its first requests once Redis is reached, rather than failing
      // them while it connects; after that an outage fails calls at once.
      if (!this.connectedOnce) await withDeadline(this.connected, this.commandTimeoutMs).catch(() => {});
      const reply = await withDeadline(this.evaluate(script, keys, args), this.commandTimeoutMs);
      this.availability?.recovered();
      return reply;
    } catch (error) {
      this.availability?.failed(error);
      throw new LimiterUnavailableError(this.unavailableRetryAfterMs, error);
    }
  }

  private async evaluate(script: Script, keys: string[], args: string[]): Promise<Reply> {
    const client = this.client;
    if (!client) throw new Error("the Redis client is still loading");
    try {
      return await client.evalSha(script.sha1, { keys, arguments: args });
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith("NOSCRIPT"))) throw error;
      return await client.eval(script.source, { keys, arguments: args });
    }
  }
}

/**
 * node-redis's own command timeout stops counting once a command is written, so a server that accepts the bytes
 * and never answers would hold the call forever. A late reply is still matched to its command and discarded.
 */
async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function numbers(reply: Reply): number[] {
  if (!Array.isArray(reply)) throw new Error(`unexpected limiter script reply: ${String(reply)}`);
  return reply.map(Number);
}

class RedisLease implements Lease {
  constructor(
    private readonly limiter: RedisLimiter,
    private readonly slotKey: string,
    readonly key: string,
    readonly id: string,
    readonly ttlMs: number,
  ) {}

  renew(): Promise<boolean> {
    return this.limiter.renewLease(this.slotKey, this.id, this.ttlMs);
  }

  async release(): Promise<void> {
    await this.limiter.releaseLease(this.slotKey, this.id);
  }
}

/** Starts connecting in the background and returns at once; see RedisLimiter. */
export function createRedisLimiter(options: RedisLimiterOptions): RedisLimiter {
  return new RedisLimiter(options);
}
