import type { Bucket, Decision } from "./types.js";

/**
 * What a store knows about one bucket at the moment of a `take`, after dropping entries older than the window
 * and, when the take was allowed, after recording it.
 */
export interface BucketState {
  bucket: Bucket;
  /** Admitted requests in the window (including this one when allowed). */
  count: number;
  /** Time of the newest admitted request in the window; meaningless when `count` is 0. */
  newestMs: number;
  /**
   * When refused: time of the admitted request whose expiry frees the first unit, i.e. the
   * `(count - limit + 1)`-th oldest. Meaningless otherwise.
   */
  freeingMs: number;
}

export function validateBuckets(buckets: readonly Bucket[]): void {
  if (buckets.length === 0) throw new RangeError("take needs at least one bucket");
  const seen = new Set<string>();
  for (const { key, limit, windowMs } of buckets) {
    if (seen.has(key)) throw new RangeError(`bucket ${key} is listed twice`);
    seen.add(key);
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`bucket ${key}: bad limit ${limit}`);
    if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
      throw new RangeError(`bucket ${key}: bad windowMs ${windowMs}`);
    }
  }
}

export function validateSlot(key: string, limit: number, ttlMs: number): void {
  if (key.length === 0) throw new RangeError("slot key is empty");
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`slot ${key}: bad limit ${limit}`);
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new RangeError(`slot ${key}: bad ttlMs ${ttlMs}`);
}

/** A bucket refuses when it already holds `limit` admitted requests in its window. */
export function refuses(bucket: Bucket, countInWindow: number): boolean {
  return countInWindow >= bucket.limit;
}

interface Reported {
  key: string;
  limit: number;
  remaining: number;
  resetAtMs: number;
  retryAfterMs: number;
}

function report(state: BucketState, nowMs: number): Reported {
  const { key, limit, windowMs } = state.bucket;
  const resetAtMs = state.count > 0 ? state.newestMs + windowMs : nowMs;
  let retryAfterMs = 0;
  if (state.count >= limit) {
    // With limit 0 nothing ever frees; a full window is the honest "not before".
    retryAfterMs = limit === 0 ? windowMs : Math.max(1, state.freeingMs + windowMs - nowMs);
  }
  return { key, limit, remaining: Math.max(0, limit - state.count), resetAtMs, retryAfterMs };
}

/**
 * Turns the per-bucket states of one `take` into the decision the headers report. Both stores call this with the
 * states their atomic check produced, so they report identically.
 */
export function decide(allowed: boolean, states: readonly BucketState[], nowMs: number): Decision {
  const reports = states.map((s) => report(s, nowMs));
  let best: Reported | undefined;
  if (allowed) {
    for (const r of reports) {
      // Least remaining; on a tie the bucket that stays constrained longest, then the smaller limit.
      if (
        best === undefined ||
        r.remaining < best.remaining ||
        (r.remaining === best.remaining &&
          (r.resetAtMs > best.resetAtMs || (r.resetAtMs === best.resetAtMs && r.limit < best.limit)))
      ) {
        best = r;
      }
    }
  } else {
    for (const r of reports) {
      if (r.retryAfterMs === 0) continue;
      if (best === undefined || r.retryAfterMs > best.retryAfterMs) best = r;
    }
  }
  if (best === undefined) throw new Error("decide: no bucket to report");
  return {
    allowed,
    key: best.key,
    limit: best.limit,
    remaining: best.remaining,
    resetAtMs: best.resetAtMs,
    retryAfterMs: allowed ? 0 : best.retryAfterMs,
  };
}
