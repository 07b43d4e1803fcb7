import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { generateApiKey, type Limits, SCOPES } from "@agentry/core";
import { startTestRedis, type TestRedis } from "@agentry/limits/testing";
import { openRegistryStore } from "@agentry/registry";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents } from "./sse.js";

/**
 * Two gateway processes sharing one Redis and one data directory: limits, quotas, revocations and
 * concurrency slots hold across both.
 */
let dataDir: string;
let redis: TestRedis;
let openai: FakeProviderServer<OpenAIChatBody>;
const gateways: ServiceProcess[] = [];

async function startGateway(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const gateway = await startDeployable("apps/server", {
    DATA_DIR: dataDir,
    PORT: "0",
    REDIS_URL: redis.url,
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "k",
    DEFAULT_MODEL_PROVIDER: "openai",
    ...env,
  });
  gateways.push(gateway);
  return gateway;
}

let tenants = 0;
async function tenant(limits: Partial<Limits>): Promise<{ key: string; accountId: string }> {
  const store = await openRegistryStore({ dataDir });
  try {
    tenants += 1;
    const account = await store.createAccount({
      name: `many-${tenants}`,
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
    return { key: generated.secret, accountId: account.id };
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
};

let a: ServiceProcess;
let b: ServiceProcess;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-many-"));
  redis = await startTestRedis();
  openai = await startFakeOpenAI();
  [a, b] = await Promise.all([startGateway({ CONCURRENCY_LEASE_MS: "1500" }), startGateway()]);
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.stop("SIGKILL");
  await openai?.close();
  await redis?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("two gateways sharing Redis", () => {
  it("allow exactly the limit in total: 100 simultaneous requests against the 58 left of 60 a minute", async () => {
    const { key } = await tenant({ requestsPerMinute: 60, listPerMinute: 100_000 });
    // One request through each first, so that both know the key and the burst meets only the limiter.
    for (const gateway of [a, b])
      expect((await call(gateway, key, "GET", "/v1/agents?limit=1")).status).toBe(200);
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(i % 2 ? a : b, key, "GET", "/v1/agents?limit=1")),
    );
    const statuses = responses.map((res) => res.status);
    const others = responses.filter((res) => res.status !== 200 && res.status !== 429);
    expect(await Promise.all(others.map(async (res) => `${res.status} ${await res.text()}`))).toEqual([]);
    expect(statuses.filter((s) => s === 200)).toHaveLength(58);
    expect(statuses.filter((s) => s === 429)).toHaveLength(42);
    const refused = responses.find((res) => res.status === 429)!;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("never exceed the agents quota with simultaneous creates through both", async () => {
    const { key } = await tenant({ ...HIGH, maxAgents: 100 });
    const responses = await Promise.all(
      Array.from({ length: 130 }, (_, i) =>
        call(i % 2 ? a : b, key, "POST", "/v1/agents", { name: `q${i}` }),
      ),
    );
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(100);
    expect(statuses.filter((s) => s === 403)).toHaveLength(30);
    const listed = (await (await call(a, key, "GET", "/v1/agents?limit=1")).json()) as {
      pagination: { total: number };
    };
    expect(listed.pagination.total).toBe(100);
  });

  it("create once for simultaneous duplicates of an Idempotency-Key sent through both", async () => {
    const { key } = await tenant(HIGH);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/v1/agents`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "idempotency-key": "one-create",
          },
          body: JSON.stringify({ name: "once" }),
        }),
      ),
    );
    const fresh = responses.filter((res) => res.status === 201 && !res.headers.get("idempotent-replayed"));
    expect(fresh).toHaveLength(1);
    expect(responses.every((res) => res.status === 201 || res.status === 409)).toBe(true);
    const listed = (await (await call(a, key, "GET", "/v1/agents?limit=1")).json()) as {
      pagination: { total: number };
    };
    expect(listed.pagination.total).toBe(1);
  });

  it("resume a stream cut on one gateway on the other, live, into exactly the original events", async () => {
    const { key } = await tenant(HIGH);
    const agent = (await (await call(a, key, "POST", "/v1/agents", { name: "resumed" })).json()) as {
      data: { id: string };
    };
    const agentId = agent.data.id;
    const text = "one two three four five six seven eight nine ten";
    openai.reply(text, { chunkDelayMs: 40 });
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const first = await readEvents(`${a.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers,
      body: JSON.stringify({ text: "count", stream: true, onDisconnect: "continue" }),
      cutAfter: 3,
    });
    const messageId = (first.events[0]!.data as { id: string }).id;
    const rest = await readEvents(`${b.url}/v1/agents/${agentId}/messages/${messageId}/events`, {
      headers: { ...headers, "last-event-id": "3" },
    });
    const all = [...first.events, ...rest.events];
    expect(all.map((event) => event.id)).toEqual(all.map((_, i) => String(i + 1)));
    expect(all.at(-1)).toMatchObject({ event: "message.completed", data: { id: messageId, text } });
    const deltas = all.filter((event) => event.event === "message.delta");
    expect(deltas.map((event) => (event.data as { text: string }).text).join("")).toBe(text);
    // Read again from the start through the gateway that generated it: the same events.
    const replay = await readEvents(`${a.url}/v1/agents/${agentId}/messages/${messageId}/events`, {
      headers,
    });
    expect(replay.events).toEqual(all);
  });

  it("answer a background message sent through one gateway on the other", async () => {
    const { key } = await tenant(HIGH);
    const agent = (await (await call(b, key, "POST", "/v1/agents", { name: "background" })).json()) as {
      data: { id: string };
    };
    openai.reply("worked on it", { delayMs: 200 });
    const accepted = await call(b, key, "POST", `/v1/agents/${agent.data.id}/messages`, {
      text: "work",
      background: true,
    });
    expect(accepted.status).toBe(202);
    const { id } = ((await accepted.json()) as { data: { id: string } }).data;
    let state: { status: string; text?: string } = { status: "pending" };
    for (let i = 0; i < 100 && state.status === "pending"; i += 1) {
      const read = await call(a, key, "GET", `/v1/agents/${agent.data.id}/messages/${id}`);
      expect(read.status).toBe(200);
      state = ((await read.json()) as { data: typeof state }).data;
      if (state.status === "pending") await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(state).toMatchObject({ status: "completed", text: "worked on it" });
  });

  it("refuse a key revoked through one of them on both within a second", async () => {
    const { key } = await tenant(HIGH);
    const created = (await (await call(a, key, "POST", "/v1/api-keys", { name: "victim" })).json()) as {
      data: { id: string; key: string };
    };
    const victim = created.data.key;
    expect((await call(a, victim, "GET", "/v1/agents")).status).toBe(200);
    expect((await call(b, victim, "GET", "/v1/agents")).status).toBe(200);
    expect((await call(a, key, "DELETE", `/v1/api-keys/${created.data.id}`)).status).toBe(200);
    const revokedAt = Date.now();
    expect((await call(a, victim, "GET", "/v1/agents")).status).toBe(401);
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 3000) {
      status = (await call(b, victim, "GET", "/v1/agents")).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(1000);
  });

  it("get back the concurrency slots of a gateway killed with SIGKILL within the lease", async () => {
    const { key } = await tenant({ ...HIGH, messagesPerMinute: 100_000, concurrentMessages: 2 });
    const agent = (await (await call(b, key, "POST", "/v1/agents", { name: "busy" })).json()) as {
      data: { id: string };
    };
    const path = `/v1/agents/${agent.data.id}/messages`;
    openai.reset();
    openai.reply("never seen", { delayMs: 20_000 }).reply("never seen", { delayMs: 20_000 });
    // Two conversations: one conversation's messages are answered one at a time.
    const held = [
      call(a, key, "POST", path, { text: "hold", userId: "u1" }),
      call(a, key, "POST", path, { text: "hold", userId: "u2" }),
    ];
    for (const pending of held) pending.catch(() => undefined);
    await openai.waitForRequests(2);
    expect((await call(b, key, "POST", path, { text: "third" })).status).toBe(429);
    await a.stop("SIGKILL");
    const killedAt = Date.now();
    let status = 429;
    while (status === 429 && Date.now() - killedAt < 5000) {
      status = (await call(b, key, "POST", path, { text: "after" })).status;
      if (status === 429) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect(Date.now() - killedAt).toBeLessThan(2500);
  });

  it("fail closed with 503 while Redis is down, without crashing, and recover", async () => {
    const { key } = await tenant(HIGH);
    expect((await call(b, key, "GET", "/v1/agents")).status).toBe(200);
    await redis.stop();
    const down = await call(b, key, "GET", "/v1/agents");
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe("AGENT_UNAVAILABLE");
    expect(Number(down.headers.get("retry-after"))).toBeGreaterThan(0);
    await redis.start();
    let status = 503;
    const restartedAt = Date.now();
    while (status !== 200 && Date.now() - restartedAt < 10_000) {
      status = (await call(b, key, "GET", "/v1/agents")).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect(b.child.exitCode).toBeNull();
  });
});
