import { NO_BINS, type SketchBins, type UsageDimension, type UsagePlan, type UsageRow } from "../usage.js";
import type { Placeholder, Query } from "./queries.js";

/*
 * The usage rollups as both stores keep them (usage.ts has the rules): one table, `usage_rollups`, keyed by
 * account, level, bucket width, agent, bucket start, user, model and API key, the dimensions a level does not keep
 * being ''. The stores differ in how they keep bins (a JSONB object in SQLite, an integer array in Postgres),
 * both read back in a binary form that each store turns into counts (usage.ts, SketchBins) without any text, and
 * in the types their drivers give counts.
 */

export interface UsageRollupRow<Time, Count, Bins> {
  bucket_start: Time;
  agent_id: string;
  user_id: string;
  model: string;
  api_key_id: string;
  messages: Count;
  errors: Count;
  input_tokens: Count;
  output_tokens: Count;
  /** Null for a row read for its counts only. */
  latency_bins: Bins | null;
  first_token_bins: Bins | null;
}

/**
 * The row of usage.ts from a rollup row whose time the store has read as epoch milliseconds and whose bins
 * `bins` reads.
 */
export function toUsageRow<Bins>(
  row: UsageRollupRow<unknown, number | string, Bins>,
  bucketStart: number,
  bins: (value: Bins) => SketchBins,
): UsageRow {
  return {
    bucketStart,
    agentId: row.agent_id,
    userId: row.user_id,
    model: row.model,
    apiKeyId: row.api_key_id,
    messages: Number(row.messages),
    errors: Number(row.errors),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    latencyBins: row.latency_bins === null ? NO_BINS : bins(row.latency_bins),
    firstTokenBins: row.first_token_bins === null ? NO_BINS : bins(row.first_token_bins),
  };
}

const COLUMNS: Record<UsageDimension, string> = {
  agentId: "agent_id",
  userId: "user_id",
  model: "model",
  apiKeyId: "api_key_id",
};

/**
 * The rows of a plan's level and granularity within its range, with its filters: through the primary key when
 * the agent is given, else through `usage_by_time`. For counts only, the database adds up the rows of each bucket
 * and group and returns those sums, without bins: a question by model reads several rows a bucket.
 */
export function usageRowsQuery(
  table: string,
  placeholder: Placeholder,
  plan: UsagePlan,
  read: {
    /** The SQL that reads the bucket start column as the driver should give it. */
    time: (column: string) => string;
    /** The SQL that reads a bins column in the form the store turns into SketchBins. */
    bins: (column: string) => string;
  },
): Query {
  const values: unknown[] = [];
  const p = (value: unknown) => {
    values.push(value);
    return placeholder(values.length);
  };
  const where = [
    `account_id = ${p(plan.accountId)}`,
    `level = ${p(plan.level)}`,
    `bucket_seconds = ${p(plan.bucketSeconds)}`,
    `bucket_start >= ${p(new Date(plan.from).toISOString())}`,
    `bucket_start < ${p(new Date(plan.to).toISOString())}`,
  ];
  if (plan.agentId !== undefined) where.push(`agent_id = ${p(plan.agentId)}`);
  if (plan.userId !== undefined) where.push(`user_id = ${p(plan.userId)}`);
  const from = `FROM ${table} WHERE ${where.join(" AND ")}`;
  if (plan.countsOnly) {
    const dimensions = Object.entries(COLUMNS).map(([dimension, column]) =>
      plan.groupBy.includes(dimension as UsageDimension) ? column : `'' AS ${column}`,
    );
    const grouped = plan.groupBy.map((dimension) => COLUMNS[dimension]);
    const columns = `${read.time("bucket_start")} AS bucket_start, ${dimensions.join(", ")},
      sum(messages) AS messages, sum(errors) AS errors, sum(input_tokens) AS input_tokens,
      sum(output_tokens) AS output_tokens, NULL AS latency_bins, NULL AS first_token_bins`;
    return { text: `SELECT ${columns} ${from} GROUP BY ${["bucket_start", ...grouped].join(", ")}`, values };
  }
  const columns = `${read.time("bucket_start")} AS bucket_start, agent_id, user_id, model, api_key_id, messages,
    errors, input_tokens, output_tokens, ${read.bins("latency_bins")} AS latency_bins,
    ${read.bins("first_token_bins")} AS first_token_bins`;
  return { text: `SELECT ${columns} ${from}`, values };
}
