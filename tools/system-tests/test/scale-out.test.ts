import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { generateApiKey, type Limits, SCOPES } from "@agentry/core";
import { freePort, startTestRedis, type TestRedis } from "@agentry/limits/testing";
import { openRegistryStore } from "@agentry/registry";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The scaled-out topology on loopback: two gateways, one registry, one conversation service and one webhooks
 * service, each its own process, on a real Postgres and a real Redis.
 */
let database: TestDatabase;
let redis: TestRedis;
let openai: FakeProviderServer<OpenAIChatBody>;
let dataDir: string;
let registryPort: number;
let registry: ServiceProcess;
let conversation: ServiceProcess;
let webhooks: ServiceProcess;
let a: ServiceProcess;
let b: ServiceProcess;
const processes: ServiceProcess[] = [];

const track = (service: ServiceProcess) => {
  processes.push(service);
  return service;
};

const startRegistry = async () =>
  track(
    await startDeployable("services/registry", {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      REGISTRY_PORT: String(registryPort),
      SECRETS_KEY: Buffer.alloc(32, 1).toString("base64"),
      CONVERSATION_URL: conversation.url,
      WEBHOOKS_URL: webhooks.url,
    }),
  );

const startGateway = async (env: Record<string, string> = {}) =>
  track(
    await startDeployable("services/gateway", {
      PORT: "0",
      DATA_DIR: dataDir,
      REGISTRY_URL: registry.url,
      CONVERSATION_URL: conversation.url,
      WEBHOOKS_URL: webhooks.url,
      REDIS_URL: redis.url,
      ...env,
    }),
  );

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-scale-"));
  [database, redis, openai, registryPort] = await Promise.all([
    openTestDatabase(),
    startTestRedis(),
    startFakeOpenAI(),
    freePort(),
  ]);
  conversation = track(
    await startDeployable("services/conversation", {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      CONVERSATION_PORT: "0",
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: "k",
      DEFAULT_MODEL_PROVIDER: "openai",
    }),
  );
  webhooks = track(
    await startDeployable("services/webhooks", {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      WEBHOOKS_PORT: "0",
    }),
  );
  registry = await startRegistry();
  [a, b] = await Promise.all([startGateway({ CONCURRENCY_LEASE_MS: "1500" }), startGateway()]);
}, 120_000);

afterAll(async () => {
  for (const service of processes) await service.stop("SIGKILL");
  await openai?.close();
  await redis?.stop();
  await database?.close();
  await rm(dataDir, { recursive: true, force: true });
});

let tenants = 0;
async function tenant(limits: Partial<Limits>): Promise<{ key: string }> {
  const store = await openRegistryStore({ dataDir, databaseUrl: database.url });
  try {
    tenants += 1;
    const account = await store.createAccount({
      name: `scale-${tenants}`,
      tier: "enterprise",
      limitOverrides: limits,
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
    return { key: generated.secret };
  } finally {
    await store.close();
  }
}

function call(gateway: ServiceProcess, key: string, method: string, path: string, body?: unknown) {
  return fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

const HIGH = {
  requestsPerMinute: 100_000,
  createPerMinute: 100_000,
  listPerMinute: 100_000,
  getPerMinute: 100_000,
  messagesPerMinute: 100_000,
};

describe("two gateways, a registry and a conversation service on Postgres and Redis", () => {
  it("serve messages end to end and keep the quota under simultaneous creates through both", async () => {
    const { key } = await tenant({ ...HIGH, maxAgents: 100 });
    const responses = await Promise.all(
      Array.from({ length: 130 }, (_, i) =>
        call(i % 2 ? a : b, key, "POST", "/v1/agents", { name: `q${i}` }),
      ),
    );
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(100);
    expect(statuses.filter((s) => s === 403)).toHaveLength(30);
    const id = ((await responses.find((res) => res.status === 201)!.json()) as { data: { id: string } }).data
      .id;
    const reply = await call(b, key, "POST", `/v1/agents/${id}/messages`, { text: "ping", userId: "u" });
    expect(reply.status).toBe(200);
    expect(((await reply.json()) as { data: { text: string } }).data.text).toContain("ping");
  });

  it("count every one of many simultaneous messages through both in usage, exactly", async () => {
    const { key } = await tenant({ ...HIGH, concurrentMessages: 1000 });
    const created = await call(a, key, "POST", "/v1/agents", { name: "counted" });
    const agentId = ((await created.json()) as { data: { id: string } }).data.id;
    const sends = 60;
    const responses = await Promise.all(
      Array.from({ length: sends }, (_, i) =>
        call(i % 2 ? a : b, key, "POST", `/v1/agents/${agentId}/messages`, {
          text: `n${i}`,
          userId: `u${i % 3}`,
        }),
      ),
    );
    expect(responses.map((res) => res.status)).toEqual(Array(sends).fill(200));
    for (const gateway of [a, b]) {
      const usage = (await (await call(gateway, key, "GET", "/v1/usage?groupBy=userId")).json()) as {
        data: { totals: { messages: number; groups: { userId: string; messages: number }[] } };
      };
      expect(usage.data.totals.messages).toBe(sends);
      expect(
        Object.fromEntries(usage.data.totals.groups.map((group) => [group.userId, group.messages])),
      ).toEqual({ u0: 20, u1: 20, u2: 20 });
    }
  });

  it("keep rate limits exact across both", async () => {
    const { key } = await tenant({ ...HIGH, requestsPerMinute: 60 });
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(i % 2 ? a : b, key, "GET", "/v1/agents?limit=1")),
    );
    expect(responses.filter((res) => res.status === 200)).toHaveLength(60);
    expect(responses.filter((res) => res.status === 429)).toHaveLength(40);
  });

  it("refuse a revoked key on both within a second", async () => {
    const { key } = await tenant(HIGH);
    const created = (await (await call(a, key, "POST", "/v1/api-keys", { name: "victim" })).json()) as {
      data: { id: string; key: string };
    };
    expect((await call(b, created.data.key, "GET", "/v1/agents")).status).toBe(200);
    expect((await call(a, key, "DELETE", `/v1/api-keys/${created.data.id}`)).status).toBe(200);
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 3000) {
      status = (await call(b, created.data.key, "GET", "/v1/agents")).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(1000);
  });

  it("create each agent once when clients retry with their Idempotency-Key after the gateway was killed", async () => {
    const { key } = await tenant({ ...HIGH, maxAgents: 100_000 });
    // A short RPC time limit makes a claim lost with its gateway free again soon (its lease is that plus 10 s).
    const doomed = await startGateway({ RPC_TIMEOUT_MS: "1000" });
    const create = (gateway: ServiceProcess, name: string) =>
      fetch(`${gateway.url}/v1/agents`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "idempotency-key": name,
        },
        body: JSON.stringify({ name }),
      });
    const answered: string[] = [];
    const unanswered: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const name = `idem-${w}-${i}`;
        try {
          const res = await create(doomed, name);
          if (res.status === 201) answered.push(name);
        } catch {
          unanswered.push(name);
          return;
        }
      }
    });
    while (answered.length < 40) await new Promise((resolve) => setTimeout(resolve, 20));
    await doomed.stop("SIGKILL");
    stop = true;
    await Promise.all(writers);

    // Each client whose request got no answer retries it, with its key, through the other gateway.
    for (const name of unanswered) {
      let res = await create(b, name);
      const started = Date.now();
      while (res.status === 409 && Date.now() - started < 20_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        res = await create(b, name);
      }
      expect(res.status, name).toBe(201);
      answered.push(name);
    }

    const names: string[] = [];
    for (let page = 1; ; page++) {
      const listed = (await (await call(b, key, "GET", `/v1/agents?limit=100&page=${page}`)).json()) as {
        data: { name: string }[];
        pagination: { hasMore: boolean };
      };
      names.push(...listed.data.map((agent) => agent.name));
      if (!listed.pagination.hasMore) break;
    }
    const counts = new Map<string, number>();
    for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
    expect([...counts.entries()].filter(([, n]) => n > 1)).toEqual([]);
    for (const name of answered) expect(counts.get(name), name).toBe(1);
  });

  it("lose no acknowledged write when a gateway is killed under load, and get its slots back", async () => {
    const { key } = await tenant({ ...HIGH, maxAgents: 100_000, concurrentMessages: 2 });
    const target = (await (await call(b, key, "POST", "/v1/agents", { name: "busy" })).json()) as {
      data: { id: string };
    };
    openai.reset();
    openai.reply("held", { delayMs: 20_000 }).reply("held", { delayMs: 20_000 });
    const held = [0, 1].map(() =>
      call(a, key, "POST", `/v1/agents/${target.data.id}/messages`, { text: "hold" }),
    );
    for (const pending of held) pending.catch(() => undefined);
    await openai.waitForRequests(2);

    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await call(a, key, "POST", "/v1/agents", { name: `load-${w}-${i}` });
          if (res.status === 201) acknowledged.push(((await res.json()) as { data: { id: string } }).data.id);
        } catch {
          return;
        }
      }
    });
    while (acknowledged.length < 50) await new Promise((resolve) => setTimeout(resolve, 20));
    await a.stop("SIGKILL");
    stop = true;
    await Promise.all(writers);

    const missing: string[] = [];
    for (const id of acknowledged)
      if ((await call(b, key, "GET", `/v1/agents/${id}`)).status !== 200) missing.push(id);
    expect(missing).toEqual([]);

    const killedAt = Date.now();
    let status = 429;
    while (status === 429 && Date.now() - killedAt < 5000) {
      status = (await call(b, key, "POST", `/v1/agents/${target.data.id}/messages`, { text: "after" }))
        .status;
      if (status === 429) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect(Date.now() - killedAt).toBeLessThan(2500);
  });

  it("answer 503 while the registry restarts under load, then serve fully with nothing lost", async () => {
    const { key } = await tenant({ ...HIGH, maxAgents: 100_000 });
    const acknowledged: string[] = [];
    const statuses = new Set<number>();
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const res = await call(b, key, "POST", "/v1/agents", { name: `restart-${w}-${i}` });
        statuses.add(res.status);
        if (res.status === 201) acknowledged.push(((await res.json()) as { data: { id: string } }).data.id);
        else await res.arrayBuffer();
      }
    });
    while (acknowledged.length < 20) await new Promise((resolve) => setTimeout(resolve, 20));
    await registry.stop("SIGKILL");
    const during = await call(b, key, "POST", "/v1/agents", { name: "during" });
    expect(during.status).toBe(503);
    expect(((await during.json()) as { error: { code: string } }).error.code).toBe("AGENT_UNAVAILABLE");
    const readiness = await fetch(`${b.url}/readyz`);
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toMatchObject({ dependencies: { registry: "down", redis: "up" } });
    registry = await startRegistry();
    const restartedAt = Date.now();
    const count = acknowledged.length;
    while (acknowledged.length < count + 20 && Date.now() - restartedAt < 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.length).toBeGreaterThanOrEqual(count + 20);
    expect([...statuses].sort()).toEqual([201, 503]);
    const missing: string[] = [];
    for (const id of acknowledged)
      if ((await call(b, key, "GET", `/v1/agents/${id}`)).status !== 200) missing.push(id);
    expect(missing).toEqual([]);
    expect(await (await fetch(`${b.url}/readyz`)).json()).toMatchObject({ dependencies: { registry: "up" } });
  });
});
