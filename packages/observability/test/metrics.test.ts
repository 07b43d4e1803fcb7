import { AgentService, ConversationService } from "@agentry/proto";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { codeName, Metrics } from "../src/metrics.js";
import { type MetricsServer, startMetricsServer } from "../src/metrics-server.js";
import { rpcInterceptors } from "../src/rpc.js";
import { sampleValue, scrape } from "../src/testing/index.js";

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("Metrics", () => {
  it("serves what was observed on GET /metrics, and nothing else on that port", async () => {
    const metrics = new Metrics();
    server = await startMetricsServer(metrics, 0, "127.0.0.1");
    metrics.observeHttp("GET", "/v1/agents/:agentId", 200, 0.002);
    metrics.observeHttp("GET", "/v1/agents/:agentId", 200, 0.004);
    metrics.limiterDecision("getPerMinute", false);
    metrics.countTokens("openai", 12, 3);
    metrics.countProviderError("openai", "MODEL_ERROR");

    const text = await scrape(server.url);
    const route = { method: "GET", route: "/v1/agents/:agentId", status: "200" };
    expect(sampleValue(text, "agentry_http_requests_total", route)).toBe(2);
    expect(sampleValue(text, "agentry_http_request_duration_seconds_count", route)).toBe(2);
    expect(
      sampleValue(text, "agentry_http_request_duration_seconds_bucket", { ...route, le: "0.0025" }),
    ).toBe(1);
    expect(
      sampleValue(text, "agentry_limiter_decisions_total", { limit: "getPerMinute", decision: "refused" }),
    ).toBe(1);
    expect(
      sampleValue(text, "agentry_provider_tokens_total", { provider: "openai", direction: "input" }),
    ).toBe(12);
    expect(
      sampleValue(text, "agentry_provider_tokens_total", { provider: "openai", direction: "output" }),
    ).toBe(3);
    expect(sampleValue(text, "agentry_provider_errors_total", { code: "MODEL_ERROR" })).toBe(1);
    expect(text).toContain("process_resident_memory_bytes");

    const other = await fetch(`${server.url}/v1/agents`);
    expect(other.status).toBe(404);
  });

  it("counts a stream open until it is closed, once", async () => {
    const metrics = new Metrics({ processMetrics: false });
    const close = metrics.streamOpened("sse");
    metrics.streamOpened("sse");
    expect(sampleValue(await metrics.scrape(), "agentry_open_streams", { kind: "sse" })).toBe(2);
    close();
    close();
    expect(sampleValue(await metrics.scrape(), "agentry_open_streams", { kind: "sse" })).toBe(1);
  });

  it("names Connect codes as the Connect protocol does", () => {
    expect(codeName(undefined)).toBe("ok");
    expect(codeName(Code.NotFound)).toBe("not_found");
    expect(codeName(Code.ResourceExhausted)).toBe("resource_exhausted");
    expect(codeName(Code.Canceled)).toBe("canceled");
  });
});

describe("rpcInterceptors", () => {
  it("is empty when there are neither metrics nor traces", () => {
    expect(rpcInterceptors("client", undefined)).toEqual([]);
  });

  it("counts calls by service, method and code on both sides, and streams while they are served", async () => {
    const metrics = new Metrics({ processMetrics: false });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transport = createRouterTransport(
      (router) => {
        router.service(AgentService, {
          getAgent: async (request) => {
            if (request.id === "missing") throw new ConnectError("no such agent", Code.NotFound);
            return { agent: { id: request.id } };
          },
        });
        router.service(ConversationService, {
          async *streamMessage() {
            yield { event: { case: "delta", value: { text: "a" } } };
            await held;
            yield { event: { case: "delta", value: { text: "b" } } };
          },
        });
      },
      {
        router: { interceptors: rpcInterceptors("server", metrics) },
        transport: { interceptors: rpcInterceptors("client", metrics) },
      },
    );
    const agents = createClient(AgentService, transport);
    await agents.getAgent({ accountId: "acct_1", id: "agt_1" });
    await expect(agents.getAgent({ accountId: "acct_1", id: "missing" })).rejects.toThrow(/no such agent/);

    const stream = createClient(ConversationService, transport).streamMessage({ accountId: "acct_1" });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    let text = await metrics.scrape();
    expect(sampleValue(text, "agentry_open_streams", { kind: "rpc" })).toBe(1);
    release();
    while (!(await iterator.next()).done) {}

    text = await metrics.scrape();
    const get = { service: "AgentService", method: "GetAgent" };
    for (const side of ["client", "server"]) {
      expect(sampleValue(text, "agentry_rpc_calls_total", { ...get, side, code: "ok" })).toBe(1);
      expect(sampleValue(text, "agentry_rpc_calls_total", { ...get, side, code: "not_found" })).toBe(1);
      expect(
        sampleValue(text, "agentry_rpc_calls_total", { side, method: "StreamMessage", code: "ok" }),
      ).toBe(1);
    }
    expect(sampleValue(text, "agentry_rpc_duration_seconds_count", { ...get, side: "server" })).toBe(2);
    expect(sampleValue(text, "agentry_open_streams", { kind: "rpc" })).toBe(0);
  });
});
