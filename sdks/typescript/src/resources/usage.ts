import type { RequestOptions, Transport } from "../core.js";
import type { AgentUsageParams, UsageParams, UsageReport } from "../types.js";
import { idSegment } from "./path.js";

/** The query string of a usage request: dates as ISO 8601, the dimensions comma-separated. */
function usageQuery(params: UsageParams): Record<string, string | undefined> {
  const instant = (value: string | Date | undefined) => (value instanceof Date ? value.toISOString() : value);
  return {
    from: instant(params.from),
    to: instant(params.to),
    granularity: params.granularity,
    agentId: params.agentId,
    userId: params.userId,
    groupBy: params.groupBy?.join(","),
  };
}

async function getReport(
  transport: Transport,
  path: string,
  params: UsageParams,
  options: RequestOptions | undefined,
): Promise<UsageReport> {
  const body = (await transport.json({ method: "GET", path, query: usageQuery(params) }, options)) as {
    data: UsageReport;
  };
  return body.data;
}

/**
 * The account's usage (scope `usage:read`): messages, errors, tokens and latency percentiles per hour or day,
 * every bucket of the range present (zero-filled, in UTC), and the totals.
 */
export class AccountUsage {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Reads the usage of a range (by default the last 7 days, by day), of the whole account or of one agent or
   * user, optionally grouped:
   *
   * ```ts
   * const report = await client.usage.get({ from: new Date("2026-03-01"), groupBy: ["agentId", "model"] });
   * console.log(report.totals.messages, report.totals.latencyMs.p95);
   * for (const bucket of report.buckets) for (const group of bucket.groups) console.log(bucket.start, group);
   * ```
   *
   * @throws {BadRequestError} a malformed value, `to` not after `from`, or a range over 31 days of hours or 400
   *   days of days
   * @throws {PermissionDeniedError} without the `usage:read` scope
   */
  get(params: UsageParams = {}, options?: RequestOptions): Promise<UsageReport> {
    return getReport(this.#transport, "/usage", params, options);
  }
}

/** One agent's usage (scope `usage:read`): the account's usage with the agent fixed. */
export class AgentUsage {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Reads the agent's usage of a range (by default the last 7 days, by day); see `client.usage.get`.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {BadRequestError} a malformed value or a range too long for its granularity
   */
  get(agentId: string, params: AgentUsageParams = {}, options?: RequestOptions): Promise<UsageReport> {
    const path = `/agents/${idSegment("agentId", agentId)}/usage`;
    return getReport(this.#transport, path, { ...params, agentId: undefined }, options);
  }
}
