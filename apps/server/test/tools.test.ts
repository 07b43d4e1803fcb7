import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

/**
 * The built-in plugins in real turns: the all-in-one server as `pnpm start` composes it (its catalogue, the
 * embedded registry's secrets and knowledge index, the guarded fetch), a real MCP server (the official SDK's
 * server side) on loopback, and the fake OpenAI scripted to call their tools as the real API does.
 */
const MCP_TOKEN = "mcp-bearer-7c1d44e2";
let mcp: Server;
let mcpUrl: string;
const mcpAuth: (string | undefined)[] = [];
let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;

interface ToolCallJson {
  id: string;
  name: string;
  arguments: unknown;
  ok: boolean;
  output?: unknown;
  error?: string;
}

beforeAll(async () => {
  mcp = createServer(async (req, res) => {
    mcpAuth.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${MCP_TOKEN}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const server = new McpServer({ name: "inventory", version: "1.0.0" });
    server.registerTool(
      "stock",
      { description: "Units in stock of an item", inputSchema: { item: z.string() } },
      async ({ item }) => ({ content: [{ type: "text", text: `${item}: 42 units` }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
  });
  mcp.listen(0, "127.0.0.1");
  await once(mcp, "listening");
  mcpUrl = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp`;
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    // The MCP server and the http plugin's target are on loopback.
    ALLOW_PRIVATE_NETWORKS: "true",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
  mcp.close();
});
beforeEach(() => openai.reset());

async function newAgent(body: Record<string, unknown>): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Clerk", modelProvider: "openai", model: "gpt-4o-mini", ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

const send = (agentId: string, text: string) =>
  h.request<{ data: { text: string; toolCalls?: ToolCallJson[] } }>(
    "POST",
    `/v1/agents/${agentId}/messages`,
    {
      key: tenant.key,
      body: { text, userId: "u1" },
    },
  );

/** The tool messages the model was sent back in the request after the tool round. */
function toolResultsSent(request: number): unknown[] {
  const body = openai.requests[request]!.body as unknown as {
    messages: { role: string; content: unknown }[];
  };
  return body.messages.filter((message) => message.role === "tool").map((message) => message.content);
}

describe("the built-in plugins in a turn", () => {
  it("offers an agent its enabled plugins' tools, runs the calls the model makes and returns their answers", async () => {
    const agentId = await newAgent({
      knowledge: ["The office opens at 9am on weekdays.", "Parking is on level 2 of the north garage."],
      plugins: ["calculator", "knowledge", { name: "time", enabled: false }],
    });
    openai.callTools([
      { id: "c1", name: "calculator__calculate", arguments: { expression: "0.1 + 0.2" } },
      { id: "c2", name: "knowledge__search", arguments: { query: "parking garage" } },
    ]);
    openai.reply("0.3, and parking is on level 2.");
    const res = await send(agentId, "Sum and parking?");
    expect(res.status).toBe(200);
    const offered = (openai.requests[0]!.body as unknown as { tools: { function: { name: string } }[] })
      .tools;
    expect(offered.map((tool) => tool.function.name).sort()).toEqual([
      "calculator__calculate",
      "knowledge__search",
    ]);
    expect(res.body.data.text).toBe("0.3, and parking is on level 2.");
    expect(res.body.data.toolCalls).toEqual([
      {
        id: "c1",
        name: "calculator__calculate",
        arguments: { expression: "0.1 + 0.2" },
        ok: true,
        output: { expression: "0.1 + 0.2", result: "0.3" },
      },
      {
        id: "c2",
        name: "knowledge__search",
        arguments: { query: "parking garage" },
        ok: true,
        output: {
          query: "parking garage",
          hits: [{ index: 1, text: "Parking is on level 2 of the north garage." }],
          // The agent has no uploaded documents.
          documents: [],
        },
      },
    ]);
    expect(JSON.stringify(toolResultsSent(1))).toContain('\\"result\\":\\"0.3\\"');
  });

  it("calls a remote MCP server's tools with the agent's secret as a Bearer token, in a stream", async () => {
    const agentId = await newAgent({
      plugins: [{ name: "mcp", config: { url: mcpUrl, authSecret: "inventory" } }],
    });
    const put = await h.request("PUT", `/v1/agents/${agentId}/secrets/inventory`, {
      key: tenant.key,
      body: { value: MCP_TOKEN },
    });
    expect(put.status).toBe(200);
    openai.callTools([{ id: "m1", name: "mcp__stock", arguments: { item: "bolts" } }]);
    openai.reply("We have 42 bolts.");
    const response = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "Bolts?", userId: "u1", stream: true }),
    });
    const text = await response.text();
    const { events } = parseEventStream(text);
    const call = events.find((event) => event.event === "tool.call");
    const result = events.find((event) => event.event === "tool.result");
    expect(call?.data).toEqual({ id: "m1", name: "mcp__stock", arguments: { item: "bolts" } });
    expect(result?.data).toMatchObject({ id: "m1", name: "mcp__stock", ok: true });
    expect(JSON.stringify(result?.data)).toContain("bolts: 42 units");
    expect(events.at(-1)?.event).toBe("message.completed");
    expect(mcpAuth.at(-1)).toBe(`Bearer ${MCP_TOKEN}`);
    // The secret reached the MCP server and nothing else: not the stream, not the model.
    expect(text).not.toContain(MCP_TOKEN);
    for (const request of openai.requests) expect(JSON.stringify(request.body)).not.toContain(MCP_TOKEN);
  });

  it("reports a refused http destination to the model and still completes the turn", async () => {
    const agentId = await newAgent({
      plugins: [{ name: "http", config: { allow: ["https://api.example.com/"] } }],
    });
    openai.callTools([
      {
        id: "h1",
        name: "http__request",
        arguments: { url: "https://169.254.169.254.example.org/latest/meta-data" },
      },
    ]);
    openai.reply("I could not reach it.");
    const res = await send(agentId, "Fetch the metadata");
    expect(res.status).toBe(200);
    const [only] = res.body.data.toolCalls!;
    expect(only).toMatchObject({ id: "h1", name: "http__request", ok: false });
    expect(only!.error).toMatch(/not allowed/);
    expect(res.body.data.text).toBe("I could not reach it.");
  });
});
