import { invalid } from "@agentry/errors";
import { DDSketch } from "@datadog/sketches-js";
import type { CallRecord } from "./store/types.js";

/*
 * Usage analytics (docs/api/usage.md): the rules both stores share. A store only translates them
 * to SQL: it adds each call's increment to its rollup rows, in the transaction that records the call, and reads
 * back the rows a plan names.
 *
 * Rollups. Every call adds to eight rows: one per level and bucket width (an hour and a day, UTC), each counting
 * messages, errors and tokens, and holding two DDSketches (latency, time to first token) as bins.
 * - `account`: every dimension blank. The account's figures, ungrouped: the common question.
 * - `agent`: the agent, the other dimensions blank. An agent's figures, or the account's by agent.
 * - `agent_model`: the agent and the model, user and key blank. Anything grouped by model without the user or the
 *   key: the question priced per model that every usage answer asks besides (its cost), and budgets' spend. Its
 *   rows number the agents' models a bucket, however many users and keys sent.
 * - `detail`: agent, user, model and API key. Anything else: grouped by or filtered on user or key.
 * A query reads the cheapest level that can answer it, at its own granularity: a 31-day hourly answer over the
 * account is 744 rows, however many messages they count.
 *
 * Sketches. DDSketch (`@datadog/sketches-js`) with 1 % relative accuracy: its logarithmic mapping gives each value
 * a bin, and a sketch rebuilt from bin counts answers its quantiles. A row keeps a sketch as its bin counts (`z`
 * counts zeros, which the mapping leaves out), not as the library's protobuf, in a form the database updates and
 * merges itself: one more in a bin, in place, within the upsert (SQLite: a JSONB object with jsonb_set; Postgres:
 * an element of an integer array), and bins added or subtracted count by count for erasure and purges. Through the
 * protobuf, each sketch would be read, decoded, updated, encoded and written back: 0.13 ms per sketch measured here
 * (p50, 220 bins), and a send updates sixteen, while the whole upsert of six rows took 0.15 ms on SQLite and
 * 0.14 ms of Postgres's execution. Counts are exact, so sketches merge (a group over several rows, the totals of a
 * range) and subtract (an agent's share of the account's rows) without loss.
 */

/** Relative error of every percentile the rollups answer. */
export const PERCENTILE_RELATIVE_ACCURACY = 0.01;

const MAPPING = new DDSketch({ relativeAccuracy: PERCENTILE_RELATIVE_ACCURACY }).mapping;

/** The bin of values too small for the mapping: 0 ms. */
export const ZERO_BIN = "z";

/**
 * A sketch's bins as a store reads them back: as counts (BinCounts), or as JSON text in either of two forms: an
 * object of bin index (or ZERO_BIN) → how many values fell in it, `{"187": 3, "z": 1}`; or dense,
 * `[zeros, first, counts...]`, the zero bin's count then the counts of the bins from `first` on, null for none
 * (`[1, 187, 3]`, or `[zeros]` alone).
 */
export type SketchBins = string | BinCounts;

/**
 * A sketch's bins as numbers, read from the store's own binary form without any text: the zero bin's count, and
 * the counts of the bins from `first` on (0 for an empty bin).
 */
export interface BinCounts {
  zeros: number;
  first: number;
  counts: ArrayLike<number>;
}

/** A sketch without any value: the bins of a row read for its counts only. */
export const NO_BINS: BinCounts = { zeros: 0, first: 0, counts: [] };

export const USAGE_DIMENSIONS = ["agentId", "userId", "model", "apiKeyId"] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

export type UsageGranularity = "hour" | "day";
export const USAGE_GRANULARITIES: readonly UsageGranularity[] = ["hour", "day"];
export const BUCKET_SECONDS: Readonly<Record<UsageGranularity, number>> = { hour: 3600, day: 86_400 };
/** The longest range each granularity answers, in buckets (before rounding): 31 days of hours, 400 of days. */
export const MAX_BUCKETS: Readonly<Record<UsageGranularity, number>> = { hour: 31 * 24, day: 400 };
/** The range of a query that names neither end. */
export const DEFAULT_RANGE_MS = 7 * 86_400_000;

export type UsageLevel = "account" | "agent" | "agent_model" | "detail";
/**
 * The dimensions each level keeps; the others are blank ('') in its rows. Cheapest first. A level adds up the
 * rows of every level that keeps more, bucket by bucket; migration 27 of both stores filled `agent_model` from
 * the `detail` rows recorded before it.
 */
export const LEVEL_DIMENSIONS: Readonly<Record<UsageLevel, readonly UsageDimension[]>> = {
  account: [],
  agent: ["agentId"],
  agent_model: ["agentId", "model"],
  detail: USAGE_DIMENSIONS,
};
const LEVELS = Object.keys(LEVEL_DIMENSIONS) as UsageLevel[];
/** Levels that keep the agent (all but the account's): an agent's purge deletes its rows there. */
export const AGENT_LEVELS: readonly UsageLevel[] = LEVELS.filter((level) =>
  LEVEL_DIMENSIONS[level].includes("agentId"),
);
/**
 * The account level adds up the agent level, bucket by bucket: an agent's row at `share` is its part of the row
 * at `total`, which its purge takes away.
 */
export const AGENT_SHARE = { total: "account", share: "agent" } as const satisfies Record<string, UsageLevel>;
/**
 * The one level that keeps the user: erasing a user merges their rows there into the blank user's. The levels
 * above it keep no user: their rows stay as they are.
 */
export const USER_LEVEL: UsageLevel = "detail";

/**
 * The rollup rows every call adds to, in the order writers lock them (UsageIncrement.cells): level by level,
 * cheapest first, an hour before a day.
 */
export const USAGE_ROWS: readonly {
  level: UsageLevel;
  granularity: UsageGranularity;
  bucketSeconds: number;
}[] = LEVELS.flatMap((level) =>
  USAGE_GRANULARITIES.map((granularity) => ({
    level,
    granularity,
    bucketSeconds: BUCKET_SECONDS[granularity],
  })),
);

/** One rollup row a call adds to. Blank dimensions are ''. */
export interface UsageCell {
  level: UsageLevel;
  bucketSeconds: number;
  /** ISO 8601 with milliseconds, UTC. */
  bucketStart: string;
  agentId: string;
  userId: string;
  model: string;
  apiKeyId: string;
}

/** What one call adds to each of its rollup rows. */
export interface UsageIncrement {
  accountId: string;
  /** The call's value of every dimension; a row keeps those of its level (LEVEL_DIMENSIONS), the others are ''. */
  dimensions: Readonly<Record<UsageDimension, string>>;
  /** The start of the call's bucket of each granularity. */
  bucketStarts: Readonly<Record<UsageGranularity, string>>;
  /**
   * Level by level, cheapest first, hours before days within each: writers lock rows in this order, so
   * concurrent writers of an account queue on its first row instead of deadlocking.
   */
  cells: UsageCell[];
  messages: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  /** The bin of the call's latency, for a completed call; null otherwise. */
  latencyBin: string | null;
  firstTokenBin: string | null;
  /** The bins of a new row: `{"<bin>": 1}`, or `{}` without a value. */
  latencyBins: string;
  firstTokenBins: string;
}

/** The bin of a value in milliseconds. */
export function binOf(ms: number): string {
  return ms > MAPPING.minPossible ? String(MAPPING.key(ms)) : ZERO_BIN;
}

function floorTo(ms: number, seconds: number): number {
  const width = seconds * 1000;
  return Math.floor(ms / width) * width;
}

function ceilTo(ms: number, seconds: number): number {
  const width = seconds * 1000;
  return Math.ceil(ms / width) * width;
}

/**
 * The last bucket start of each width as ISO text: consecutive calls mostly fall in the same buckets, and
 * formatting a date was most of the time an increment took.
 */
const lastBuckets = new Map<number, { start: number; text: string }>();

function bucketStartText(at: number, seconds: number): string {
  const start = floorTo(at, seconds);
  const last = lastBuckets.get(seconds);
  if (last?.start === start) return last.text;
  const text = new Date(start).toISOString();
  lastBuckets.set(seconds, { start, text });
  return text;
}

/**
 * What a call adds to the rollups. A call counts in the buckets of its record's time (when it ended). Every call
 * is a message, a failed one an error (a cancelled one is not); only completed calls have latencies. A call made
 * for a turn rather than to answer one (`tokensOnly`: a memory extraction) adds only its tokens.
 */
export function usageIncrement(call: CallRecord, tokensOnly = false): UsageIncrement {
  const at = Date.parse(call.createdAt);
  const dimensions: Record<UsageDimension, string> = {
    agentId: call.agentId,
    userId: call.userId,
    model: call.model ?? "",
    apiKeyId: call.apiKeyId ?? "",
  };
  const bucketStarts: Record<UsageGranularity, string> = {
    hour: bucketStartText(at, BUCKET_SECONDS.hour),
    day: bucketStartText(at, BUCKET_SECONDS.day),
  };
  const cells = USAGE_ROWS.map(({ level, granularity, bucketSeconds }): UsageCell => {
    const kept = LEVEL_DIMENSIONS[level];
    return {
      level,
      bucketSeconds,
      bucketStart: bucketStarts[granularity],
      agentId: kept.includes("agentId") ? dimensions.agentId : "",
      userId: kept.includes("userId") ? dimensions.userId : "",
      model: kept.includes("model") ? dimensions.model : "",
      apiKeyId: kept.includes("apiKeyId") ? dimensions.apiKeyId : "",
    };
  });
  const completed = call.outcome === "completed" && !tokensOnly;
  const latencyBin = completed ? binOf(call.latencyMs) : null;
  // A completed reply without a recorded first text began when it arrived.
  const firstTokenBin = completed ? binOf(call.firstTokenMs ?? call.latencyMs) : null;
  // Bins are digits or ZERO_BIN: nothing to escape.
  const initial = (bin: string | null) => (bin === null ? "{}" : `{"${bin}":1}`);
  return {
    accountId: call.accountId,
    dimensions,
    bucketStarts,
    cells,
    messages: tokensOnly ? 0 : 1,
    errors: call.outcome === "failed" && !tokensOnly ? 1 : 0,
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    latencyBin,
    firstTokenBin,
    latencyBins: initial(latencyBin),
    firstTokenBins: initial(firstTokenBin),
  };
}

/** A usage question as callers ask it; `planUsage` checks it. */
export interface UsageRequest {
  accountId: string;
  /** Inclusive; rounded down to the granularity. Default: `to` less 7 days. */
  from?: Date | undefined;
  /** Exclusive; rounded up to the granularity, and may lie in the future. Default: now. */
  to?: Date | undefined;
  /** Default: day. */
  granularity?: UsageGranularity | undefined;
  agentId?: string | undefined;
  userId?: string | undefined;
  /** Any of USAGE_DIMENSIONS; anything else is refused. */
  groupBy?: readonly string[] | undefined;
  /** The moment the default range ends at; the clock by default. */
  now?: Date | undefined;
  /**
   * Only the counts, without percentiles (null): the store adds up the rows of each bucket and group itself and
   * reads no sketch. What a question priced per model needs: several rows a bucket, one per agent and model.
   */
  countsOnly?: boolean | undefined;
}

/** A checked usage question and the rollup rows that answer it. */
export interface UsagePlan {
  accountId: string;
  /** Epoch milliseconds, on bucket boundaries. */
  from: number;
  to: number;
  granularity: UsageGranularity;
  bucketSeconds: number;
  /** The cheapest level that keeps every dimension the question filters on or groups by. */
  level: UsageLevel;
  agentId: string | undefined;
  userId: string | undefined;
  /** In the canonical order of USAGE_DIMENSIONS. */
  groupBy: UsageDimension[];
  /** Whether the rows are read for their counts only (UsageRequest.countsOnly). */
  countsOnly: boolean;
}

function isDimension(value: string): value is UsageDimension {
  return (USAGE_DIMENSIONS as readonly string[]).includes(value);
}

function timeOf(field: string, value: Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = value.getTime();
  if (!Number.isFinite(ms)) throw invalid(field, "is not a valid time");
  return ms;
}

/**
 * Checks a usage question and says which rows answer it; throws INVALID_REQUEST naming the field for an unknown
 * dimension or granularity, an empty range, or a range longer than the granularity allows.
 */
export function planUsage(request: UsageRequest): UsagePlan {
  const granularity = request.granularity ?? "day";
  if (!USAGE_GRANULARITIES.includes(granularity)) {
    throw invalid("granularity", `must be one of ${USAGE_GRANULARITIES.join(", ")}`);
  }
  const groupBy = new Set<UsageDimension>();
  for (const dimension of request.groupBy ?? []) {
    if (!isDimension(dimension)) {
      throw invalid(
        "groupBy",
        `has an unknown dimension '${dimension}' (one of ${USAGE_DIMENSIONS.join(", ")})`,
      );
    }
    groupBy.add(dimension);
  }
  const given = { from: timeOf("from", request.from), to: timeOf("to", request.to) };
  const to = given.to ?? (request.now ?? new Date()).getTime();
  const from = given.from ?? to - DEFAULT_RANGE_MS;
  if (to <= from) throw invalid("to", "must be after from");
  const bucketSeconds = BUCKET_SECONDS[granularity];
  // The range as asked, so that the last 31 days up to now are one question, though rounding makes 745 hours.
  const max = MAX_BUCKETS[granularity];
  if (to - from > max * bucketSeconds * 1000) {
    const days = (max * bucketSeconds) / 86_400;
    throw invalid("to", `must be at most ${days} days after from for ${granularity} buckets`);
  }
  const start = floorTo(from, bucketSeconds);
  const end = ceilTo(to, bucketSeconds);
  const used = new Set<UsageDimension>(groupBy);
  if (request.agentId !== undefined) used.add("agentId");
  if (request.userId !== undefined) used.add("userId");
  const level = LEVELS.find((candidate) => [...used].every((d) => LEVEL_DIMENSIONS[candidate].includes(d)))!;
  return {
    accountId: request.accountId,
    from: start,
    to: end,
    granularity,
    bucketSeconds,
    level,
    agentId: request.agentId,
    userId: request.userId,
    groupBy: USAGE_DIMENSIONS.filter((dimension) => groupBy.has(dimension)),
    countsOnly: request.countsOnly === true,
  };
}

/** A rollup row as a store reads it. */
export interface UsageRow {
  /** Epoch milliseconds. */
  bucketStart: number;
  agentId: string;
  userId: string;
  model: string;
  apiKeyId: string;
  messages: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  latencyBins: SketchBins;
  firstTokenBins: SketchBins;
}

/** The median and 95th percentile of a distribution, null without any value. */
export interface Percentiles {
  p50: number | null;
  p95: number | null;
}

export interface UsageFigures {
  messages: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  latencyMs: Percentiles;
  timeToFirstTokenMs: Percentiles;
}

/** One group's figures; a dimension is set exactly when the question groups by it. */
export interface UsageGroup {
  agentId?: string;
  userId?: string;
  model?: string;
  apiKeyId?: string;
  figures: UsageFigures;
}

export interface UsageBucket {
  /** ISO 8601, UTC; inclusive. */
  start: string;
  /** Exclusive. */
  end: string;
  groups: UsageGroup[];
}

/** The answer (docs/api/usage.md, "Answer"): every bucket of the range, oldest first, and the totals. */
export interface UsageReport {
  from: string;
  to: string;
  granularity: UsageGranularity;
  buckets: UsageBucket[];
  /** The whole range, grouped as the buckets are. */
  totals: UsageGroup[];
}

/**
 * The bins of several rows, decoded into reused arrays: a 31-day hourly answer decodes some 300,000 bins, and
 * JSON.parse with a walk over each object's keys (every key a new string) took most of its time.
 */
class BinReader {
  keys = new Float64Array(1024);
  counts = new Float64Array(1024);
  length = 0;
  zeros = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;

  reset(): void {
    this.length = 0;
    this.zeros = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
  }

  /** Adds the bins of one row; text of anything but integer bins and counts is read by JSON.parse instead. */
  read(row: SketchBins): void {
    if (typeof row !== "string") {
      this.push(null, row.zeros);
      const { first, counts } = row;
      for (let i = 0; i < counts.length; i++) this.push(first + i, counts[i]!);
      return;
    }
    const text = row;
    if (this.scan(text)) return;
    const bins = JSON.parse(text) as Record<string, number> | (number | null)[];
    if (Array.isArray(bins)) {
      const [zeros, first, ...counts] = bins;
      this.push(null, zeros ?? 0);
      for (const [i, count] of counts.entries()) this.push((first ?? 0) + i, count ?? 0);
    } else {
      for (const bin in bins) this.push(bin === ZERO_BIN ? null : Number(bin), bins[bin]!);
    }
  }

  private push(key: number | null, count: number): void {
    if (!(count > 0)) return;
    if (key === null) {
      this.zeros += count;
      return;
    }
    if (this.length === this.keys.length) {
      const keys = new Float64Array(this.length * 2);
      const counts = new Float64Array(this.length * 2);
      keys.set(this.keys);
      counts.set(this.counts);
      this.keys = keys;
      this.counts = counts;
    }
    this.keys[this.length] = key;
    this.counts[this.length] = count;
    this.length += 1;
    if (key < this.min) this.min = key;
    if (key > this.max) this.max = key;
  }

  /**
   * Reads either form with integers and any spacing, character by character in one loop (no string is made per
   * bin); false, having added nothing, for anything else.
   */
  private scan(text: string): boolean {
    const before = { length: this.length, zeros: this.zeros, min: this.min, max: this.max };
    const dense = text.charCodeAt(0) === 91; // [
    if (!dense && text.charCodeAt(0) !== 123) return this.undo(before); // {
    // Dense: the position of the next number (-2 zeros, -1 first bin, then counts). Object: a key is next, or a
    // count of `key` (NaN for the zero bin).
    let position = -2;
    let first = 0;
    let expectKey = true;
    let key = 0;
    const n = text.length;
    let i = 1;
    while (i < n) {
      let c = text.charCodeAt(i);
      if (c <= 32 || c === 44 || c === 58) {
        // spaces, commas and colons only separate
        i++;
        continue;
      }
      if (c === 93 || c === 125) return i === n - 1 || this.undo(before); // ] }
      if (dense) {
        let value = 0;
        if (c === 110 && text.startsWith("null", i)) i += 4;
        else {
          const start = i;
          while (c >= 48 && c <= 57) {
            value = value * 10 + (c - 48);
            c = text.charCodeAt(++i);
          }
          if (i === start) return this.undo(before);
        }
        if (position === -2) this.push(null, value);
        else if (position === -1) first = value;
        else this.push(first + position, value);
        position++;
        continue;
      }
      if (expectKey) {
        if (c !== 34) return this.undo(before);
        c = text.charCodeAt(++i);
        if (c === 122) {
          key = Number.NaN;
          c = text.charCodeAt(++i);
        } else {
          const negative = c === 45;
          if (negative) c = text.charCodeAt(++i);
          const start = i;
          key = 0;
          while (c >= 48 && c <= 57) {
            key = key * 10 + (c - 48);
            c = text.charCodeAt(++i);
          }
          if (i === start) return this.undo(before);
          if (negative) key = -key;
        }
        if (c !== 34) return this.undo(before);
        i++;
        expectKey = false;
        continue;
      }
      const start = i;
      let count = 0;
      while (c >= 48 && c <= 57) {
        count = count * 10 + (c - 48);
        c = text.charCodeAt(++i);
      }
      if (i === start) return this.undo(before);
      this.push(Number.isNaN(key) ? null : key, count);
      expectKey = true;
    }
    return this.undo(before);
  }

  private undo(before: { length: number; zeros: number; min: number; max: number }): false {
    this.length = before.length;
    this.zeros = before.zeros;
    this.min = before.min;
    this.max = before.max;
    return false;
  }
}

const reader = new BinReader();

/** A DDSketch of the values counted in the bins of several rows. */
export function sketchOf(bins: readonly SketchBins[]): DDSketch {
  reader.reset();
  for (const row of bins) reader.read(row);
  const sketch = new DDSketch({ relativeAccuracy: PERCENTILE_RELATIVE_ACCURACY });
  if (reader.length > 0) {
    // The dense store is filled as a whole, one array from the least key to the greatest: added a key at a time,
    // it re-centres its array at every new maximum, which made rebuilding a sketch cost more than reading its row.
    const { min, max } = reader;
    const bins = new Array<number>(max - min + 1).fill(0);
    let count = 0;
    for (let i = 0; i < reader.length; i++) {
      const index = reader.keys[i]! - min;
      bins[index] = bins[index]! + reader.counts[i]!;
      count += reader.counts[i]!;
    }
    const { store } = sketch;
    store.bins = bins;
    store.offset = min;
    store.minKey = min;
    store.maxKey = max;
    store.count = count;
  }
  sketch.zeroCount = reader.zeros;
  sketch.count = sketch.store.count + reader.zeros;
  return sketch;
}

function percentilesOf(sketch: DDSketch): Percentiles {
  if (sketch.count === 0) return { p50: null, p95: null };
  return { p50: sketch.getValueAtQuantile(0.5), p95: sketch.getValueAtQuantile(0.95) };
}

/** Counts and sketches of one group: of a bucket from its rows, of the range from its buckets' groups. */
class Tally {
  messages = 0;
  errors = 0;
  inputTokens = 0;
  outputTokens = 0;
  private readonly latencyBins: SketchBins[] = [];
  private readonly firstTokenBins: SketchBins[] = [];
  private latency: DDSketch | undefined;
  private firstToken: DDSketch | undefined;

  constructor(readonly keys: Partial<Record<UsageDimension, string>>) {}

  add(row: UsageRow): void {
    this.messages += row.messages;
    this.errors += row.errors;
    this.inputTokens += row.inputTokens;
    this.outputTokens += row.outputTokens;
    this.latencyBins.push(row.latencyBins);
    this.firstTokenBins.push(row.firstTokenBins);
  }

  /** Adds another tally of the same group (exactly: sketches merge bin by bin). */
  absorb(other: Tally): void {
    this.messages += other.messages;
    this.errors += other.errors;
    this.inputTokens += other.inputTokens;
    this.outputTokens += other.outputTokens;
    this.sketches().latency.merge(other.sketches().latency);
    this.sketches().firstToken.merge(other.sketches().firstToken);
  }

  group(): UsageGroup {
    const { latency, firstToken } = this.sketches();
    return {
      ...this.keys,
      figures: {
        messages: this.messages,
        errors: this.errors,
        inputTokens: this.inputTokens,
        outputTokens: this.outputTokens,
        latencyMs: percentilesOf(latency),
        timeToFirstTokenMs: percentilesOf(firstToken),
      },
    };
  }

  private sketches(): { latency: DDSketch; firstToken: DDSketch } {
    this.latency ??= sketchOf(this.latencyBins);
    this.firstToken ??= sketchOf(this.firstTokenBins);
    return { latency: this.latency, firstToken: this.firstToken };
  }
}

/** Groups of one bucket (or of the range), by their keys. */
class Groups {
  private readonly tallies = new Map<string, Tally>();

  constructor(private readonly dimensions: readonly UsageDimension[]) {}

  /** The tally of a group, made on first use. */
  tally(keys: Partial<Record<UsageDimension, string>>): Tally {
    const id = this.dimensions.map((dimension) => keys[dimension]).join("\u0000");
    let tally = this.tallies.get(id);
    if (!tally) {
      tally = new Tally(keys);
      this.tallies.set(id, tally);
    }
    return tally;
  }

  add(row: UsageRow): void {
    const keys: Partial<Record<UsageDimension, string>> = {};
    for (const dimension of this.dimensions) keys[dimension] = row[dimension];
    this.tally(keys).add(row);
  }

  /** In the order of their keys. */
  sorted(): Tally[] {
    return [...this.tallies.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, tally]) => tally);
  }
}

/** Groups as answered: without grouping, one group even when nothing was counted. */
function listed(groups: Groups, grouped: boolean): UsageGroup[] {
  const tallies = groups.sorted();
  if (!grouped && tallies.length === 0) return [new Tally({}).group()];
  return tallies.map((tally) => tally.group());
}

/** The answer to a plan from the rows of its level and granularity within its range (in any order). */
export function usageReport(plan: UsagePlan, rows: readonly UsageRow[]): UsageReport {
  const width = plan.bucketSeconds * 1000;
  const count = (plan.to - plan.from) / width;
  const buckets = Array.from({ length: count }, () => new Groups(plan.groupBy));
  for (const row of rows) {
    const bucket = buckets[(row.bucketStart - plan.from) / width];
    // The store reads the plan's range; a row outside it would be a store's mistake, and is not counted.
    bucket?.add(row);
  }
  const grouped = plan.groupBy.length > 0;
  const totals = new Groups(plan.groupBy);
  const answered = buckets.map((groups, index) => {
    for (const tally of groups.sorted()) totals.tally(tally.keys).absorb(tally);
    return {
      start: new Date(plan.from + index * width).toISOString(),
      end: new Date(plan.from + (index + 1) * width).toISOString(),
      groups: listed(groups, grouped),
    };
  });
  return {
    from: new Date(plan.from).toISOString(),
    to: new Date(plan.to).toISOString(),
    granularity: plan.granularity,
    buckets: answered,
    totals: listed(totals, grouped),
  };
}
