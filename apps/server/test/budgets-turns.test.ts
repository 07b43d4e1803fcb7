import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { sharedTestRedis } from "@agentry/limits/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness } from "./harness.js";

/*
 * Budgets on the model calls that pass no gateway, through the all-in-one server: its gateway and its
 * conversation service count on one meter (in memory, or on a real Redis with REDIS_URL), so a budget shared by REST sends and schedule fires stops at
 * its limit exactly. Platform turns: telegram.test.ts.
 */

/** Every answer's usage: 10 prompt tokens and 2 reply tokens. */
const USAGE = { input: 10, output: 2 };
const PER_CALL = USAGE.input + USAGE.output;

let openai: FakeProviderServer<OpenAIChatBody>;
let redis: { url: string; stop(): Promise<void> };
const servers: Partial<Record<"memory" | "redis", Harness>> = {};

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  redis = await sharedTestRedis();
  const env = {
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    SCHEDULE_SCAN_MS: "200",
  };
  servers.memory = await startHarness(env);
  servers.redis = await startHarness({ ...env, REDIS_URL: redis.url });
});
afterAll(async () => {
  await servers.memory?.close();
  await servers.redis?.close();
  await redis?.stop();
  await openai.close();
});

interface LastFire {
  status: string;
  error: { code: string; message: string } | null;
}

async function until<T>(what: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(["memory", "redis"] as const)("budgets on schedule fires, counted in %s", (meter) => {
  it("stop REST sends and fires together at the limit exactly, and record the refused fire BUDGET_EXCEEDED", async () => {
    const h = servers[meter]!;
    const tenant = await h.tenant();
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Ticker", modelProvider: "openai", model: "gpt-4o-mini" },
    });
    const agentId = created.body.data.id;
    const limit = 4 * PER_CALL;
    const made = await h.request<{ data: { id: string } }>("POST", "/v1/budgets", {
      key: tenant.key,
      body: { unit: "tokens", limit, period: "day", agentId },
    });
    expect(made.status).toBe(201);
    const budgetId = made.body.data.id;
    // Every model call of this test answers with USAGE, whoever asks.
    for (let i = 0; i < 8; i++) openai.answer({ text: "ok", usage: USAGE });
    const before = openai.requests.length;

    const sent = await h.request("POST", `/v1/agents/${agentId}/messages`, {
      key: tenant.key,
      body: { text: "hi" },
    });
    expect(sent.status).toBe(200);

    const schedule = await h.request<{ data: { id: string } }>("POST", `/v1/agents/${agentId}/schedules`, {
      key: tenant.key,
      body: { cron: "* * * * * *", timezone: "UTC", text: "tick" },
    });
    expect(schedule.status).toBe(201);
    const path = `/v1/agents/${agentId}/schedules/${schedule.body.data.id}`;
    const refused = await until(async () => {
      const read = await h.request<{ data: { lastFire: LastFire | null } }>("GET", path, { key: tenant.key });
      const last = read.body.data.lastFire;
      return last?.error ? last : undefined;
    });
    await h.request("PATCH", path, { key: tenant.key, body: { enabled: false } });
    expect(refused.status).toBe("failed");
    expect(refused.error?.code).toBe("BUDGET_EXCEEDED");
    expect(refused.error?.message).toContain(budgetId);

    // What fires overlapping one another left unspent, REST sends take; then the budget refuses both kinds.
    let last = 200;
    for (let sends = 0; last === 200 && sends < limit / PER_CALL; sends++) {
      last = (
        await h.request<ErrorBody>("POST", `/v1/agents/${agentId}/messages`, {
          key: tenant.key,
          body: { text: "more" },
        })
      ).status;
    }
    expect(last).toBe(402);

    const standing = await h.request<{ data: { spend: { spent: number } } }>(
      "GET",
      `/v1/budgets/${budgetId}`,
      {
        key: tenant.key,
      },
    );
    expect(standing.body.data.spend.spent).toBe(limit);
    // The fires that were refused never reached the model: exactly the calls the budget allowed did.
    expect(openai.requests.length - before).toBe(limit / PER_CALL);
    const scheduleId = schedule.body.data.id;
    const fired = openai.requests.slice(before).filter((r) => JSON.stringify(r.body).includes(scheduleId));
    expect(fired.length).toBeGreaterThanOrEqual(1);
  }, 40_000);
});
