import { describe, expect, it } from "vitest";
import { type AgentUsageParams, BadRequestError, NotFoundError, type UsageReport } from "../src/index.js";
import { AGENT_ID } from "./helpers.js";
import { fail, localServer, ok } from "./server.js";

const figures = (messages: number) => ({
  messages,
  errors: 0,
  inputTokens: 10 * messages,
  outputTokens: 2 * messages,
  totalTokens: 12 * messages,
  costUsd: 0.0000021 * messages,
  latencyMs: messages > 0 ? { p50: 11.9, p95: 15.2 } : { p50: null, p95: null },
  timeToFirstTokenMs: messages > 0 ? { p50: 4.1, p95: 6 } : { p50: null, p95: null },
});

const report: UsageReport = {
  from: "2026-03-01T00:00:00.000Z",
  to: "2026-03-03T00:00:00.000Z",
  granularity: "day",
  groupBy: ["model"],
  buckets: [
    { start: "2026-03-01T00:00:00.000Z", end: "2026-03-02T00:00:00.000Z", groups: [] },
    {
      start: "2026-03-02T00:00:00.000Z",
      end: "2026-03-03T00:00:00.000Z",
      groups: [{ model: "gpt-4o-mini", ...figures(3) }],
    },
  ],
  totals: { ...figures(3), groups: [{ model: "gpt-4o-mini", ...figures(3) }] },
};

describe("usage.get", () => {
  it("sends dates as ISO 8601 and the dimensions comma-separated, and returns the report", async () => {
    const server = await localServer(ok(report));
    const result = await server.client().usage.get({
      from: new Date("2026-03-01T00:00:00Z"),
      to: "2026-03-03",
      granularity: "day",
      agentId: AGENT_ID,
      userId: "user-42",
      groupBy: ["model", "apiKeyId"],
    });
    expect(result).toEqual(report);
    const [seen] = server.requests;
    expect(seen!.url.pathname).toBe("/v1/usage");
    expect(Object.fromEntries(seen!.url.searchParams)).toEqual({
      from: "2026-03-01T00:00:00.000Z",
      to: "2026-03-03",
      granularity: "day",
      agentId: AGENT_ID,
      userId: "user-42",
      groupBy: "model,apiKeyId",
    });
  });

  it("sends no query without parameters, and is retried like any read", async () => {
    const server = await localServer(fail(502, "INTERNAL_ERROR"), ok(report));
    await server.client().usage.get();
    expect(server.requests.map((r) => r.url.search)).toEqual(["", ""]);
  });

  it("a range the service refuses is BadRequestError with the field", async () => {
    const details = [{ field: "to", issue: "must be after from" }];
    const server = await localServer(fail(400, "INVALID_REQUEST", { details }));
    const error = await server
      .client()
      .usage.get({ from: "2026-03-03", to: "2026-03-01" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).details).toEqual(details);
    expect(server.requests).toHaveLength(1);
  });
});

describe("agents.usage.get", () => {
  it("reads one agent's usage, the agent in the path only", async () => {
    const server = await localServer(ok(report));
    // A caller without the types may still pass an agentId; the path's agent wins.
    const params = { granularity: "hour" as const, agentId: "agt_other" } as AgentUsageParams;
    expect(await server.client().agents.usage.get(AGENT_ID, params)).toEqual(report);
    const [seen] = server.requests;
    expect(seen!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/usage`);
    expect(seen!.url.search).toBe("?granularity=hour");
  });

  it("an unknown agent is NotFoundError", async () => {
    const server = await localServer(fail(404, "AGENT_NOT_FOUND"));
    await expect(server.client().agents.usage.get(AGENT_ID)).rejects.toBeInstanceOf(NotFoundError);
  });
});
