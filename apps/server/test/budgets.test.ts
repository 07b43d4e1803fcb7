import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { Receiver, verify } from "@agentry/webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant, type TestResponse } from "./harness.js";

/*
 * Spend budgets through the all-in-one server (one process, budgets counted in memory): their routes, their
 * enforcement before the model is called, exact under concurrency, their reset at the end of a period, spend in
 * usage and alerts by webhook. Across gateways on Redis: budgets-gateways.test.ts.
 */

interface BudgetJson {
  id: string;
  agentId: string | null;
  apiKeyId: string | null;
  unit: "tokens" | "usd";
  period: "day" | "month";
  limit: number;
  spend: { spent: number; remaining: number; percent: number; periodStart: string; resetsAt: string };
  createdAt: string;
  updatedAt: string;
}
type Exceeded = ErrorBody & {
  error: {
    budget: { id: string; unit: string; period: string; limit: number; spent: number; resetsAt: string };
  };
};

/** Every send's usage: 10 prompt tokens and 2 reply tokens, whatever the prompt. */
const USAGE = { input: 10, output: 2 };
const PER_SEND = USAGE.input + USAGE.output;

let openai: FakeProviderServer<OpenAIChatBody>;
let receiver: Receiver;
let h: Harness;
/** The clock budgets follow; tests move it. */
let now = Date.parse("2026-11-29T12:00:00.000Z");

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  receiver = await Receiver.start();
  h = await startHarness(
    {
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: "sk-test-openai",
      DEFAULT_MODEL_PROVIDER: "openai",
      ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_RETRY_SCHEDULE: "300ms,900ms",
    },
    undefined,
    { now: () => now },
  );
});
afterAll(async () => {
  await h.close();
  await receiver.close();
  await openai.close();
});

async function newAgent(tenant: Tenant, model = "gpt-4o-mini"): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Ada", modelProvider: "openai", model },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

function budget(tenant: Tenant, body: Record<string, unknown>, key = tenant.key) {
  return h.request<{ data: BudgetJson } & ErrorBody>("POST", "/v1/budgets", { key, body });
}

/** Sends one message; the fake model answers it with USAGE. */
function send(tenant: Tenant, agentId: string, userId: string, extra: Record<string, unknown> = {}) {
  openai.answer({ text: "ok", usage: USAGE });
  return h.request<Exceeded>("POST", `/v1/agents/${agentId}/messages`, {
    key: tenant.key,
    body: { text: "hi", userId, ...extra },
  });
}

async function standing(tenant: Tenant, id: string): Promise<BudgetJson> {
  const res = await h.request<{ data: BudgetJson }>("GET", `/v1/budgets/${id}`, { key: tenant.key });
  expect(res.status).toBe(200);
  return res.body.data;
}

function expectExceeded(res: TestResponse<Exceeded>, id: string) {
  expect(res.status).toBe(402);
  expect(res.body.error.code).toBe("BUDGET_EXCEEDED");
  expect(res.body.error.budget.id).toBe(id);
  expect(res.body.error.message).toContain(id);
}

describe("the budget routes", () => {
  it("create, list, read, update and delete budgets, with their spend this period", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant);
    const created = await budget(tenant, { unit: "usd", limit: 12.5, period: "month" });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.stringMatching(/^bdg_[0-9A-Z]{26}$/),
      agentId: null,
      apiKeyId: null,
      unit: "usd",
      period: "month",
      limit: 12.5,
      spend: {
        spent: 0,
        remaining: 12.5,
        percent: 0,
        periodStart: "2026-11-01T00:00:00.000Z",
        resetsAt: "2026-12-01T00:00:00.000Z",
      },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const ofAgent = await budget(tenant, { unit: "tokens", limit: 1000, period: "day", agentId });
    expect(ofAgent.body.data).toMatchObject({ agentId, unit: "tokens", limit: 1000 });
    expect(ofAgent.body.data.spend.resetsAt).toBe("2026-11-30T00:00:00.000Z");
    const ofKey = await budget(tenant, { unit: "tokens", limit: 5, period: "day", apiKeyId: tenant.keyId });
    expect(ofKey.body.data.apiKeyId).toBe(tenant.keyId);

    const listed = await h.request<{ data: BudgetJson[] }>("GET", "/v1/budgets", { key: tenant.key });
    expect(listed.body.data.map((b) => b.id)).toEqual([created, ofAgent, ofKey].map((r) => r.body.data.id));

    const patched = await h.request<{ data: BudgetJson }>("PATCH", `/v1/budgets/${ofKey.body.data.id}`, {
      key: tenant.key,
      body: { limit: 50, period: "month" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ limit: 50, period: "month", apiKeyId: tenant.keyId });

    const deleted = await h.request("DELETE", `/v1/budgets/${created.body.data.id}`, { key: tenant.key });
    expect(deleted.body).toEqual({ success: true, data: { id: created.body.data.id, deleted: true } });
    const again = await h.request<ErrorBody>("GET", `/v1/budgets/${created.body.data.id}`, {
      key: tenant.key,
    });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("BUDGET_NOT_FOUND");
  });

  it("refuses bad budgets with 400 naming the field, and another account's things with 404", async () => {
    const tenant = await h.tenant();
    const other = await h.tenant();
    const theirs = await newAgent(other);
    const problems: [Record<string, unknown>, string][] = [
      [{ unit: "tokens", limit: 1.5, period: "day" }, "limit"],
      [{ unit: "usd", limit: 0.001, period: "day" }, "limit"],
      [{ unit: "coins", limit: 1, period: "day" }, "unit"],
      [{ unit: "tokens", limit: 1, period: "week" }, "period"],
      [{ unit: "tokens", limit: 1, period: "day", agentId: theirs, apiKeyId: tenant.keyId }, "apiKeyId"],
      [{ unit: "tokens", limit: 1 }, "period"],
    ];
    for (const [body, field] of problems) {
      const res = await budget(tenant, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details?.map((d) => d.field)).toContain(field);
    }
    const foreignAgent = await budget(tenant, { unit: "tokens", limit: 1, period: "day", agentId: theirs });
    expect([foreignAgent.status, foreignAgent.body.error.code]).toEqual([404, "AGENT_NOT_FOUND"]);
    const foreignKey = await budget(tenant, {
      unit: "tokens",
      limit: 1,
      period: "day",
      apiKeyId: other.keyId,
    });
    expect([foreignKey.status, foreignKey.body.error.code]).toEqual([404, "API_KEY_NOT_FOUND"]);
    const mine = await budget(tenant, { unit: "tokens", limit: 1, period: "day" });
    for (const method of ["GET", "DELETE"]) {
      const res = await h.request<ErrorBody>(method, `/v1/budgets/${mine.body.data.id}`, { key: other.key });
      expect([res.status, res.body.error.code]).toEqual([404, "BUDGET_NOT_FOUND"]);
    }
    const patch = await h.request<ErrorBody>("PATCH", `/v1/budgets/${mine.body.data.id}`, {
      key: tenant.key,
      body: { limit: 2.5 },
    });
    expect([patch.status, patch.body.error.details?.[0]?.field]).toEqual([400, "limit"]);
  });

  it("need budgets:write to change and budgets:read to read, which full-access keys hold", async () => {
    const tenant = await h.tenant();
    const reader = await tenant.keyWith(["budgets:read"]);
    const writer = await tenant.keyWith(["agents:read"]);
    const refused = await budget(tenant, { unit: "tokens", limit: 1, period: "day" }, writer.key);
    expect([refused.status, refused.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await budget(tenant, { unit: "tokens", limit: 1, period: "day" }, reader.key)).status).toBe(403);
    expect((await h.request("GET", "/v1/budgets", { key: reader.key })).status).toBe(200);
    expect((await h.request("GET", "/v1/budgets", { key: writer.key })).status).toBe(403);
  });
});

describe("enforcement", () => {
  it("admits exactly what the budget allows out of 50 simultaneous sends; the rest are 402 before the model", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant);
    const allowed = 7;
    // One send first, so the agent's sends are known to spend PER_SEND each; then room for exactly `allowed`.
    const created = await budget(tenant, {
      unit: "tokens",
      limit: (allowed + 1) * PER_SEND,
      period: "day",
      agentId,
    });
    expect((await send(tenant, agentId, "warm")).status).toBe(200);
    openai.reset();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => send(tenant, agentId, `u${i}`)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(allowed);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(50 - allowed);
    for (const res of refused) expectExceeded(res, created.body.data.id);
    expect(refused[0]!.body.error.budget).toMatchObject({
      unit: "tokens",
      period: "day",
      limit: (allowed + 1) * PER_SEND,
      resetsAt: "2026-11-30T00:00:00.000Z",
    });
    // Refused sends never reached the model.
    expect(openai.requests).toHaveLength(allowed);
    expect((await standing(tenant, created.body.data.id)).spend).toMatchObject({
      spent: (allowed + 1) * PER_SEND,
      remaining: 0,
      percent: 100,
    });
  });

  it("counts streams, background sends and chat completions, and refuses them the same way", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant);
    const created = await budget(tenant, { unit: "tokens", limit: 3 * PER_SEND, period: "day" });
    openai.answer({ text: "ok", usage: USAGE });
    const stream = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "hi", userId: "a", stream: true }),
    });
    expect(stream.status).toBe(200);
    expect(await stream.text()).toContain("event: message.completed");
    const background = await send(tenant, agentId, "b", { background: true });
    expect(background.status).toBe(202);
    const id = (background.body as unknown as { data: { id: string } }).data.id;
    for (let i = 0; i < 50; i++) {
      const res = await h.request<{ data: { status: string } }>(
        "GET",
        `/v1/agents/${agentId}/messages/${id}`,
        {
          key: tenant.key,
        },
      );
      if (res.body.data.status === "completed") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    openai.answer({ text: "ok", usage: USAGE });
    const chat = await h.request("POST", "/v1/chat/completions", {
      key: tenant.key,
      body: { model: agentId, messages: [{ role: "user", content: "hi" }] },
    });
    expect(chat.status).toBe(200);
    await expect
      .poll(async () => (await standing(tenant, created.body.data.id)).spend.spent)
      .toBe(3 * PER_SEND);
    expectExceeded(await send(tenant, agentId, "c", { stream: true }), created.body.data.id);
    const refusedChat = await h.request<{ error: { code: string } }>("POST", "/v1/chat/completions", {
      key: tenant.key,
      body: { model: agentId, messages: [{ role: "user", content: "hi" }] },
    });
    expect(refusedChat.status).toBe(402);
  });

  it("counts a key's sends only against that key's budget", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant);
    const other = await tenant.keyWith(["messages:send"]);
    const created = await budget(tenant, {
      unit: "tokens",
      limit: PER_SEND,
      period: "day",
      apiKeyId: other.keyId,
    });
    openai.answer({ text: "ok", usage: USAGE });
    const first = await h.request("POST", `/v1/agents/${agentId}/messages`, {
      key: other.key,
      body: { text: "hi" },
    });
    expect(first.status).toBe(200);
    const second = await h.request<Exceeded>("POST", `/v1/agents/${agentId}/messages`, {
      key: other.key,
      body: { text: "hi" },
    });
    expectExceeded(second, created.body.data.id);
    // The account's own key is not counted by it.
    expect((await send(tenant, agentId, "x")).status).toBe(200);
  });

  it("checks a send before its budget: a malformed send to a spent budget is 400, a valid one 402", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant);
    const created = await budget(tenant, { unit: "tokens", limit: PER_SEND, period: "day" });
    expect((await send(tenant, agentId, "a")).status).toBe(200);
    openai.reset();

    const malformed = await h.request<ErrorBody>("POST", `/v1/agents/${agentId}/messages`, {
      key: tenant.key,
      body: { text: "", userId: "a" },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("INVALID_REQUEST");
    expect(malformed.body.error.details).toEqual([expect.objectContaining({ field: "text" })]);
    expectExceeded(await send(tenant, agentId, "a"), created.body.data.id);

    const chat = (messages: unknown[]) =>
      h.request<{ error: { code: string; param: string | null } }>("POST", "/v1/chat/completions", {
        key: tenant.key,
        body: { model: agentId, messages },
      });
    const noMessages = await chat([]);
    expect(noMessages.status).toBe(400);
    expect(noMessages.body.error).toMatchObject({ code: "INVALID_REQUEST", param: "messages" });
    const endsWithAssistant = await chat([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    expect(endsWithAssistant.status).toBe(400);
    expect(endsWithAssistant.body.error).toMatchObject({ code: "INVALID_REQUEST", param: "messages" });
    const valid = await chat([{ role: "user", content: "hi" }]);
    expect(valid.status).toBe(402);
    expect(valid.body.error.code).toBe("BUDGET_EXCEEDED");
    expect(openai.requests).toHaveLength(0);
  });

  it("starts again when the period ends, and counts what was spent before the budget existed", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant);
    expect((await send(tenant, agentId, "before")).status).toBe(200);
    // Spend already recorded today counts toward a budget made now.
    const created = await budget(tenant, { unit: "tokens", limit: 2 * PER_SEND, period: "day", agentId });
    expect(created.body.data.spend.spent).toBe(PER_SEND);
    expect((await send(tenant, agentId, "a")).status).toBe(200);
    expectExceeded(await send(tenant, agentId, "b"), created.body.data.id);

    const saved = now;
    try {
      now = Date.parse("2026-11-30T00:00:00.000Z");
      const fresh = await standing(tenant, created.body.data.id);
      expect(fresh.spend).toMatchObject({
        spent: 0,
        periodStart: "2026-11-30T00:00:00.000Z",
        resetsAt: "2026-12-01T00:00:00.000Z",
      });
      expect((await send(tenant, agentId, "next day")).status).toBe(200);
      expect((await standing(tenant, created.body.data.id)).spend.spent).toBe(PER_SEND);
    } finally {
      now = saved;
    }
  });

  it("prices money budgets and usage at the configured prices", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant, "gpt-4o");
    // gpt-4o: $2.50 per million input tokens, $10 per million output tokens.
    const cost = (USAGE.input * 2.5 + USAGE.output * 10) / 1_000_000;
    const created = await budget(tenant, { unit: "usd", limit: 0.01, period: "month", agentId });
    expect((await send(tenant, agentId, "u")).status).toBe(200);
    expect((await standing(tenant, created.body.data.id)).spend.spent).toBeCloseTo(cost, 12);
    const usage = await h.request<{
      data: { totals: { costUsd: number; groups: { model: string; costUsd: number }[] } };
    }>("GET", `/v1/usage?groupBy=model`, { key: tenant.key });
    expect(usage.body.data.totals.costUsd).toBeCloseTo(cost, 12);
    expect(usage.body.data.totals.groups).toEqual([
      expect.objectContaining({ model: "gpt-4o", costUsd: cost }),
    ]);
  });
});

describe("alerts", () => {
  it("send budget.threshold once at each of 50, 80 and 100 %", async () => {
    const tenant = await h.tenant();
    const agentId = await newAgent(tenant);
    const path = "budget-alerts";
    const hook = await h.request<{ data: { secret: string } }>("POST", "/v1/webhooks", {
      key: tenant.key,
      body: { url: receiver.url(path), events: ["budget.threshold"] },
    });
    expect(hook.status).toBe(201);
    const created = await budget(tenant, { unit: "tokens", limit: 5 * PER_SEND, period: "day", agentId });
    // 1 of 5: nothing; 3 of 5 (60 %): 50; 4 of 5: 80; 5 of 5: 100; then refused, and nothing more.
    for (let i = 0; i < 5; i++) expect((await send(tenant, agentId, `u${i}`)).status).toBe(200);
    expectExceeded(await send(tenant, agentId, "over"), created.body.data.id);
    await expect.poll(() => receiver.at(path).length, { timeout: 10_000 }).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = receiver
      .at(path)
      .map((r) => verify(r, hook.body.data.secret) as { type: string; data: Record<string, unknown> });
    expect(events.map((e) => [e.type, e.data.threshold])).toEqual([
      ["budget.threshold", 50],
      ["budget.threshold", 80],
      ["budget.threshold", 100],
    ]);
    expect(events[2]!.data).toMatchObject({
      budgetId: created.body.data.id,
      unit: "tokens",
      period: "day",
      agentId,
      limit: 5 * PER_SEND,
      spent: 5 * PER_SEND,
      periodStart: "2026-11-29T00:00:00.000Z",
      resetsAt: "2026-11-30T00:00:00.000Z",
    });
  });
});

describe("prices file", () => {
  it("stops the server at start with a line naming the bad entry", async () => {
    const file = join(h.dataDir, "prices.json");
    await writeFile(
      file,
      JSON.stringify({ models: { "my-model": { inputPerMillion: -1, outputPerMillion: 1 } } }),
    );
    await expect(startHarness({ PRICES_FILE: file })).rejects.toThrow(
      /PRICES_FILE: the prices file .*prices\.json: models\["my-model"\]\.inputPerMillion must be a number/,
    );
    await expect(startHarness({ PRICES_FILE: join(h.dataDir, "missing.json") })).rejects.toThrow(
      /PRICES_FILE: cannot read the prices file/,
    );
  });
});
