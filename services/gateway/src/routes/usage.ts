import { costNanoUsd, isId, type PriceTable, toUsd } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type GetUsageResponse,
  UsageDimension,
  type UsageFigures,
  UsageGranularity,
  type UsageGroup,
} from "@agentry/proto";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  accountUsageQuery,
  agentUsageQuery,
  USAGE_DIMENSIONS,
  type UsageDimensionName,
  type UsageQuery,
} from "../validation/usage.js";
import { defineRoute, type HandlerInput, type Route } from "./define.js";

const DIMENSIONS: Record<UsageDimensionName, UsageDimension> = {
  agentId: UsageDimension.AGENT_ID,
  userId: UsageDimension.USER_ID,
  model: UsageDimension.MODEL,
  apiKeyId: UsageDimension.API_KEY_ID,
};

/** A group's figures as the API shows them (docs/api/usage.md, "Answer"); percentiles null without data. */
function presentFigures(figures: UsageFigures | undefined) {
  const percentiles = (value: { p50?: number; p95?: number } | undefined) => ({
    p50: value?.p50 ?? null,
    p95: value?.p95 ?? null,
  });
  const inputTokens = Number(figures?.inputTokens ?? 0n);
  const outputTokens = Number(figures?.outputTokens ?? 0n);
  return {
    messages: Number(figures?.messages ?? 0n),
    errors: Number(figures?.errors ?? 0n),
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    latencyMs: percentiles(figures?.latencyMs),
    timeToFirstTokenMs: percentiles(figures?.timeToFirstTokenMs),
  };
}

/** A group: the keys it is grouped by (a blank user id, as for erased users, shown as null), then its figures. */
function presentGroup(group: UsageGroup, groupBy: readonly UsageDimensionName[], costNano: number) {
  const keys: Record<string, string | null> = {};
  for (const name of groupBy) keys[name] = group[name] || null;
  return { ...keys, ...presentFigures(group.figures), costUsd: toUsd(costNano) };
}

/** The groups' key, by the dimensions asked. */
function groupKey(group: UsageGroup, groupBy: readonly UsageDimensionName[]): string {
  return JSON.stringify(groupBy.map((name) => group[name] ?? ""));
}

/**
 * What each group cost, in nano-dollars, from a report grouped by the same dimensions and the model (tokens are
 * priced per model): per bucket, then for the whole range.
 */
function costs(prices: PriceTable, priced: GetUsageResponse, groupBy: readonly UsageDimensionName[]) {
  const add = (into: Map<string, number>, group: UsageGroup) => {
    const key = groupKey(group, groupBy);
    const cost = costNanoUsd(prices, group.model ?? "", {
      inputTokens: Number(group.figures?.inputTokens ?? 0n),
      outputTokens: Number(group.figures?.outputTokens ?? 0n),
    });
    into.set(key, (into.get(key) ?? 0) + cost);
  };
  const buckets = priced.buckets.map((bucket) => {
    const byGroup = new Map<string, number>();
    for (const group of bucket.groups) add(byGroup, group);
    return byGroup;
  });
  const totals = new Map<string, number>();
  for (const group of priced.totals) add(totals, group);
  let overall = 0;
  for (const cost of totals.values()) overall += cost;
  return { buckets, totals, overall };
}

function iso(value: Parameters<typeof timestampDate>[0] | undefined): string {
  return value ? timestampDate(value).toISOString() : new Date(0).toISOString();
}

/**
 * Asks the conversation service for the account's usage and presents it. With groups, a second question without
 * them gives the totals of the whole range: percentiles cannot be added up from the groups'.
 */
async function usage(input: HandlerInput, query: UsageQuery, agentId: string | undefined): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const groupBy = query.groupBy ?? [];
  const ask = (dimensions: readonly UsageDimensionName[], countsOnly = false) =>
    gateway.conversations.getUsage(
      {
        accountId: principal.accountId,
        ...(query.from ? { fromTime: timestampFromDate(new Date(query.from)) } : {}),
        ...(query.to ? { toTime: timestampFromDate(new Date(query.to)) } : {}),
        granularity: query.granularity === "hour" ? UsageGranularity.HOUR : UsageGranularity.DAY,
        ...(agentId !== undefined ? { agentId } : {}),
        ...(query.userId !== undefined ? { userId: query.userId } : {}),
        groupBy: dimensions.map((name) => DIMENSIONS[name]),
        countsOnly,
      },
      rpc,
    );
  // Spend is priced per model: a third question adds the model to the groups when they lack it. It reads a row
  // per agent and model a bucket (more with a user or key), so it asks for the tokens alone, added up by the
  // database.
  const byModel: UsageDimensionName[] = groupBy.includes("model") ? [...groupBy] : [...groupBy, "model"];
  const [report, ungrouped, priced] = await Promise.all([
    ask(groupBy),
    groupBy.length > 0 ? ask([]) : null,
    ask(byModel, true),
  ]);
  const overall: GetUsageResponse = ungrouped ?? report;
  const spend = costs(gateway.prices, priced, groupBy);
  ctx.body = {
    success: true,
    data: {
      from: iso(report.fromTime),
      to: iso(report.toTime),
      granularity: report.granularity === UsageGranularity.HOUR ? "hour" : "day",
      ...(groupBy.length > 0 ? { groupBy } : {}),
      buckets: report.buckets.map((bucket, i) => ({
        start: iso(bucket.startTime),
        end: iso(bucket.endTime),
        groups: bucket.groups.map((group) =>
          presentGroup(group, groupBy, spend.buckets[i]?.get(groupKey(group, groupBy)) ?? 0),
        ),
      })),
      totals: {
        ...presentFigures(overall.totals[0]?.figures),
        costUsd: toUsd(spend.overall),
        ...(groupBy.length > 0
          ? {
              groups: report.totals.map((group) =>
                presentGroup(group, groupBy, spend.totals.get(groupKey(group, groupBy)) ?? 0),
              ),
            }
          : {}),
      },
    },
  };
}

/** The usage routes of docs/api/usage.md, "Queries"; reads spend from the get bucket. */
export const usageRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/v1/usage",
    scope: "usage:read",
    limit: "getPerMinute",
    operationId: "getUsage",
    tag: "Usage",
    summary: "Get the account's usage",
    description:
      "The account's sends, tokens, errors, latency and time to first token, by hour or by day (UTC), from rollups recorded with each send. Every bucket of the range is present, zero-filled. `groupBy` splits each bucket (and the totals) by agent, user, model or API key; `agentId` and `userId` filter. A range longer than 31 days of hours or 400 days of days, or one that ends before it starts, is refused with `400 INVALID_REQUEST`. A deleted agent's usage goes with it; an erased user's stays, with no user id.",
    query: accountUsageQuery,
    commaSeparated: { groupBy: USAGE_DIMENSIONS },
    success: { status: 200, schema: "UsageResponse", description: "The usage of the range." },
    errors: ["INVALID_REQUEST"],
    async handler(input) {
      const query = input.query();
      await usage(input, query, query.agentId);
    },
  }),
  /** An agent's usage, once the agent is known to be the caller's (another account's is answered like none). */
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/usage",
    scope: "usage:read",
    limit: "getPerMinute",
    operationId: "getAgentUsage",
    tag: "Usage",
    summary: "Get an agent's usage",
    description:
      "The usage of one agent, as `GET /v1/usage` answers it with `agentId` fixed (so grouping by `agentId` gives one group).",
    query: agentUsageQuery,
    commaSeparated: { groupBy: USAGE_DIMENSIONS },
    success: { status: 200, schema: "UsageResponse", description: "The agent's usage of the range." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
    async handler(input) {
      const { gateway, principal, rpc } = input;
      const id = input.params.agentId;
      if (!isId("agent", id))
        throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
      const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
      if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
      const query = input.query();
      await usage(input, query, id);
    },
  }),
];
