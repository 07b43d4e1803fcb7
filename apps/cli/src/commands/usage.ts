import {
  planUsage,
  USAGE_DIMENSIONS,
  USAGE_GRANULARITIES,
  type UsageDimension,
  type UsageFigures,
  type UsageGranularity,
  type UsageGroup,
  type UsageRequest,
} from "@agentry/conversation";
import { AppError } from "@agentry/errors";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import { formatTime, renderTable } from "../format.js";
import { parseTime } from "../values.js";
import { findAccount } from "./keys.js";

/** The option that sets each field `planUsage` may refuse. */
const OPTION_OF: Record<string, string> = {
  from: "--from",
  to: "--to",
  granularity: "--granularity",
  groupBy: "--group-by",
};

const HEADER_OF: Record<UsageDimension, string> = {
  agentId: "AGENT",
  userId: "USER",
  model: "MODEL",
  apiKeyId: "API KEY",
};

function parseGranularity(value: string | undefined): UsageGranularity | undefined {
  if (value === undefined) return undefined;
  const granularity = USAGE_GRANULARITIES.find((candidate) => candidate === value);
  if (!granularity) {
    throw new UsageError(`--granularity takes ${USAGE_GRANULARITIES.join(" or ")}, got '${value}'`);
  }
  return granularity;
}

function parseGroupBy(value: string | undefined): UsageDimension[] {
  if (value === undefined) return [];
  const given = value
    .split(",")
    .map((dimension) => dimension.trim())
    .filter((dimension) => dimension.length > 0);
  return given.map((dimension) => {
    const known = USAGE_DIMENSIONS.find((candidate) => candidate === dimension);
    if (!known) {
      throw new UsageError(`unknown dimension '${dimension}' (dimensions: ${USAGE_DIMENSIONS.join(", ")})`);
    }
    return known;
  });
}

/** Milliseconds as a table shows them: whole, or `-` when there were none. */
function ms(value: number | null): string {
  return value === null ? "-" : String(Math.round(value));
}

function figureCells(figures: UsageFigures): string[] {
  return [
    String(figures.messages),
    String(figures.errors),
    String(figures.inputTokens),
    String(figures.outputTokens),
    ms(figures.latencyMs.p50),
    ms(figures.latencyMs.p95),
    ms(figures.timeToFirstTokenMs.p50),
    ms(figures.timeToFirstTokenMs.p95),
  ];
}

export const usage: Command = {
  group: "usage",
  name: "",
  synopsis:
    "--account NAME [--from ISO8601] [--to ISO8601] [--granularity hour|day] [--group-by a,b] [--agent ID] [--user ID] [--json]",
  summary: "Print an account's usage: messages, errors, tokens, latency",
  help: `Prints an account's usage from the conversation store's rollups, one row per period (UTC) and group:
messages (every send, failed ones included), errors (sends that failed; cancelled ones are not errors), tokens in
and out, and the 50th and 95th percentiles of latency and of time to the first text of completed sends, in
milliseconds (1 % relative error; '-' where no send completed). The totals of the range follow, grouped alike.
Every period of the range is shown, those without sends too. A user id erased from history shows as '-'.

Options:
  --account NAME        The account's name (or id)
  --from ISO8601        Start of the range, rounded down to the period (default: --to less 7 days)
  --to ISO8601          End of the range, rounded up to the period; may lie in the future (default: now)
  --granularity PERIOD  hour (at most 31 days) or day (at most 400 days; the default)
  --group-by a,b        Group each period by any of ${USAGE_DIMENSIONS.join(", ")}
  --agent ID            Only the messages to this agent
  --user ID             Only the messages of this user id
  --json                Print the answer as JSON

Times are a date (2026-03-01, midnight UTC) or a date-time with an offset (2026-03-01T12:00:00Z).

Example:
  agentry usage --account acme --granularity hour --from 2026-03-01 --to 2026-03-02 --group-by agentId,model`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, {
      account: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      granularity: { type: "string" },
      "group-by": { type: "string" },
      agent: { type: "string" },
      user: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help) return context.printHelp();
    if (values.account === undefined || values.account.trim() === "") {
      throw new UsageError("missing --account NAME");
    }
    const question: Omit<UsageRequest, "accountId"> = {
      from: parseTime("--from", values.from),
      to: parseTime("--to", values.to),
      granularity: parseGranularity(values.granularity),
      groupBy: parseGroupBy(values["group-by"]),
      agentId: values.agent,
      userId: values.user,
      now: context.now(),
    };
    // The range is checked before any store is opened: a wrong one is a wrong command line.
    let plan: ReturnType<typeof planUsage>;
    try {
      plan = planUsage({ accountId: "", ...question });
    } catch (error) {
      const detail = error instanceof AppError ? error.details?.[0] : undefined;
      if (!detail) throw error;
      throw new UsageError(`${OPTION_OF[detail.field] ?? detail.field} ${detail.issue}`);
    }

    const account = await findAccount(await context.store(), values.account.trim());
    const conversations = await context.conversations();
    const report = await conversations.getUsage({ accountId: account.id, ...question });
    if (values.json) return context.printJson({ accountId: account.id, ...report });

    const dimensions = plan.groupBy;
    const row = (start: string, group: UsageGroup) => [
      start,
      ...dimensions.map((dimension) => group[dimension] || "-"),
      ...figureCells(group.figures),
    ];
    context.print(
      `Usage of account ${account.name} (${account.id}) from ${formatTime(report.from)} to ${formatTime(report.to)}, by ${report.granularity}:`,
      ...renderTable(
        [
          "START",
          ...dimensions.map((dimension) => HEADER_OF[dimension]),
          "MESSAGES",
          "ERRORS",
          "TOKENS IN",
          "TOKENS OUT",
          "LATENCY P50",
          "LATENCY P95",
          "TTFT P50",
          "TTFT P95",
        ],
        [
          ...report.buckets.flatMap((bucket) =>
            bucket.groups.map((group) => row(formatTime(bucket.start), group)),
          ),
          ...report.totals.map((group) => row("total", group)),
        ],
      ),
    );
  },
};
