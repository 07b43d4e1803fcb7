import { describe, expect, it } from "vitest";
import type { CallRecord } from "./store/types.js";
import { binOf, planUsage, sketchOf, usageIncrement, ZERO_BIN } from "./usage.js";

const call: CallRecord = {
  accountId: "acct_A",
  agentId: "agt_A",
  userId: "u1",
  roomId: "r1",
  id: "msg_1",
  requestId: null,
  apiKeyId: null,
  provider: "openai",
  model: "gpt-test",
  stream: false,
  outcome: "completed",
  errorCode: null,
  errorMessage: null,
  latencyMs: 250,
  firstTokenMs: null,
  inputTokens: 3,
  outputTokens: 4,
  createdAt: "2026-03-10T23:59:59.999Z",
};

describe("usageIncrement", () => {
  it("adds a call to its hour and day at every level, cheapest first, hours before days", () => {
    const increment = usageIncrement(call);
    expect(increment.cells.map((c) => [c.level, c.bucketSeconds, c.bucketStart])).toEqual([
      ["account", 3600, "2026-03-10T23:00:00.000Z"],
      ["account", 86400, "2026-03-10T00:00:00.000Z"],
      ["agent", 3600, "2026-03-10T23:00:00.000Z"],
      ["agent", 86400, "2026-03-10T00:00:00.000Z"],
      ["agent_model", 3600, "2026-03-10T23:00:00.000Z"],
      ["agent_model", 86400, "2026-03-10T00:00:00.000Z"],
      ["detail", 3600, "2026-03-10T23:00:00.000Z"],
      ["detail", 86400, "2026-03-10T00:00:00.000Z"],
    ]);
    expect(increment.cells.map((c) => [c.agentId, c.userId, c.model, c.apiKeyId])).toEqual([
      ["", "", "", ""],
      ["", "", "", ""],
      ["agt_A", "", "", ""],
      ["agt_A", "", "", ""],
      ["agt_A", "", "gpt-test", ""],
      ["agt_A", "", "gpt-test", ""],
      ["agt_A", "u1", "gpt-test", ""],
      ["agt_A", "u1", "gpt-test", ""],
    ]);
    // A reply that came whole began when it arrived.
    expect(increment).toMatchObject({
      messages: 1,
      errors: 0,
      latencyBin: binOf(250),
      firstTokenBin: binOf(250),
    });
    expect(JSON.parse(increment.latencyBins)).toEqual({ [binOf(250)]: 1 });
  });

  it("names each call's own buckets, whatever the calls before it", () => {
    const at = (createdAt: string) => usageIncrement({ ...call, createdAt }).bucketStarts;
    expect(at("2026-03-10T23:59:59.999Z")).toEqual({
      hour: "2026-03-10T23:00:00.000Z",
      day: "2026-03-10T00:00:00.000Z",
    });
    expect(at("2026-03-11T00:00:00.000Z")).toEqual({
      hour: "2026-03-11T00:00:00.000Z",
      day: "2026-03-11T00:00:00.000Z",
    });
    expect(at("2026-03-11T00:30:00.000Z")).toEqual({
      hour: "2026-03-11T00:00:00.000Z",
      day: "2026-03-11T00:00:00.000Z",
    });
    expect(at("2026-03-10T22:10:00.000Z")).toEqual({
      hour: "2026-03-10T22:00:00.000Z",
      day: "2026-03-10T00:00:00.000Z",
    });
    expect(
      usageIncrement({ ...call, createdAt: "2026-03-12T05:00:00.000Z" }).cells.map((c) => c.bucketStart),
    ).toEqual([
      "2026-03-12T05:00:00.000Z",
      "2026-03-12T00:00:00.000Z",
      "2026-03-12T05:00:00.000Z",
      "2026-03-12T00:00:00.000Z",
      "2026-03-12T05:00:00.000Z",
      "2026-03-12T00:00:00.000Z",
      "2026-03-12T05:00:00.000Z",
      "2026-03-12T00:00:00.000Z",
    ]);
  });

  it("counts a failed call as an error and a cancelled one not, neither with latencies", () => {
    const failed = usageIncrement({ ...call, outcome: "failed", errorCode: "MODEL_ERROR" });
    expect(failed).toMatchObject({ messages: 1, errors: 1, latencyBin: null, latencyBins: "{}" });
    const cancelled = usageIncrement({ ...call, outcome: "cancelled" });
    expect(cancelled).toMatchObject({ messages: 1, errors: 0, latencyBin: null, firstTokenBins: "{}" });
  });

  it("gives 0 ms a bin of its own", () => {
    expect(binOf(0)).toBe(ZERO_BIN);
    expect(binOf(1)).not.toBe(ZERO_BIN);
  });
});

describe("planUsage", () => {
  const range = { from: new Date("2026-03-10T10:20:00Z"), to: new Date("2026-03-10T12:10:00Z") };

  it("reads the cheapest level that keeps every dimension asked for", () => {
    const level = (request: Partial<Parameters<typeof planUsage>[0]>) =>
      planUsage({ accountId: "acct_A", ...range, ...request }).level;
    expect(level({})).toBe("account");
    expect(level({ agentId: "agt_A" })).toBe("agent");
    expect(level({ groupBy: ["agentId"] })).toBe("agent");
    expect(level({ userId: "u1" })).toBe("detail");
    // The question priced per model, of the account or of one agent.
    expect(level({ groupBy: ["model"] })).toBe("agent_model");
    expect(level({ agentId: "agt_A", groupBy: ["model"] })).toBe("agent_model");
    expect(level({ groupBy: ["agentId", "model"] })).toBe("agent_model");
    expect(level({ groupBy: ["model", "apiKeyId"] })).toBe("detail");
    expect(level({ userId: "u1", groupBy: ["model"] })).toBe("detail");
    expect(level({ agentId: "agt_A", groupBy: ["apiKeyId"] })).toBe("detail");
  });

  it("rounds the range out to whole buckets and orders the dimensions", () => {
    const plan = planUsage({
      accountId: "acct_A",
      ...range,
      granularity: "hour",
      groupBy: ["model", "agentId"],
    });
    expect(new Date(plan.from).toISOString()).toBe("2026-03-10T10:00:00.000Z");
    expect(new Date(plan.to).toISOString()).toBe("2026-03-10T13:00:00.000Z");
    expect(plan.groupBy).toEqual(["agentId", "model"]);
  });
});

describe("sketchOf", () => {
  const values = [0, 0, 1, 5, 42, 42, 43, 900, 60_000];
  const bins: Record<string, number> = {};
  for (const value of values) bins[binOf(value)] = (bins[binOf(value)] ?? 0) + 1;

  it("reads bins as either store writes them, and any other JSON of the same object", () => {
    const compact = JSON.stringify(bins);
    const spaced = JSON.stringify(bins, null, 1);
    const float = compact.replace(/:(\d+)/g, ":$1.0");
    for (const text of [compact, spaced, float]) {
      const sketch = sketchOf([text]);
      expect(sketch.count).toBe(values.length);
      expect(sketch.zeroCount).toBe(2);
      expect(sketch.getValueAtQuantile(0.5)).toBeCloseTo(42, -0.5);
    }
    expect(sketchOf(["{}", " { } "]).count).toBe(0);
  });

  it("reads the dense form: zeros, the first bin, then counts from it", () => {
    const keys = Object.keys(bins)
      .filter((bin) => bin !== ZERO_BIN)
      .map(Number);
    const first = Math.min(...keys);
    const counts = Array.from({ length: Math.max(...keys) - first + 1 }, (_, i) => bins[first + i] ?? null);
    for (const text of [
      JSON.stringify([2, first, ...counts]),
      `[ 2 , ${first}, ${counts.map((count) => count ?? "null").join(" ,")} ]`,
    ]) {
      const sketch = sketchOf([text]);
      expect([sketch.count, sketch.zeroCount]).toEqual([values.length, 2]);
      expect(sketch.getValueAtQuantile(0.5)).toBe(sketchOf([JSON.stringify(bins)]).getValueAtQuantile(0.5));
    }
    expect(sketchOf(["[3]", "[0, 12, null, 0]"]).count).toBe(3);
    expect(sketchOf(["[1, 5, 2.0]"]).count).toBe(3);
  });

  it("adds up the bins of several rows", () => {
    const half = JSON.stringify(bins);
    expect(sketchOf([half, half]).count).toBe(2 * values.length);
    expect(sketchOf([half, half]).getValueAtQuantile(1)).toBeCloseTo(60_000, -3);
  });
});
