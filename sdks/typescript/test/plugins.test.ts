import { describe, expect, it } from "vitest";
import { AgentryError, type MessageStreamEvent, NotFoundError, type ToolCall } from "../src/index.js";
import { AGENT_ID, clientWith, frame, mockFetch, reply, sse } from "./helpers.js";
import { fail, localServer, ok } from "./server.js";

const calculator = {
  name: "calculator",
  version: "1.0.0",
  description: "Exact decimal arithmetic.",
  configSchema: { type: "object", properties: { precision: { type: "integer" } } },
  secrets: [],
  tools: [
    {
      name: "calculate",
      description: "Compute an expression.",
      inputSchema: { type: "object", properties: { expression: { type: "string" } } },
    },
  ],
};
const secret = { name: "MCP_TOKEN", updatedAt: "2026-01-01T00:00:00.000Z" };

describe("plugins", () => {
  it("lists the catalogue", async () => {
    const server = await localServer(ok([calculator]));
    expect(await server.client().plugins.list()).toEqual([calculator]);
    expect(server.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(["GET /v1/plugins"]);
  });
});

describe("agents.secrets", () => {
  it("maps set, list and delete to their routes, the value only in the PUT's body", async () => {
    const server = await localServer(ok(secret), ok([secret]), ok({ name: "MCP_TOKEN", deleted: true }));
    const secrets = server.client().agents.secrets;
    expect(await secrets.set(AGENT_ID, "MCP_TOKEN", { value: "s3cret" })).toEqual(secret);
    expect(await secrets.list(AGENT_ID)).toEqual([secret]);
    expect(await secrets.delete(AGENT_ID, "MCP_TOKEN")).toEqual({ name: "MCP_TOKEN", deleted: true });
    expect(server.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      `PUT /v1/agents/${AGENT_ID}/secrets/MCP_TOKEN`,
      `GET /v1/agents/${AGENT_ID}/secrets`,
      `DELETE /v1/agents/${AGENT_ID}/secrets/MCP_TOKEN`,
    ]);
    expect(server.requests[0]!.body).toEqual({ value: "s3cret" });
    expect(server.requests[1]!.body).toBeUndefined();
  });

  it("sends a set with an Idempotency-Key, the same on its retry", async () => {
    const server = await localServer(fail(503, "AGENT_UNAVAILABLE"), ok(secret));
    await server.client({ maxRetryDelay: 1 }).agents.secrets.set(AGENT_ID, "MCP_TOKEN", { value: "s3cret" });
    const keys = server.requests.map((r) => r.headers["idempotency-key"]);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it("encodes a name as one path segment and refuses an empty one before sending", async () => {
    const server = await localServer(fail(404, "SECRET_NOT_FOUND"));
    const secrets = server.client().agents.secrets;
    await expect(secrets.delete(AGENT_ID, "a/b c")).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests[0]!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/secrets/a%2Fb%20c`);
    await expect(secrets.set(AGENT_ID, "", { value: "x" })).rejects.toBeInstanceOf(AgentryError);
    expect(server.requests).toHaveLength(1);
  });
});

describe("tool calls", () => {
  const call = { id: "call_1", name: "calculator__calculate", arguments: { expression: "6 * 7" } };
  const result: ToolCall = { ...call, ok: true, output: { result: "42" } };
  const failed: ToolCall = { ...call, id: "call_2", ok: false, error: "Division by zero" };
  const completed = reply({ text: "42", toolCalls: [result, failed] });

  it("yields tool.call and tool.result as typed events between the deltas; the text is the deltas only", async () => {
    const frames = [
      frame(1, "message.started", { id: "msg_1", agentId: AGENT_ID, userId: null, roomId: null }),
      frame(2, "message.delta", { text: "Let me see. " }),
      frame(3, "tool.call", call),
      frame(4, "tool.call", { ...call, id: "call_2" }),
      frame(5, "tool.result", result),
      frame(6, "tool.result", failed),
      frame(7, "message.delta", { text: "42" }),
      frame(8, "message.completed", completed),
    ];
    const { fetch } = mockFetch(() => sse(frames));
    const stream = clientWith(fetch).agents.messages.stream(AGENT_ID, { text: "6 * 7?" });
    const events: MessageStreamEvent[] = [];
    const outcomes: string[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === "tool.result") outcomes.push(event.data.ok ? "ok" : event.data.error);
    }
    expect(events.map((e) => `${e.id} ${e.type}`)).toEqual([
      "1 message.started",
      "2 message.delta",
      "3 tool.call",
      "4 tool.call",
      "5 tool.result",
      "6 tool.result",
      "7 message.delta",
      "8 message.completed",
    ]);
    expect(events[2]).toEqual({ type: "tool.call", id: "3", data: call });
    expect(events[4]).toEqual({ type: "tool.result", id: "5", data: result });
    expect(outcomes).toEqual(["ok", "Division by zero"]);
    expect(await stream.text()).toBe("Let me see. 42");
    expect((await stream.finalMessage()).toolCalls).toEqual([result, failed]);
  });

  it("carries toolCalls on a reply", async () => {
    const { fetch } = mockFetch(() => Response.json({ success: true, data: completed }));
    const sent = await clientWith(fetch).agents.messages.send(AGENT_ID, { text: "6 * 7?" });
    expect(sent.toolCalls).toEqual([result, failed]);
  });
});
