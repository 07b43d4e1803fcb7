import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { generateApiKey, SCOPES } from "@agentry/core";
import { startTestRedis, type TestRedis } from "@agentry/limits/testing";
import { openRegistryStore } from "@agentry/registry";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Two gateway processes sharing one Redis and one data directory, as behind a load balancer: a budget is exact
 * over both, since every reservation is one script on the Redis they share.
 */
const USAGE = { input: 10, output: 2 };
const PER_SEND = USAGE.input + USAGE.output;

let dataDir: string;
let redis: TestRedis;
let openai: FakeProviderServer<OpenAIChatBody>;
const gateways: DeployableProcess[] = [];

async function startGateway(): Promise<DeployableProcess> {
  const gateway = await startDeployable("apps/server", {
    DATA_DIR: dataDir,
    PORT: "0",
    REDIS_URL: redis.url,
    PUBLIC_BASE_URL: "https://agents.example.test",
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "k",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
  gateways.push(gateway);
  for (const started = Date.now(); Date.now() - started < 20_000; ) {
    if ((await fetch(`${gateway.url}/readyz`)).status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return gateway;
}

async function newTenant(): Promise<string> {
  const store = await openRegistryStore({ dataDir });
  try {
    // Rate and concurrency limits out of the way: only the budget refuses.
    const account = await store.createAccount({
      name: "budgets",
      tier: "enterprise",
      limitOverrides: { requestsPerMinute: 100_000, messagesPerMinute: 100_000, concurrentMessages: 1000 },
    });
    const generated = generateApiKey();
    await store.createApiKey({
      accountId: account.id,
      name: "test",
      scopes: [...SCOPES],
      expiresAt: null,
      sha256: generated.sha256,
      prefix: generated.prefix,
    });
    return generated.secret;
  } finally {
    await store.close();
  }
}

async function call(gateway: DeployableProcess, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data: Record<string, unknown>; error?: { code: string } },
  };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-budgets-"));
  redis = await startTestRedis();
  openai = await startFakeOpenAI({ apiKey: "k" });
  await Promise.all([startGateway(), startGateway()]);
}, 120_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.stop("SIGKILL");
  await openai?.close();
  await redis?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("a budget over two gateways on one Redis", () => {
  it("admits exactly what it allows out of 50 simultaneous sends spread over both", async () => {
    const [a, b] = gateways as [DeployableProcess, DeployableProcess];
    const key = await newTenant();
    const agent = await call(a, key, "POST", "/v1/agents", {
      name: "Ada",
      modelProvider: "openai",
      model: "gpt-4o-mini",
    });
    const agentId = agent.body.data.id as string;
    const allowed = 9;
    // A send through each gateway first, so both know what the agent's sends spend; then room for `allowed`.
    const created = await call(b, key, "POST", "/v1/budgets", {
      unit: "tokens",
      limit: (allowed + 2) * PER_SEND,
      period: "day",
      agentId,
    });
    expect(created.status).toBe(201);
    for (const gateway of [a, b]) {
      openai.answer({ text: "ok", usage: USAGE });
      expect(
        (await call(gateway, key, "POST", `/v1/agents/${agentId}/messages`, { text: "hi" })).status,
      ).toBe(200);
    }
    for (let i = 0; i < 50; i++) openai.answer({ text: "ok", usage: USAGE });
    const before = openai.requests.length;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(i % 2 === 0 ? a : b, key, "POST", `/v1/agents/${agentId}/messages`, {
          text: "hi",
          userId: `u${i}`,
        }),
      ),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(allowed);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.map((r) => [r.status, r.body.error?.code])).toEqual(
      Array.from({ length: 50 - allowed }, () => [402, "BUDGET_EXCEEDED"]),
    );
    // Both gateways refused some: the limit was shared, not one per gateway.
    expect(new Set(answers.map((r, i) => (r.status === 402 ? i % 2 : -1)).filter((g) => g >= 0)).size).toBe(
      2,
    );
    expect(openai.requests.length - before).toBe(allowed);
    for (const gateway of [a, b]) {
      const read = await call(gateway, key, "GET", `/v1/budgets/${created.body.data.id as string}`);
      expect(read.body.data.spend).toMatchObject({
        spent: (allowed + 2) * PER_SEND,
        remaining: 0,
        percent: 100,
      });
    }
  });
});
