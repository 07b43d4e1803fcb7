import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type GetUsageResponse,
  UsageDimension,
  type UsageFigures,
  UsageGranularity,
  type UsageGroup,
} from "@agentry/proto";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { parseOrThrow } from "../validation/issues.js";
import {
  accountUsageQuery,
  agentUsageQuery,
  type UsageDimensionName,
  type UsageQuery,
} from "../validation/usage.js";
import type { HandlerInput, Route } from "./table.js";

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
function presentGroup(group: UsageGroup, groupBy: readonly UsageDimensionName[]) {
  const keys: Record<string, string | null> = {};
  for (const name of groupBy) keys[name] = group[name] || null;
  return { ...keys, ...presentFigures(group.figures) };
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
  const ask = (dimensions: readonly UsageDimensionName[]) =>
    gateway.conversations.getUsage(
      {
        accountId: principal.accountId,
        ...(query.from ? { fromTime: timestampFromDate(new Date(query.from)) } : {}),
        ...(query.to ? { toTime: timestampFromDate(new Date(query.to)) } : {}),
        granularity: query.granularity === "hour" ? UsageGranularity.HOUR : UsageGranularity.DAY,
        ...(agentId !== undefined ? { agentId } : {}),
        ...(query.userId !== undefined ? { userId: query.userId } : {}),
        groupBy: dimensions.map((name) => DIMENSIONS[name]),
      },
      rpc,
    );
  const [report, ungrouped] = await Promise.all([ask(groupBy), groupBy.length > 0 ? ask([]) : null]);
  const overall: GetUsageResponse = ungrouped ?? report;
  ctx.body = {
    success: true,
    data: {
      from: iso(report.fromTime),
      to: iso(report.toTime),
      granularity: report.granularity === UsageGranularity.HOUR ? "hour" : "day",
      ...(groupBy.length > 0 ? { groupBy } : {}),
      buckets: report.buckets.map((bucket) => ({
        start: iso(bucket.startTime),
        end: iso(bucket.endTime),
        groups: bucket.groups.map((group) => presentGroup(group, groupBy)),
      })),
      totals: {
        ...presentFigures(overall.totals[0]?.figures),
        ...(groupBy.length > 0 ? { groups: report.totals.map((group) => presentGroup(group, groupBy)) } : {}),
      },
    },
  };
}

async function accountUsage(input: HandlerInput): Promise<void> {
  const query = parseOrThrow(accountUsageQuery, input.ctx.query, "query parameters");
  await usage(input, query, query.agentId);
}

/** An agent's usage, once the agent is known to be the caller's (another account's is answered like none). */
async function agentUsage(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
  const query = parseOrThrow(agentUsageQuery, ctx.query, "query parameters");
  await usage(input, query, id);
}

/** The usage routes of docs/api/usage.md, "Queries"; reads spend from the get bucket. */
export const usageRoutes: Route[] = [
  { method: "GET", path: "/v1/usage", scope: "usage:read", limit: "getPerMinute", handle: accountUsage },
  {
    method: "GET",
    path: "/v1/agents/:agentId/usage",
    scope: "usage:read",
    limit: "getPerMinute",
    handle: agentUsage,
  },
];
