import { join } from "node:path";
import { type CallRecord, CONVERSATION_DB_FILE, openConversationStore } from "@agentry/conversation";
import { newId } from "@agentry/core";
import Database from "better-sqlite3";
import { type Bench, log, median, percentile, serviceEnv } from "../bench.js";
import { cpuSecondsOf, type Seed, seed } from "../harness.js";
import { createBenchDatabase, vacuum } from "../postgres.js";

export interface UsageResult {
  database: "SQLite" | "Postgres";
  /** Sends recorded in the account's rollups. */
  sends: number;
  /** How long recording them took, in seconds. */
  seedSeconds: number;
  /** The query's round trip, one at a time, in milliseconds. */
  p50: number;
  p99: number;
  /** The gateway's CPU time per query, in milliseconds. */
  cpuMs: number;
  /** The answer's size in bytes. */
  bytes: number;
  queries: number;
}

const HOUR = 3_600_000;
const DAYS = 31;
/** Calls recorded per transaction. */
const BATCH = 20_000;
/**
 * On Postgres, smaller transactions at random times: a row updated many times within one transaction keeps every
 * version until it commits, which makes each further update of it slower.
 */
const POSTGRES_BATCH = 2000;
/** Transactions recording at once on Postgres. */
const POSTGRES_SLICES = 4;

/**
 * A 31-day hourly usage query over an account with `settings.usageSends` recorded sends, through the all-in-one
 * gateway: SQLite, and Postgres as well when TEST_DATABASE_URL names a server (a database of its own is created
 * there and dropped afterwards). The sends are recorded through the store's own recording path
 * (`recordCalls`: each call's record and rollup rows, as a send writes them) in large transactions, spread over
 * the 31 days, ten agents, 200 users, three models and three keys.
 */
export async function usageQueries(
  bench: Bench,
  providerEnv: Record<string, string>,
): Promise<UsageResult[]> {
  const results = [await usageOn(bench, providerEnv, "SQLite")];
  const server = process.env.TEST_DATABASE_URL;
  if (server) {
    const database = await createBenchDatabase(server).catch((error: unknown) => {
      log(`no database of its own on TEST_DATABASE_URL's server (${String(error)}): SQLite only`);
      return undefined;
    });
    if (!database) return results;
    try {
      results.push(await usageOn(bench, providerEnv, "Postgres", database.url));
    } finally {
      await database.drop();
    }
  } else {
    log("TEST_DATABASE_URL is not set: the usage query is measured on SQLite only");
  }
  return results;
}

async function usageOn(
  bench: Bench,
  providerEnv: Record<string, string>,
  database: UsageResult["database"],
  databaseUrl?: string,
): Promise<UsageResult> {
  const { settings } = bench;
  const dataDir = join(bench.dir, `usage-${database.toLowerCase()}`);
  const tenant = await seed(dataDir, databaseUrl);
  const to = Math.ceil(Date.now() / HOUR) * HOUR;
  const from = to - DAYS * 24 * HOUR;

  log(`recording ${settings.usageSends} sends over ${DAYS} days (${database}) ...`);
  const store = await openConversationStore({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
  const started = performance.now();
  try {
    // SQLite has one writer; Postgres records slices of whole days at once, on connections of their own (they
    // share no rollup row, so none waits for another's).
    const postgres = databaseUrl !== undefined;
    const slices = daySlices(from, to, postgres ? POSTGRES_SLICES : 1, settings.usageSends);
    const keys = [tenant.apiKeyId, newId("key"), newId("key")];
    let recorded = 0;
    await Promise.all(
      slices.map(async (slice) => {
        const sends = mixedSends(tenant, keys, slice, postgres ? "random" : "ordered");
        const size = postgres ? POSTGRES_BATCH : BATCH;
        for (let done = 0; done < slice.sends; ) {
          const batch: CallRecord[] = [];
          for (; batch.length < size && done < slice.sends; done++) batch.push(sends(done));
          await store.recordCalls(batch);
          const before = recorded;
          recorded += batch.length;
          if (Math.floor(recorded / 200_000) > Math.floor(before / 200_000)) log(`  ${recorded} recorded`);
        }
      }),
    );
  } finally {
    await store.close();
  }
  // What autovacuum does after so many updates, done now rather than while the queries are timed.
  if (databaseUrl) await vacuum(databaseUrl, "conversation.usage_rollups");
  else checkpoint(join(dataDir, CONVERSATION_DB_FILE));
  const seedSeconds = (performance.now() - started) / 1000;
  log(`recorded ${settings.usageSends} sends in ${seedSeconds.toFixed(0)} s`);

  const env = {
    ...serviceEnv(dataDir),
    ...providerEnv,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  const gateway = await bench.startGateway(`gateway-usage-${database.toLowerCase()}`, env, tenant);
  const url =
    `${gateway.url}/v1/usage?granularity=hour&from=${new Date(from).toISOString()}` +
    `&to=${new Date(to).toISOString()}`;
  const headers = { authorization: `Bearer ${tenant.apiKey}` };
  const body = await (await fetch(url, { headers })).text();
  const answer = JSON.parse(body) as { data: { buckets: unknown[]; totals: { messages: number } } };
  const { buckets, totals } = answer.data;
  if (buckets.length !== DAYS * 24 || totals.messages !== settings.usageSends) {
    throw new Error(`the usage answer has ${buckets.length} buckets and ${totals.messages} sends`);
  }
  log(`timing ${settings.usageQueries} usage queries (${database}) ...`);
  const cpuBefore = await cpuSecondsOf(gateway.process.pid);
  const warmup = 3;
  const [samples] = await bench.latency(
    [{ url, method: "GET", headers, mode: "json" }],
    warmup,
    settings.usageQueries,
  );
  const cpuMs =
    (((await cpuSecondsOf(gateway.process.pid)) - cpuBefore) * 1000) / (warmup + settings.usageQueries);
  await bench.stop([gateway.process]);
  return {
    database,
    sends: settings.usageSends,
    seedSeconds,
    p50: median(samples!),
    p99: percentile(samples!, 99),
    cpuMs,
    bytes: Buffer.byteLength(body),
    queries: settings.usageQueries,
  };
}

/**
 * Moves the SQLite file's write-ahead log into the database and empties it, as SQLite does by itself over time,
 * so that the timed queries do not read the seeding's pages from the log. Closing the store's last connection
 * does it too; this makes sure, and says so.
 */
function checkpoint(file: string): void {
  const db = new Database(file);
  try {
    const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number; log: number }[];
    if (result?.busy !== 0) throw new Error(`the checkpoint of ${file} could not complete`);
    log("checkpointed the SQLite file: its write-ahead log is empty");
  } finally {
    db.close();
  }
}

/** A small deterministic generator, so every run records the same sends. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

/**
 * [from, to) in `count` slices cut at midnights (UTC), so that no two share a rollup row of a day or an hour, the
 * sends shared in proportion to their length.
 */
function daySlices(from: number, to: number, count: number, sends: number) {
  const day = 24 * HOUR;
  const midnights: number[] = [];
  for (let at = Math.ceil((from + 1) / day) * day; at < to; at += day) midnights.push(at);
  const cuts = Array.from(
    { length: count - 1 },
    (_, i) => midnights[Math.round(((i + 1) * midnights.length) / count)]!,
  );
  const bounds = [from, ...cuts, to];
  const slices: { from: number; to: number; sends: number; seed: number }[] = [];
  let given = 0;
  for (let i = 0; i < count; i++) {
    const [start, end] = [bounds[i]!, bounds[i + 1]!];
    const share = i === count - 1 ? sends - given : Math.round((sends * (end - start)) / (to - from));
    slices.push({ from: start, to: end, sends: share, seed: 20_260_101 + i });
    given += share;
  }
  return slices;
}

/**
 * The i-th of a slice's sends, in time order or at a random time of the slice (the rollups are the same in any
 * order): each user mostly talks to one agent, each agent has a model (a tenth of its sends answered by another,
 * as fallbacks do) and a key of its app; 2 % fail, 1 % are cancelled, the rest complete with latencies from a
 * fraction of a second to several.
 */
function mixedSends(
  tenant: Seed,
  keys: readonly string[],
  slice: { from: number; to: number; sends: number; seed: number },
  order: "ordered" | "random",
): (i: number) => CallRecord {
  const next = random(slice.seed);
  const { from, to } = slice;
  const agents = tenant.agentIds.slice(0, 10);
  const models = ["gpt-4o-mini", "gpt-4o", "claude-sonnet-4"];
  const users = Array.from({ length: 200 }, (_, i) => `user-${i}`);
  return (i) => {
    const user = Math.floor(next() * users.length);
    const agent = next() < 0.8 ? user % agents.length : Math.floor(next() * agents.length);
    const model = next() < 0.9 ? agent % models.length : (agent + 1) % models.length;
    const roll = next();
    const outcome = roll < 0.02 ? "failed" : roll < 0.03 ? "cancelled" : "completed";
    const latencyMs = Math.round(150 + 6000 * next() ** 3);
    const completed = outcome === "completed";
    return {
      accountId: tenant.accountId,
      agentId: agents[agent]!,
      userId: users[user]!,
      roomId: "",
      id: newId("message"),
      requestId: null,
      apiKeyId: keys[agent % keys.length]!,
      provider: model === 2 ? "anthropic" : "openai",
      model: models[model]!,
      stream: next() < 0.5,
      outcome,
      errorCode: outcome === "failed" ? "AGENT_UNAVAILABLE" : null,
      errorMessage: outcome === "failed" ? "The provider is overloaded." : null,
      latencyMs,
      firstTokenMs: completed ? Math.round(latencyMs * (0.1 + 0.4 * next())) : null,
      inputTokens: completed ? 50 + Math.floor(next() * 2000) : 0,
      outputTokens: completed ? 10 + Math.floor(next() * 500) : 0,
      createdAt: new Date(
        from +
          Math.floor(((order === "ordered" ? i + next() : next() * slice.sends) / slice.sends) * (to - from)),
      ).toISOString(),
    };
  };
}
