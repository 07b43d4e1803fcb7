import { Writable } from "node:stream";
import { createLogger, currentRequestId } from "@agentry/logging";
import { AgentService, ConversationService } from "@agentry/proto";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestScopeInterceptor, rpcInterceptors } from "../src/rpc.js";
import { OtlpCollector } from "../src/testing/index.js";
import { initTracing, inSpan, SpanKind, type Tracing, traceMethods, tracer } from "../src/tracing.js";

let collector: OtlpCollector;
let tracing: Tracing;

beforeAll(async () => {
  collector = await new OtlpCollector().start();
  tracing = await initTracing({
    serviceName: "agentry-test",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "20" },
  });
});

afterAll(async () => {
  await tracing?.shutdown();
  await collector?.close();
});

describe("initTracing", () => {
  it("stays off without an OTLP endpoint", async () => {
    const off = await initTracing({ serviceName: "x", env: {} });
    expect(off.enabled).toBe(false);
    await off.shutdown();
    expect(tracing.enabled).toBe(true);
  });

  it("exports one trace across an RPC: caller span, client and server spans, and the store call", async () => {
    const store = traceMethods(
      {
        calls: 0,
        async getAgent(id: string) {
          this.calls += 1;
          return { id };
        },
      },
      "registry.store",
    );
    const transport = createRouterTransport(
      (router) =>
        router.service(AgentService, {
          getAgent: async (request) => ({ agent: await store.getAgent(request.id) }),
        }),
      {
        router: { interceptors: rpcInterceptors("server", undefined) },
        transport: { interceptors: rpcInterceptors("client", undefined) },
      },
    );
    const agents = createClient(AgentService, transport);
    await inSpan("GET /v1/agents/:agentId", SpanKind.SERVER, {}, () =>
      agents.getAgent({ accountId: "acct_1", id: "agt_1" }),
    );
    expect(store.calls).toBe(1);
    // Outside any trace, the store call makes no span.
    await store.getAgent("agt_2");

    const storeSpan = await collector.waitFor((span) => span.name === "registry.store.getAgent");
    const root = await collector.waitFor((span) => span.name === "GET /v1/agents/:agentId");
    const name = "agentry.registry.v1.AgentService/GetAgent";
    const client = await collector.waitFor((span) => span.name === name && span.kind === 3);
    const server = await collector.waitFor((span) => span.name === name && span.kind === 2);
    expect(root.service).toBe("agentry-test");
    expect(new Set([root, client, server, storeSpan].map((span) => span.traceId)).size).toBe(1);
    expect(root.parentSpanId).toBe("");
    expect(client.parentSpanId).toBe(root.spanId);
    expect(server.parentSpanId).toBe(client.spanId);
    expect(storeSpan.parentSpanId).toBe(server.spanId);
    expect(server.attributes["rpc.method"]).toBe("GetAgent");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(collector.spans.filter((span) => span.name === "registry.store.getAgent")).toHaveLength(1);
  });

  it("records a failed call as an error span", async () => {
    const failing = traceMethods({ boom: async () => Promise.reject(new Error("disk full")) }, "store");
    await expect(inSpan("outer", SpanKind.INTERNAL, {}, () => failing.boom())).rejects.toThrow("disk full");
    const span = await collector.waitFor((s) => s.name === "store.boom");
    expect(span.attributes["error.type"]).toBe("Error");
    expect(tracer()).toBeDefined();
  });
});

describe("requestScopeInterceptor", () => {
  it("scopes the log lines of a streamed reply to the caller's request id, step by step", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      service: "test",
      destination: new Writable({
        write(chunk, _encoding, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    });
    const seen: (string | undefined)[] = [];
    const transport = createRouterTransport(
      (router) =>
        router.service(ConversationService, {
          async *streamMessage() {
            for (const text of ["a", "b"]) {
              await new Promise((resolve) => setTimeout(resolve, 5));
              seen.push(currentRequestId());
              logger.info({ text }, "delta");
              yield { event: { case: "delta", value: { text } } };
            }
          },
        }),
      { router: { interceptors: [requestScopeInterceptor] } },
    );
    const events = createClient(ConversationService, transport).streamMessage(
      {},
      { headers: { "x-request-id": "req_stream_1" } },
    );
    for await (const _ of events) {
    }
    expect(seen).toEqual(["req_stream_1", "req_stream_1"]);
    expect(lines.map((line) => line.requestId)).toEqual(["req_stream_1", "req_stream_1"]);
  });
});
