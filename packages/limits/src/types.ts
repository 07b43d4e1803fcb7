/**
 * One rate limit: at most `limit` admitted requests in any `windowMs` long interval (a sliding window, see the
 * README). Buckets are identified by `key` alone; callers keep `limit` and `windowMs` stable for a key.
 */
export interface Bucket {
  /** e.g. `acct:acct_1:requestsPerMinute`, `acct:acct_1:agent:agt_1:messagesPerMinute`. */
  key: string;
  /** Integer ≥ 0. With 0 every request is refused. */
  limit: number;
  /** Integer > 0, in milliseconds. */
  windowMs: number;
}

/**
 * The outcome of one `take`, reported for one bucket: the one with the least remaining when allowed, the
 * refusing bucket with the longest wait when refused. All times are Unix epoch milliseconds from the clock that
 * decided (the Redis server's in the Redis implementation).
 */
export interface Decision {
  allowed: boolean;
  /** The key of the reported bucket. */
  key: string;
  /** `X-RateLimit-Limit`. */
  limit: number;
  /** Units left in the reported bucket's window after this request: `limit - admitted in the last windowMs`. */
  remaining: number;
  /**
   * When the reported bucket is full again (all `limit` units available): its newest admitted request + windowMs,
   * or now when it holds none.
   */
  resetAtMs: number;
  /** 0 when allowed; when refused, how long until every refusing bucket has a unit free again. */
  retryAfterMs: number;
}

/** A held concurrency slot. Expires `ttlMs` after acquisition or the last renewal. */
export interface Lease {
  readonly key: string;
  readonly id: string;
  readonly ttlMs: number;
  /**
   * Extends the lease to `ttlMs` from now. Resolves `false` when the lease had already expired or been released:
   * the slot may then be held by someone else, and the lease is not revived.
   */
  renew(): Promise<boolean>;
  /** Frees the slot. Idempotent. */
  release(): Promise<void>;
}

export type SlotResult =
  | { acquired: true; lease: Lease; retryAfterMs: 0 }
  /**
   * `retryAfterMs`: until the earliest held lease expires (`ttlMs` when none is held, as with a limit of 0); a
   * release can free a slot sooner.
   */
  | { acquired: false; retryAfterMs: number };

export interface Limiter {
  /**
   * Spends one unit from every bucket if and only if all of them allow it, atomically. An empty list, a key
   * listed twice, or a limit or window that is not a whole number in range is a programming error (RangeError).
   * @throws LimiterUnavailableError when the backing store cannot decide (fail closed).
   */
  take(buckets: readonly Bucket[]): Promise<Decision>;
  /**
   * Acquires one of `limit` concurrency slots under `key`; the lease expires after `ttlMs` unless renewed. An
   * empty key, or a limit or ttl that is not a whole number in range, is a programming error (RangeError).
   * @throws LimiterUnavailableError when the backing store cannot decide (fail closed).
   */
  acquireSlot(key: string, limit: number, ttlMs: number): Promise<SlotResult>;
  /** Whether decisions can be made now (connected to its store, not closed): what readiness reports. */
  available(): boolean;
  /** Releases connections and timers. Later calls throw LimiterUnavailableError. */
  close(): Promise<void>;
}
