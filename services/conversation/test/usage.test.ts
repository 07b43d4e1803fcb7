import { type GetUsageRequestSchema, UsageDimension, UsageGranularity } from "@agentry/proto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe("GetUsage", () => {
  it("answers every bucket of the range and the totals, grouped as asked, from the sends just made", async () => {
    const a = agent();
    const b = agent();
    h.openai.answer({ text: "one", usage: { input: 10, output: 2 } });
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi", userId: "u1", apiKeyId: "key_1" });
    h.openai.answer({ text: "two", usage: { input: 20, output: 3 } });
    await h.client.sendMessage({ accountId: ACCOUNT, agent: b, text: "hi" });
    h.openai.failWith(401);
    await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi", userId: "u1" }));

    const now = Date.now();
    const usage = await h.client.getUsage({
      accountId: ACCOUNT,
      fromTime: timestampFromDate(new Date(now - 3 * 3_600_000)),
      toTime: timestampFromDate(new Date(now + 1)),
      granularity: UsageGranularity.HOUR,
      groupBy: [UsageDimension.AGENT_ID, UsageDimension.USER_ID],
    });
    expect(usage.granularity).toBe(UsageGranularity.HOUR);
    expect(usage.buckets).toHaveLength(4);
    const first = usage.buckets[0]!;
    expect(timestampDate(first.endTime!).getTime() - timestampDate(first.startTime!).getTime()).toBe(
      3_600_000,
    );
    expect(timestampDate(usage.fromTime!).getTime()).toBe(timestampDate(first.startTime!).getTime());
    const totals = usage.totals.filter((g) => g.agentId === a.id || g.agentId === b.id);
    expect(totals.map((g) => [g.agentId, g.userId, g.model, g.apiKeyId])).toEqual(
      [
        [a.id, "u1", undefined, undefined],
        [b.id, "", undefined, undefined],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    const ofA = totals.find((g) => g.agentId === a.id)!.figures!;
    expect(ofA).toMatchObject({ messages: 2n, errors: 1n, inputTokens: 10n, outputTokens: 2n });
    expect(ofA.latencyMs?.p50).toBeGreaterThanOrEqual(0);
    expect(ofA.timeToFirstTokenMs?.p95).toBeGreaterThanOrEqual(0);

    // Only the agent's failed sends: percentiles unset.
    h.openai.failWith(401);
    const c = agent();
    await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: c, text: "hi" }));
    const failed = await h.client.getUsage({ accountId: ACCOUNT, agentId: c.id });
    expect(failed.granularity).toBe(UsageGranularity.DAY);
    expect(failed.buckets).toHaveLength(8);
    const figures = failed.totals[0]!.figures!;
    expect(figures).toMatchObject({ messages: 1n, errors: 1n });
    expect(figures.latencyMs?.p50).toBeUndefined();
    expect(figures.timeToFirstTokenMs?.p95).toBeUndefined();
  });

  it("refuses a wrong question with INVALID_REQUEST naming the field", async () => {
    const at = (iso: string) => timestampFromDate(new Date(iso));
    const cases: [MessageInitShape<typeof GetUsageRequestSchema>, string][] = [
      [{ fromTime: at("2026-03-10T00:00:00Z"), toTime: at("2026-03-10T00:00:00Z") }, "to"],
      [
        {
          fromTime: at("2026-01-01T00:00:00Z"),
          toTime: at("2026-03-01T00:00:00Z"),
          granularity: UsageGranularity.HOUR,
        },
        "to",
      ],
      [{ groupBy: [UsageDimension.UNSPECIFIED] }, "groupBy"],
      [{ groupBy: [7 as UsageDimension] }, "groupBy"],
      [{ granularity: 9 as UsageGranularity }, "granularity"],
    ];
    for (const [request, field] of cases) {
      const error = await failure(h.client.getUsage({ accountId: ACCOUNT, ...request }));
      expect(error.code).toBe("INVALID_REQUEST");
      expect(error.details?.[0]?.field).toBe(field);
    }
    expect((await failure(h.client.getUsage({}))).details?.[0]?.field).toBe("account_id");
  });
});
