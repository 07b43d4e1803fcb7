import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";
import type { MessageJson } from "./history-helpers.js";

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;
const clients: Client[] = [];

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
});
beforeEach(() => openai.reset());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** The official MCP client over Streamable HTTP, with the API key as its bearer token. */
async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "agentry-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${h.url}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function newAgent(name: string, key = tenant.key): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key,
    body: { name, bio: ["Counts things"], modelProvider: "openai", model: "gpt-4o-mini" },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

describe("MCP at /v1/mcp", () => {
  it("lists the three tools with their input and output schemas", async () => {
    const client = await connect(tenant.key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["get_agent", "list_agents", "send_message"]);
    const send = tools.find((tool) => tool.name === "send_message")!;
    expect(send.inputSchema.required).toEqual(["agentId", "text"]);
    expect(Object.keys(send.inputSchema.properties ?? {}).sort()).toEqual([
      "agentId",
      "roomId",
      "text",
      "userId",
    ]);
    expect(send.outputSchema?.properties).toHaveProperty("messageId");
  });

  it("lists and gets the account's agents, not another account's", async () => {
    const own = await newAgent("Ada");
    const other = await h.tenant();
    const foreign = await newAgent("Eve", other.key);
    const client = await connect(tenant.key);

    const list = (await client.callTool({ name: "list_agents", arguments: {} })) as CallToolResult;
    expect(list.isError).toBeFalsy();
    const agents = (list.structuredContent as { agents: { id: string; name: string }[] }).agents;
    expect(agents.map((agent) => agent.id)).toContain(own);
    expect(agents.map((agent) => agent.id)).not.toContain(foreign);

    const got = (await client.callTool({ name: "get_agent", arguments: { agentId: own } })) as CallToolResult;
    expect(got.isError).toBeFalsy();
    expect(got.structuredContent).toMatchObject({ agent: { id: own, name: "Ada", status: "active" } });
    expect(JSON.parse(textOf(got))).toMatchObject({ id: own, name: "Ada" });

    const missing = (await client.callTool({
      name: "get_agent",
      arguments: { agentId: foreign },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("AGENT_NOT_FOUND");
  });

  it("sends a message: the reply's text as content, its id in structured content, the turn in history", async () => {
    const agentId = await newAgent("Grace");
    openai.reply("Forty-two.");
    const client = await connect(tenant.key);
    const result = (await client.callTool({
      name: "send_message",
      arguments: { agentId, text: "What is the answer?", userId: "mcp-user", roomId: "mcp-room" },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("Forty-two.");
    const structured = result.structuredContent as { messageId: string; usage: { totalTokens: number } };
    expect(structured).toMatchObject({
      agentId,
      userId: "mcp-user",
      roomId: "mcp-room",
      model: "gpt-4o-mini",
    });
    expect(structured.messageId).toMatch(/^msg_/);
    expect(structured.usage.totalTokens).toBeGreaterThan(0);

    const history = await h.request<{ data: MessageJson[] }>(
      "GET",
      `/v1/agents/${agentId}/messages?userId=mcp-user&roomId=mcp-room&order=asc`,
      { key: tenant.key },
    );
    expect(history.body.data.map((m) => [m.role, m.text])).toEqual([
      ["user", "What is the answer?"],
      ["assistant", "Forty-two."],
    ]);
    expect(history.body.data[1]!.id).toBe(structured.messageId);
    const usage = await h.request<{ data: { totals: { messages: number } } }>(
      "GET",
      `/v1/agents/${agentId}/usage`,
      { key: tenant.key },
    );
    expect(JSON.stringify(usage.body.data)).toContain('"messages":1');
  });

  it("answers errors as tool results: bad arguments, an unknown agent, an inactive agent", async () => {
    const client = await connect(tenant.key);
    const unknown = (await client.callTool({
      name: "send_message",
      arguments: { agentId: "agt_nope", text: "Hi" },
    })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("AGENT_NOT_FOUND");

    const agentId = await newAgent("Idle");
    await h.request("PATCH", `/v1/agents/${agentId}`, { key: tenant.key, body: { status: "inactive" } });
    const inactive = (await client.callTool({
      name: "send_message",
      arguments: { agentId, text: "Hi" },
    })) as CallToolResult;
    expect(inactive.isError).toBe(true);
    expect(textOf(inactive)).toContain("AGENT_INACTIVE");

    const empty = (await client.callTool({
      name: "send_message",
      arguments: { agentId, text: "" },
    })) as CallToolResult;
    expect(empty.isError).toBe(true);
    expect(openai.requests).toHaveLength(0);
  });

  it("honours the key's scopes: a read-only key lists agents but is refused send_message, naming the scope", async () => {
    const agentId = await newAgent("Lin");
    const readOnly = await tenant.keyWith(["agents:read"]);
    const client = await connect(readOnly.key);
    const list = (await client.callTool({ name: "list_agents", arguments: {} })) as CallToolResult;
    expect(list.isError).toBeFalsy();
    const refused = (await client.callTool({
      name: "send_message",
      arguments: { agentId, text: "Hi" },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("FORBIDDEN");
    expect(textOf(refused)).toContain("messages:send");
    expect(openai.requests).toHaveLength(0);

    const sendOnly = await tenant.keyWith(["messages:send"]);
    const other = await connect(sendOnly.key);
    const listRefused = (await other.callTool({ name: "list_agents", arguments: {} })) as CallToolResult;
    expect(listRefused.isError).toBe(true);
    expect(textOf(listRefused)).toContain("agents:read");
  });

  it("spends the agent's message limit, and answers past it with a tool error", async () => {
    const limited = await h.tenant({ limits: { messagesPerMinute: 1 } });
    const agentId = await newAgent("Mo", limited.key);
    const client = await connect(limited.key);
    openai.reply("Once.");
    const first = (await client.callTool({
      name: "send_message",
      arguments: { agentId, text: "One" },
    })) as CallToolResult;
    expect(textOf(first)).toBe("Once.");
    const second = (await client.callTool({
      name: "send_message",
      arguments: { agentId, text: "Two" },
    })) as CallToolResult;
    expect(second.isError).toBe(true);
    expect(textOf(second)).toMatch(/^RATE_LIMIT_EXCEEDED: /);
    expect(openai.requests).toHaveLength(1);
  });

  it("refuses a request without a valid key with 401 before any tool runs", async () => {
    await expect(connect("")).rejects.toThrow();
    const res = await h.request<{ error: { code: string } }>("POST", "/v1/mcp", {
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
    const get = await h.request<{ error: { code: string } }>("GET", "/v1/mcp", { key: tenant.key });
    expect(get.status).toBe(405);
  });
});
