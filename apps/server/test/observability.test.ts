import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeOpenAI } from "@agentry/conversation/testing";
import type { LimitName } from "@agentry/core";
import { type CollectedSpan, OtlpCollector, sampleValue } from "@agentry/observability/testing";
import { AccountService, Tier } from "@agentry/proto";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The three services as separate processes, each with its metrics port and exporting traces to a local OTLP
 * collector: what an operator sees of one request across all of them.
 */
let dataDir: string;
let collector: OtlpCollector;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let registry: ServiceProcess;
let conversation: ServiceProcess;
let webhooks: ServiceProcess;
let gateway: ServiceProcess;
let key: string;
let agentId: string;

const observed = { METRICS_PORT: "0", OTEL_BSP_SCHEDULE_DELAY: "50" };

const UNLIMITED: Partial<Record<LimitName, number>> = {
  requestsPerMinute: 1_000_000,
  createPerMinute: 1_000_000,
  getPerMinute: 1_000_000,
  messagesPerMinute: 1_000_000,
  concurrentMessages: 100,
};

/** The URL a process logged for its metrics port. */
function metricsUrl(service: ServiceProcess): string {
  const line = service.lines.find((l) => l.msg === "metrics listening");
  if (!line) throw new Error("the service logged no metrics URL");
  return String(line.url);
}

async function scrapeOf(service: ServiceProcess): Promise<string> {
  const response = await fetch(metricsUrl(service));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
  return response.text();
}

async function newKey(limits: Partial<Record<LimitName, number>>): Promise<string> {
  const accounts = createClient(
    AccountService,
    createConnectTransport({ baseUrl: registry.url, httpVersion: "2" }),
  );
  const { account } = await accounts.createAccount({
    name: `observed-${Date.now()}-${Math.random()}`,
    tier: Tier.ENTERPRISE,
    limitOverrides: limits,
  });
  const created = await accounts.createApiKey({ accountId: account!.id, name: "test", scopes: [] });
  return created.secret;
}

function call(method: string, path: string, requestId: string, body?: unknown, apiKey = key) {
  return fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      "x-request-id": requestId,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Gives the processes time to write their log lines and export their spans. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-observed-"));
  collector = await new OtlpCollector().start();
  openai = await startFakeOpenAI();
  const env = { ...observed, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
  [registry, webhooks] = await Promise.all([
    startDeployable("services/registry", {
      ...env,
      DATA_DIR: join(dataDir, "registry"),
      REGISTRY_PORT: "0",
      SECRETS_KEY: Buffer.alloc(32, 1).toString("base64"),
      LOG_LEVEL: "debug",
    }),
    startDeployable("services/webhooks", { ...env, DATA_DIR: join(dataDir, "webhooks"), WEBHOOKS_PORT: "0" }),
  ]);
  // It reads agents' plugin secrets from the registry for their turns' tools.
  conversation = await startDeployable("services/conversation", {
    ...env,
    DATA_DIR: join(dataDir, "conversation"),
    CONVERSATION_PORT: "0",
    DEFAULT_MODEL_PROVIDER: "openai",
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test",
    REGISTRY_URL: registry.url,
    LOG_LEVEL: "debug",
  });
  gateway = await startDeployable("services/gateway", {
    ...env,
    PORT: "0",
    REGISTRY_URL: registry.url,
    CONVERSATION_URL: conversation.url,
    WEBHOOKS_URL: webhooks.url,
  });
  key = await newKey(UNLIMITED);
  const created = await call("POST", "/v1/agents", "observed-setup", { name: "Observed" });
  expect(created.status).toBe(201);
  agentId = ((await created.json()) as { data: { id: string } }).data.id;
}, 90_000);

afterAll(async () => {
  await Promise.all([gateway, registry, conversation, webhooks].map((service) => service?.stop("SIGKILL")));
  await openai?.close();
  await collector?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("request ids across the services", () => {
  it("reach the registry's log lines", async () => {
    expect((await call("POST", "/v1/agents", "obs-create-1", { name: "Logged" })).status).toBe(201);
    await settle();
    const lines = registry.lines.filter((line) => line.msg === "agent created");
    expect(lines.at(-1)?.requestId).toBe("obs-create-1");
    expect(gateway.lines.some((line) => line.msg === "request" && line.requestId === "obs-create-1")).toBe(
      true,
    );
  });

  it("reach every conversation log line of a message, streamed or not", async () => {
    const plain = await call("POST", `/v1/agents/${agentId}/messages`, "obs-message-1", { text: "Hello" });
    expect(plain.status).toBe(200);
    const streamed = await call("POST", `/v1/agents/${agentId}/messages`, "obs-stream-1", {
      text: "Again",
      stream: true,
    });
    expect(await streamed.text()).toContain("event: message.completed");
    await settle();
    for (const id of ["obs-message-1", "obs-stream-1"]) {
      const answered = conversation.lines.filter(
        (line) => line.msg === "message answered" && line.requestId === id,
      );
      expect(answered).toHaveLength(1);
      const messageId = answered[0]!.messageId;
      const ofMessage = conversation.lines.filter((line) => line.messageId === messageId);
      expect(ofMessage.every((line) => line.requestId === id)).toBe(true);
    }
  });
});

describe("agent secrets", () => {
  it("reach no span, log line or metric of any process, though a turn reads one", async () => {
    const secret = "s3cret-observed-7f3a9b1c";
    const created = await call("POST", "/v1/agents", "obs-secret-1", {
      name: "Secretive",
      // Nothing listens there: the turn reads the secret, and the plugin's listing fails, saying so in the logs.
      plugins: [{ name: "mcp", config: { url: "https://mcp.invalid/mcp", authSecret: "mcp_token" } }],
    });
    expect(created.status).toBe(201);
    const secretive = ((await created.json()) as { data: { id: string } }).data.id;
    const put = await fetch(`${gateway.url}/v1/agents/${secretive}/secrets/mcp_token`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "x-request-id": "obs-secret-2",
      },
      body: JSON.stringify({ value: secret }),
    });
    expect(put.status).toBe(200);
    const sent = await call("POST", `/v1/agents/${secretive}/messages`, "obs-secret-3", { text: "Hi" });
    expect(sent.status).toBe(200);
    await collector.waitFor((span) => span.attributes["agentry.request_id"] === "obs-secret-3");
    await settle();
    // The turn did read it: the registry revealed it to the conversation service.
    expect(collector.spans.some((span) => span.name.includes("RevealSecrets"))).toBe(true);
    const everything = [
      JSON.stringify(collector.spans),
      ...[gateway, registry, conversation, webhooks].map((service) => JSON.stringify(service.lines)),
      ...(await Promise.all([gateway, registry, conversation].map(scrapeOf))),
    ];
    for (const text of everything) expect(text).not.toContain(secret);
  });
});

describe("metrics", () => {
  it("count requests by route pattern and status, and the RPCs they made on both sides", async () => {
    const before = await Promise.all([scrapeOf(gateway), scrapeOf(registry)]);
    expect((await call("GET", `/v1/agents/${agentId}`, "obs-get-1")).status).toBe(200);
    expect((await call("GET", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", "obs-get-2")).status).toBe(404);
    const after = await Promise.all([scrapeOf(gateway), scrapeOf(registry)]);

    const delta = (index: number, name: string, labels: Record<string, string>) =>
      sampleValue(after[index]!, name, labels) - sampleValue(before[index]!, name, labels);
    const route = { method: "GET", route: "/v1/agents/:agentId" };
    expect(delta(0, "agentry_http_requests_total", { ...route, status: "200" })).toBe(1);
    expect(delta(0, "agentry_http_requests_total", { ...route, status: "404" })).toBe(1);
    expect(delta(0, "agentry_http_request_duration_seconds_count", { ...route, status: "200" })).toBe(1);
    expect(after[0]).not.toContain(agentId);
    const getAgent = { service: "AgentService", method: "GetAgent" };
    expect(delta(0, "agentry_rpc_calls_total", { ...getAgent, side: "client", code: "ok" })).toBe(1);
    expect(delta(0, "agentry_rpc_calls_total", { ...getAgent, side: "client", code: "not_found" })).toBe(1);
    expect(delta(1, "agentry_rpc_calls_total", { ...getAgent, side: "server", code: "ok" })).toBe(1);
    expect(delta(1, "agentry_rpc_calls_total", { ...getAgent, side: "server", code: "not_found" })).toBe(1);
    expect(delta(0, "agentry_limiter_decisions_total", { limit: "getPerMinute", decision: "allowed" })).toBe(
      2,
    );
  });

  it("count a refused request under the limit that refused it", async () => {
    const limited = await newKey({ ...UNLIMITED, getPerMinute: 1 });
    const before = await scrapeOf(gateway);
    expect((await call("GET", `/v1/agents/${agentId}`, "obs-limit-1", undefined, limited)).status).toBe(404);
    expect((await call("GET", `/v1/agents/${agentId}`, "obs-limit-2", undefined, limited)).status).toBe(429);
    const after = await scrapeOf(gateway);
    const refused = { limit: "getPerMinute", decision: "refused" };
    expect(sampleValue(after, "agentry_limiter_decisions_total", refused)).toBe(
      sampleValue(before, "agentry_limiter_decisions_total", refused) + 1,
    );
    const status = { method: "GET", route: "/v1/agents/:agentId", status: "429" };
    expect(sampleValue(after, "agentry_http_requests_total", status)).toBe(
      sampleValue(before, "agentry_http_requests_total", status) + 1,
    );
  });

  it("count tokens and errors by provider, and streams while they are open", async () => {
    const before = await scrapeOf(conversation);
    openai.answer({ text: "Counted reply", usage: { input: 21, output: 4 } });
    expect(
      (await call("POST", `/v1/agents/${agentId}/messages`, "obs-tokens", { text: "Count" })).status,
    ).toBe(200);
    openai.failWith(401);
    expect((await call("POST", `/v1/agents/${agentId}/messages`, "obs-error", { text: "Fail" })).status).toBe(
      502,
    );

    openai.answer({ text: "one two three", chunkDelayMs: 400 });
    const streaming = call("POST", `/v1/agents/${agentId}/messages`, "obs-open", {
      text: "Hold",
      stream: true,
    });
    const response = await streaming;
    const reader = response.body!.getReader();
    await reader.read();
    const open = await Promise.all([scrapeOf(gateway), scrapeOf(conversation)]);
    expect(sampleValue(open[0], "agentry_open_streams", { kind: "sse" })).toBe(1);
    expect(sampleValue(open[1], "agentry_open_streams", { kind: "rpc" })).toBe(1);
    while (!(await reader.read()).done) {}
    await settle();

    const after = await scrapeOf(conversation);
    const delta = (name: string, labels: Record<string, string>) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(
      delta("agentry_provider_tokens_total", { provider: "openai", direction: "input" }),
    ).toBeGreaterThanOrEqual(21);
    expect(
      delta("agentry_provider_tokens_total", { provider: "openai", direction: "output" }),
    ).toBeGreaterThanOrEqual(4);
    expect(delta("agentry_provider_errors_total", { provider: "openai", code: "MODEL_ERROR" })).toBe(1);
    expect(
      delta("agentry_provider_request_duration_seconds_count", { provider: "openai", outcome: "ok" }),
    ).toBe(2);
    expect(delta("agentry_provider_first_token_seconds_count", { provider: "openai" })).toBe(1);
    expect(sampleValue(after, "agentry_open_streams", { kind: "rpc" })).toBe(0);
    expect(sampleValue(await scrapeOf(gateway), "agentry_open_streams", { kind: "sse" })).toBe(0);
  });
});

describe("traces", () => {
  /** The spans of one trace, once `count` of them have arrived. */
  async function traceOf(root: CollectedSpan, count: number): Promise<CollectedSpan[]> {
    await collector.waitFor(() => collector.spans.filter((s) => s.traceId === root.traceId).length >= count);
    return collector.spans.filter((span) => span.traceId === root.traceId);
  }

  it("follow a read from the gateway through the RPC into the registry's store", async () => {
    expect((await call("GET", `/v1/agents/${agentId}`, "obs-trace-1")).status).toBe(200);
    const root = await collector.waitFor(
      (span) => span.service === "agentry-gateway" && span.attributes["agentry.request_id"] === "obs-trace-1",
    );
    expect(root.name).toBe("GET /v1/agents/:agentId");
    expect(root.attributes["http.response.status_code"]).toBe(200);
    const spans = await traceOf(root, 4);
    const rpc = "agentry.registry.v1.AgentService/GetAgent";
    const client = spans.find((s) => s.name === rpc && s.service === "agentry-gateway");
    const server = spans.find((s) => s.name === rpc && s.service === "agentry-registry");
    const store = spans.find((s) => s.name === "registry.store.getAgent" && s.service === "agentry-registry");
    expect(client?.parentSpanId).toBe(root.spanId);
    expect(server?.parentSpanId).toBe(client?.spanId);
    expect(store?.parentSpanId).toBe(server?.spanId);
  });

  it("follow a message into the conversation service, its store and the provider call", async () => {
    expect(
      (await call("POST", `/v1/agents/${agentId}/messages`, "obs-trace-2", { text: "Trace" })).status,
    ).toBe(200);
    const root = await collector.waitFor((span) => span.attributes["agentry.request_id"] === "obs-trace-2");
    // Spans are exported as each ends, in no set order: wait for the ones asserted on, not for a count.
    const inTrace = (name: string) => (span: CollectedSpan) =>
      span.traceId === root.traceId && span.name === name;
    await collector.waitFor(inTrace("openai complete"));
    await collector.waitFor(inTrace("conversation.store.saveExchange"));
    const spans = await traceOf(root, 6);
    const server = spans.find(
      (s) => s.service === "agentry-conversation" && s.name.endsWith("ConversationService/SendMessage"),
    );
    const provider = spans.find((s) => s.name === "openai complete");
    expect(server).toBeDefined();
    expect(provider?.parentSpanId).toBe(server?.spanId);
    expect(provider?.attributes["gen_ai.request.model"]).toBeTypeOf("string");
    expect(spans.some((s) => s.name === "conversation.store.saveExchange")).toBe(true);
  });
});
