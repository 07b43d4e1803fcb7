import type { SketchBins, UsagePlan, UsageRow } from "../usage.js";
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
  latency_bins: Bins;
  first_token_bins: Bins;
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
    latencyBins: bins(row.latency_bins),
    firstTokenBins: bins(row.first_token_bins),
  };
}

/**
 * The rows of a plan's level and granularity within its range, with its filters: through the primary key when
 * the agent is given, else through `usage_by_time`.
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
  const columns = `${read.time("bucket_start")} AS bucket_start, agent_id, user_id, model, api_key_id, messages,
    errors, input_tokens, output_tokens, ${read.bins("latency_bins")} AS latency_bins,
    ${read.bins("first_token_bins")} AS first_token_bins`;
  return { text: `SELECT ${columns} FROM ${table} WHERE ${where.join(" AND ")}`, values };
}
