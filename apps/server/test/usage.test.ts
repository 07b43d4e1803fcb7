import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ErrorBody, Harness, Tenant } from "./harness.js";
import { type HistoryWorld, newAgent, startHistoryWorld } from "./history-helpers.js";

let world: HistoryWorld;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  world = await startHistoryWorld();
  ({ h, tenant } = world);
});
afterAll(() => world.close());

interface Figures {
  messages: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  latencyMs: { p50: number | null; p95: number | null };
  timeToFirstTokenMs: { p50: number | null; p95: number | null };
}
interface UsageBody {
  data: {
    from: string;
    to: string;
    granularity: "hour" | "day";
    groupBy?: string[];
    buckets: { start: string; end: string; groups: (Figures & Record<string, unknown>)[] }[];
    totals: Figures & { groups?: (Figures & Record<string, unknown>)[] };
  };
}

async function send(agentId: string, key: string, userId: string, fail = false) {
  if (fail) world.openai.failWith(500);
  else world.openai.answer({ text: "ok", usage: { input: 10, output: 2 } });
  const res = await h.request("POST", `/v1/agents/${agentId}/messages`, {
    key,
    body: { text: "hi", userId },
  });
  if (fail) expect(res.status).toBeGreaterThanOrEqual(500);
  else expect(res.status).toBe(200);
}

const usage = (path: string, key = tenant.key) => h.request<UsageBody & ErrorBody>("GET", path, { key });

describe("GET /v1/usage", () => {
  it("counts every send by day and hour, grouped and filtered, with totals", async () => {
    const own = await h.tenant();
    const second = await own.keyWith(["messages:send", "usage:read"]);
    const a = await newAgent(h, own.key);
    const b = await newAgent(h, own.key);
    await send(a, own.key, "u1");
    await send(a, own.key, "u2");
    await send(a, second.key, "u1");
    await send(b, own.key, "u1", true);

    const today = new Date().toISOString().slice(0, 10);
    const daily = await usage("/v1/usage", own.key);
    expect(daily.status).toBe(200);
    expect(daily.body.data.granularity).toBe("day");
    // The last 7 days, whole days: the one that began 7 days ago to today's.
    expect(daily.body.data.buckets).toHaveLength(8);
    expect(daily.body.data.totals).toMatchObject({
      messages: 4,
      errors: 1,
      inputTokens: 30,
      outputTokens: 6,
      totalTokens: 36,
    });
    expect(daily.body.data.totals.latencyMs.p50).toEqual(expect.any(Number));
    const last = daily.body.data.buckets.at(-1)!;
    expect(last.start.slice(0, 10)).toBe(today);
    expect(last.groups).toEqual([expect.objectContaining({ messages: 4, errors: 1 })]);
    // Zero-filled before today.
    expect(daily.body.data.buckets[0]!.groups).toEqual([
      expect.objectContaining({ messages: 0, errors: 0, latencyMs: { p50: null, p95: null } }),
    ]);

    const byAgent = await usage("/v1/usage?groupBy=agentId", own.key);
    expect(byAgent.body.data.groupBy).toEqual(["agentId"]);
    expect(
      Object.fromEntries(byAgent.body.data.totals.groups!.map((g) => [g.agentId, [g.messages, g.errors]])),
    ).toEqual({ [a]: [3, 0], [b]: [1, 1] });
    expect(byAgent.body.data.totals.messages).toBe(4);

    const byKey = await usage(`/v1/usage?groupBy=apiKeyId&agentId=${a}`, own.key);
    expect(Object.fromEntries(byKey.body.data.totals.groups!.map((g) => [g.apiKeyId, g.messages]))).toEqual({
      [own.keyId]: 2,
      [second.keyId]: 1,
    });

    const byUser = await usage(`/v1/agents/${a}/usage?groupBy=userId,model&granularity=hour`, own.key);
    expect(byUser.status).toBe(200);
    expect(byUser.body.data.granularity).toBe("hour");
    expect(byUser.body.data.buckets.length).toBeGreaterThanOrEqual(7 * 24);
    expect(
      Object.fromEntries(byUser.body.data.totals.groups!.map((g) => [`${g.userId}/${g.model}`, g.messages])),
    ).toEqual({ "u1/gpt-4o-mini": 2, "u2/gpt-4o-mini": 1 });

    const oneUser = await usage("/v1/usage?userId=u2", own.key);
    expect(oneUser.body.data.totals.messages).toBe(1);

    // Another account sees none of it.
    expect((await usage("/v1/usage")).body.data.totals.messages).toBe(0);
  });

  it("keeps an erased user's counts without the user, and drops a deleted agent's", async () => {
    const own = await h.tenant();
    const a = await newAgent(h, own.key);
    const b = await newAgent(h, own.key);
    await send(a, own.key, "erase-me");
    await send(b, own.key, "keep-me");
    expect((await h.request("DELETE", "/v1/users/erase-me", { key: own.key })).status).toBe(200);
    const byUser = await usage("/v1/usage?groupBy=userId", own.key);
    expect(
      Object.fromEntries(byUser.body.data.totals.groups!.map((g) => [String(g.userId), g.messages])),
    ).toEqual({
      null: 1,
      "keep-me": 1,
    });
    expect((await h.request("DELETE", `/v1/agents/${b}`, { key: own.key })).status).toBe(200);
    await expect
      .poll(async () => (await usage("/v1/usage", own.key)).body.data.totals.messages, { timeout: 5_000 })
      .toBe(1);
  });

  it("refuses bad ranges and values, another account's agent, a key without usage:read, and no key", async () => {
    for (const path of [
      "/v1/usage?granularity=week",
      "/v1/usage?groupBy=team",
      "/v1/usage?groupBy=agentId,agentId",
      "/v1/usage?from=yesterday",
      "/v1/usage?granularity=hour&from=2026-01-01&to=2026-03-01",
      "/v1/usage?from=2026-03-02&to=2026-03-01",
      "/v1/usage?color=blue",
    ]) {
      const res = await usage(path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe("INVALID_REQUEST");
    }
    const other = await h.tenant();
    const theirs = await newAgent(h, other.key);
    const foreign = await usage(`/v1/agents/${theirs}/usage`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("AGENT_NOT_FOUND");
    const reader = await tenant.keyWith(["agents:read"]);
    expect((await usage("/v1/usage", reader.key)).status).toBe(403);
    expect((await h.request("GET", "/v1/usage", { key: null })).status).toBe(401);
  });
});
