import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPgMigrations } from "@agentry/pg";
import { runSqliteMigrations } from "@agentry/sqlite";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresConversationStore } from "../src/store/postgres.js";
import { migrationTarget, PG_MIGRATIONS } from "../src/store/postgres-migrations.js";
import { CONVERSATION_DB_FILE, openSqliteConversationStore } from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";
import type { CallRecord, ConversationStore } from "../src/store/types.js";
import { toUsageRow, type UsageRollupRow, usageRowsQuery } from "../src/store/usage-queries.js";
import {
  planUsage,
  type UsageGroup,
  type UsagePlan,
  type UsageReport,
  type UsageRequest,
  usageReport,
  ZERO_BIN,
} from "../src/usage.js";

/*
 * The usage query reads each sketch's bins in its store's binary form (store/sqlite-bins.ts, postgres-bins.ts).
 * The form it read before, the bins printed as JSON text by the database and scanned by usage.ts, is kept here
 * as the reference: on the same rows, in real databases, both must give the same answer to the last digit,
 * including the current hour, which sends are still adding to, and ranges that cross it.
 *
 * Every level adds up the detail level (usage.ts, LEVEL_DIMENSIONS): a question answered from the account, agent
 * or agent_model level gives what the detail rows give, also after an erasure and a purge, and after migration 27
 * filled the agent_model level from rows recorded before it.
 */

type TextRow = UsageRollupRow<number | string, number | string, string>;

/** The answer as the stores computed it before: the same rows, their bins read as JSON text. */
type Reference = (plan: UsagePlan) => Promise<UsageReport>;

const HOUR = 3_600_000;
const ACCOUNT = "acct_bins";

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

let sequence = 0;

/**
 * Calls over the last three days and the current hour: agents, users, models and keys mixed; latencies from 0 ms
 * (the zero bin) to two minutes, so that arrays are sparse and wide; failed and cancelled calls among them.
 */
function calls(count: number, seed: number, now: number, spanMs: number): CallRecord[] {
  const next = random(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  return Array.from({ length: count }, () => {
    const outcome = pick([
      "completed",
      "completed",
      "completed",
      "completed",
      "failed",
      "cancelled",
    ] as const);
    const roll = next();
    const latencyMs =
      roll < 0.05 ? 0 : roll < 0.1 ? Math.round(next() * 120_000) : Math.round(50 + next() ** 3 * 6000);
    const completed = outcome === "completed";
    return {
      accountId: ACCOUNT,
      agentId: pick(["agt_1", "agt_2", "agt_3"]),
      userId: pick(["u1", "u2", "u3", ""]),
      roomId: "",
      id: `msg_bins_${++sequence}`,
      requestId: null,
      apiKeyId: pick(["key_1", "key_2", null]),
      provider: "openai",
      model: pick(["gpt-a", "gpt-b", null]),
      stream: false,
      outcome,
      errorCode: outcome === "failed" ? "AGENT_UNAVAILABLE" : null,
      errorMessage: outcome === "failed" ? "The provider is overloaded." : null,
      latencyMs,
      firstTokenMs: completed && next() < 0.8 ? Math.round(latencyMs * next()) : null,
      inputTokens: completed ? Math.floor(next() * 1000) : 0,
      outputTokens: completed ? Math.floor(next() * 300) : 0,
      createdAt: new Date(now - Math.floor(next() * spanMs)).toISOString(),
    };
  });
}

/** Questions over closed hours, the current one, and ranges that cross it, at every level. */
function requests(now: number): UsageRequest[] {
  const at = (ms: number) => new Date(ms);
  const hourly = { granularity: "hour" as const, from: at(now - 30 * HOUR), to: at(now + 2 * HOUR) };
  const current = { granularity: "hour" as const, from: at(now - 1), to: at(now + 1) };
  const closed = { granularity: "hour" as const, from: at(now - 72 * HOUR), to: at(now - 2 * HOUR) };
  const daily = { granularity: "day" as const, from: at(now - 5 * 24 * HOUR), to: at(now + 24 * HOUR) };
  return [
    hourly,
    current,
    closed,
    daily,
    { ...hourly, groupBy: ["agentId"] },
    { ...daily, groupBy: ["model", "apiKeyId"] },
    { ...hourly, agentId: "agt_2" },
    { ...current, userId: "u1", groupBy: ["agentId"] },
    { ...daily, userId: "", groupBy: ["userId", "agentId", "model", "apiKeyId"] },
    { ...closed, groupBy: ["userId"] },
    // The agent_model level: the question priced per model, of the account and of one agent.
    { ...hourly, groupBy: ["model"] },
    { ...daily, agentId: "agt_1", groupBy: ["model"] },
    { ...closed, groupBy: ["agentId", "model"] },
    { ...current, groupBy: ["model"] },
  ].map((request) => ({ accountId: ACCOUNT, now: at(now), ...request }));
}

function withoutPercentiles(report: UsageReport): UsageReport {
  const none = { p50: null, p95: null };
  const strip = (groups: UsageGroup[]) =>
    groups.map((group) => ({
      ...group,
      figures: { ...group.figures, latencyMs: none, timeToFirstTokenMs: none },
    }));
  return {
    ...report,
    buckets: report.buckets.map((bucket) => ({ ...bucket, groups: strip(bucket.groups) })),
    totals: strip(report.totals),
  };
}

/**
 * Records calls (`open` records the first and gives the store to read), reads every question both ways, records
 * more in the current hour and reads again; then merges a user's rows into the blank user's and subtracts an
 * agent's from the account's (the stores combine those bins in SQL), and reads again.
 */
async function expectSameAnswers(
  open: (first: readonly CallRecord[], now: number) => Promise<ConversationStore>,
  reference: Reference,
): Promise<void> {
  const now = Date.now();
  // The last three days, and the current hour from its start up to now.
  const store = await open([...calls(600, 11, now, 72 * HOUR), ...calls(150, 12, now, now % HOUR)], now);
  const compare = async (what: string) => {
    let counted = 0;
    const levels = new Set<string>();
    for (const request of requests(now)) {
      const answer = await store.getUsage(request);
      const plan = planUsage(request);
      levels.add(plan.level);
      expect(answer, `${what}: ${JSON.stringify(request)}`).toEqual(await reference(plan));
      expect(answer, `${what}, from the detail rows: ${JSON.stringify(request)}`).toEqual(
        await reference({ ...plan, level: "detail" }),
      );
      // Counts only, as pricing asks: the sums the database adds up are the same, without percentiles.
      expect(
        await store.getUsage({ ...request, countsOnly: true }),
        `${what}, counts only: ${JSON.stringify(request)}`,
      ).toEqual(withoutPercentiles(answer));
      counted += answer.totals.reduce((sum, group) => sum + group.figures.messages, 0);
    }
    expect([...levels].sort()).toEqual(["account", "agent", "agent_model", "detail"]);
    return counted;
  };
  expect(await compare("recorded")).toBeGreaterThan(0);

  const current = await store.getUsage(requests(now)[1]!);
  const before = current.totals[0]!.figures;
  expect(before.messages).toBeGreaterThan(0);
  expect(before.latencyMs.p50).not.toBeNull();
  await store.recordCalls(calls(80, 13, now, now % HOUR));
  const after = (await store.getUsage(requests(now)[1]!)).totals[0]!.figures;
  expect(after.messages).toBe(before.messages + 80);
  await compare("more in the current hour");

  await store.eraseUser(ACCOUNT, "u2");
  await store.purgeAgent(ACCOUNT, "agt_3");
  await compare("after an erasure and a purge");
}

/** Every question answered alike by a store whose database was upgraded and one that recorded the calls itself. */
async function expectUpgradedAnswers(
  upgraded: ConversationStore,
  live: ConversationStore,
  now: number,
): Promise<void> {
  for (const request of requests(now)) {
    expect(await upgraded.getUsage(request), `upgraded: ${JSON.stringify(request)}`).toEqual(
      await live.getUsage(request),
    );
  }
}

/** The answer from the rows read with their bins as SQLite prints them as JSON text. */
function sqliteReference(db: Database.Database): Reference {
  return async (plan) => {
    const query = usageRowsQuery("usage_rollups", () => "?", plan, {
      time: (column) => column,
      bins: (column) => `json(${column})`,
    });
    const rows = db.prepare<unknown[], TextRow>(query.text).all(...query.values);
    return usageReport(
      plan,
      rows.map((row) => toUsageRow(row, Date.parse(String(row.bucket_start)), (bins) => bins)),
    );
  };
}

/** The answer from the rows read with their bins as the text the Postgres store read before. */
function postgresReference(client: pg.Client, schema: string): Reference {
  return async (plan) => {
    // `[zeros, first, counts...]`, null for an empty element.
    const query = usageRowsQuery(`${schema}.usage_rollups`, (n) => `$${n}`, plan, {
      time: (column) => `extract(epoch FROM ${column})::float8 * 1000`,
      bins: (column) => {
        const zeros = column.replace(/_bins$/, "_zeros");
        return `'[' || concat_ws(',', ${zeros}, array_lower(${column}, 1),
          nullif(array_to_string(${column}, ',', 'null'), '')) || ']'`;
      },
    });
    const { rows } = await client.query<TextRow>(query.text, query.values);
    return usageReport(
      plan,
      rows.map((row) => toUsageRow(row, Number(row.bucket_start), (bins) => bins)),
    );
  };
}

/** The conversation migrations before the agent_model level. */
const beforeLevel = <M extends { version: number }>(migrations: readonly M[]) =>
  migrations.filter((migration) => migration.version < 27);

describe("usage bins read without text give the answers the JSON text gave", () => {
  describe("SQLite", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "usage-bins-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("on the same rows, hour by hour and day by day, grouped and filtered", async () => {
      const dataDir = join(dir, "recorded");
      const store = openSqliteConversationStore({ dataDir });
      const db = new Database(join(dataDir, CONVERSATION_DB_FILE), { readonly: true });
      try {
        await expectSameAnswers(async (first) => {
          await store.recordCalls(first);
          return store;
        }, sqliteReference(db));
        // The rows held what the binary form has to get right: zero bins.
        const zeros = db
          .prepare<[string], number>(
            `SELECT count(*) FROM usage_rollups WHERE account_id = ? AND latency_bins ->> '$.${ZERO_BIN}' > 0`,
          )
          .pluck()
          .get(ACCOUNT);
        expect(zeros).toBeGreaterThan(0);
      } finally {
        db.close();
        await store.close();
      }
    });

    // Two stores, one of them migrated: twice the other test's work.
    it("after migration 27 filled the agent_model level from the rows recorded before it", async () => {
      const live = openSqliteConversationStore({ dataDir: join(dir, "live") });
      const dataDir = join(dir, "upgraded");
      const file = join(dataDir, CONVERSATION_DB_FILE);
      let upgraded: ConversationStore | undefined;
      let db: Database.Database | undefined;
      try {
        await expectSameAnswers(
          async (first, now) => {
            await live.recordCalls(first);
            // A database of schema version 26 holding the rows the store wrote before: every level but the new one.
            mkdirSync(dataDir, { recursive: true });
            const old = new Database(file);
            let written: number | undefined;
            try {
              runSqliteMigrations(old, { service: "conversation", migrations: beforeLevel(MIGRATIONS) });
              old.prepare("ATTACH DATABASE ? AS live").run(join(dir, "live", CONVERSATION_DB_FILE));
              const copied = old
                .prepare(
                  "INSERT INTO main.usage_rollups SELECT * FROM live.usage_rollups WHERE level <> 'agent_model'",
                )
                .run().changes;
              expect(copied).toBeGreaterThan(0);
              written = old
                .prepare<[], number>("SELECT count(*) FROM live.usage_rollups WHERE level = 'agent_model'")
                .pluck()
                .get();
            } finally {
              old.close();
            }
            upgraded = openSqliteConversationStore({ dataDir });
            db = new Database(file, { readonly: true });
            const filled = db
              .prepare<[], number>("SELECT count(*) FROM usage_rollups WHERE level = 'agent_model'")
              .pluck()
              .get();
            // One row for each the store itself wrote.
            expect(filled).toBe(written);
            expect(filled).toBeGreaterThan(0);
            await expectUpgradedAnswers(upgraded, live, now);
            return upgraded;
          },
          (plan) => sqliteReference(db!)(plan),
        );
      } finally {
        db?.close();
        await upgraded?.close();
        await live.close();
      }
    }, 120_000);
  });

  describe("Postgres", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await openTestDatabase();
    }, 60_000);
    afterAll(() => db?.close(), 60_000);

    it("on the same rows, hour by hour and day by day, grouped and filtered", async () => {
      const schema = "conversation_bins";
      const store = await openPostgresConversationStore({ connectionString: db.url, schema });
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        await expectSameAnswers(
          async (first) => {
            await store.recordCalls(first);
            return store;
          },
          postgresReference(client, schema),
        );
        // The rows held what the binary form has to get right: zero counts, empty elements, empty arrays.
        const { rows } = await client.query<{ zeros: number; holes: number; empty: number }>(
          `SELECT count(*) FILTER (WHERE latency_zeros > 0)::int AS zeros,
            count(*) FILTER (WHERE array_position(latency_bins, NULL) IS NOT NULL)::int AS holes,
            count(*) FILTER (WHERE cardinality(first_token_bins) = 0)::int AS empty
          FROM ${schema}.usage_rollups WHERE account_id = $1`,
          [ACCOUNT],
        );
        const { zeros, holes, empty } = rows[0]!;
        expect(Math.min(zeros, holes, empty), JSON.stringify(rows[0])).toBeGreaterThan(0);
      } finally {
        await client.end();
        await store.close();
      }
    });

    // Two stores, one of them migrated: twice the other test's work.
    it("after migration 27 filled the agent_model level from the rows recorded before it", async () => {
      const schema = "conversation_upgraded";
      const live = await openPostgresConversationStore({
        connectionString: db.url,
        schema: "conversation_live",
      });
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      let upgraded: ConversationStore | undefined;
      try {
        await expectSameAnswers(
          async (first, now) => {
            await live.recordCalls(first);
            // A schema of version 26 holding the rows the store wrote before: every level but the new one.
            const pool = new pg.Pool({ connectionString: db.url });
            try {
              await runPgMigrations(pool, migrationTarget(schema, beforeLevel(PG_MIGRATIONS)));
            } finally {
              await pool.end();
            }
            const copied = await client.query(
              `INSERT INTO ${schema}.usage_rollups
              SELECT * FROM conversation_live.usage_rollups WHERE level <> 'agent_model'`,
            );
            expect(copied.rowCount).toBeGreaterThan(0);
            upgraded = await openPostgresConversationStore({ connectionString: db.url, schema });
            const { rows } = await client.query<{ filled: number; written: number }>(
              `SELECT
              (SELECT count(*)::int FROM ${schema}.usage_rollups WHERE level = 'agent_model') AS filled,
              (SELECT count(*)::int FROM conversation_live.usage_rollups WHERE level = 'agent_model') AS written`,
            );
            // One row for each the store itself wrote.
            expect(rows[0]!.filled).toBe(rows[0]!.written);
            expect(rows[0]!.filled).toBeGreaterThan(0);
            await expectUpgradedAnswers(upgraded, live, now);
            return upgraded;
          },
          postgresReference(client, schema),
        );
      } finally {
        await client.end();
        await upgraded?.close();
        await live.close();
      }
    }, 120_000);
  });
});
