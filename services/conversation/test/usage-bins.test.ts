import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresConversationStore } from "../src/store/postgres.js";
import { CONVERSATION_DB_FILE, openSqliteConversationStore } from "../src/store/sqlite.js";
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
 * Records calls, reads every question both ways, records more in the current hour and reads again; then merges
 * a user's rows into the blank user's and subtracts an agent's from the account's (the stores combine those
 * bins in SQL), and reads again.
 */
async function expectSameAnswers(store: ConversationStore, reference: Reference): Promise<void> {
  const now = Date.now();
  const compare = async (what: string) => {
    let counted = 0;
    for (const request of requests(now)) {
      const answer = await store.getUsage(request);
      expect(answer, `${what}: ${JSON.stringify(request)}`).toEqual(await reference(planUsage(request)));
      // Counts only, as pricing asks: the sums the database adds up are the same, without percentiles.
      expect(
        await store.getUsage({ ...request, countsOnly: true }),
        `${what}, counts only: ${JSON.stringify(request)}`,
      ).toEqual(withoutPercentiles(answer));
      counted += answer.totals.reduce((sum, group) => sum + group.figures.messages, 0);
    }
    return counted;
  };
  await store.recordCalls(calls(600, 11, now, 72 * HOUR));
  // The current hour: from its start up to now.
  await store.recordCalls(calls(150, 12, now, now % HOUR));
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

describe("usage bins read without text give the answers the JSON text gave", () => {
  describe("SQLite", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "usage-bins-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("on the same rows, hour by hour and day by day, grouped and filtered", async () => {
      const store = openSqliteConversationStore({ dataDir: dir });
      const db = new Database(join(dir, CONVERSATION_DB_FILE), { readonly: true });
      try {
        await expectSameAnswers(store, async (plan) => {
          const query = usageRowsQuery("usage_rollups", () => "?", plan, {
            time: (column) => column,
            bins: (column) => `json(${column})`,
          });
          const rows = db.prepare<unknown[], TextRow>(query.text).all(...query.values);
          return usageReport(
            plan,
            rows.map((row) => toUsageRow(row, Date.parse(String(row.bucket_start)), (bins) => bins)),
          );
        });
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
        await expectSameAnswers(store, async (plan) => {
          // The text the store read before: `[zeros, first, counts...]`, null for an empty element.
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
        });
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
  });
});
