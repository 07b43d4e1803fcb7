import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createGuardedFetch, type GuardedFetcher } from "@agentry/outbound";
import type { PluginHost, Tool, ToolContext } from "@agentry/plugin-kit";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMcpPlugin, type McpConfig, mcpPlugin } from "../src/index.js";

const TOKEN = "mcp-token-5f2a9c";
let server: Server;
let base: string;
let listCalls = 0;
const seenAuth: (string | undefined)[] = [];

/** A real MCP server (the SDK's server side), stateless: a server and transport per request. */
function mcpServer(): McpServer {
  const mcp = new McpServer({ name: "test-server", version: "1.0.0" });
  mcp.registerTool(
    "add",
    { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  mcp.registerTool(
    "weather.lookup",
    { description: "Weather in a city", inputSchema: { city: z.string() } },
    async ({ city }) => ({
      content: [{ type: "text", text: `sunny in ${city}` }],
      structuredContent: { city, sky: "sunny" },
    }),
  );
  mcp.registerTool("fail", { description: "Always fails" }, async () => {
    throw new Error("the upstream database is down");
  });
  mcp.registerTool("hang", { description: "Never answers" }, () => new Promise(() => {}));
  return mcp;
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const auth = req.headers.authorization;
    seenAuth.push(auth);
    if (req.url === "/private" && auth !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "unauthorized" }));
      return;
    }
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = raw ? JSON.parse(raw) : undefined;
    if (body?.method === "tools/list") listCalls++;
    const mcp = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

const fetchers: GuardedFetcher[] = [];
afterAll(async () => {
  server.close();
  await Promise.all(fetchers.map((each) => each.close()));
});

function contextFor(
  config: unknown,
  options: { secrets?: Record<string, string>; allowPrivateNetworks?: boolean; signal?: AbortSignal } = {},
) {
  const guarded = createGuardedFetch({ allowPrivateNetworks: options.allowPrivateNetworks ?? true });
  fetchers.push(guarded);
  return {
    accountId: "acct_1",
    agentId: "agt_1",
    config: mcpPlugin.config.parse(config),
    secrets: options.secrets ?? {},
    signal: options.signal ?? new AbortController().signal,
    deadline: Date.now() + 10_000,
    host: { fetch: guarded.fetch, now: () => new Date() } as PluginHost,
  } as ToolContext<McpConfig>;
}

const byName = (tools: readonly Tool<McpConfig>[], name: string) => tools.find((tool) => tool.name === name)!;

describe("mcp plugin", () => {
  it("checks its config and names the secret it reads", () => {
    expect(mcpPlugin.config.safeParse({}).success).toBe(false);
    expect(mcpPlugin.config.safeParse({ url: "ftp://x.example/" }).success).toBe(false);
    expect(
      mcpPlugin.config.safeParse({ url: "https://x.example/mcp", authSecret: "has space" }).success,
    ).toBe(false);
    const config = mcpPlugin.config.parse({ url: "https://x.example/mcp", authSecret: "MCP_TOKEN" });
    expect(mcpPlugin.secretsFor?.(config)).toEqual(["MCP_TOKEN"]);
    expect(mcpPlugin.secretsFor?.(mcpPlugin.config.parse({ url: "https://x.example/mcp" }))).toEqual([]);
  });

  it("lists the server's tools with their schemas, names made safe for models", async () => {
    const tools = await createMcpPlugin().toolsFor!(contextFor({ url: `${base}/mcp` }));
    expect(tools.map((tool) => tool.name).sort()).toEqual(["add", "fail", "hang", "weather_lookup"]);
    expect(byName(tools, "add")).toMatchObject({
      description: "Add two numbers",
      inputSchema: expect.objectContaining({ type: "object", required: ["a", "b"] }),
    });
  });

  it("calls a tool and answers its text or structured content", async () => {
    const context = contextFor({ url: `${base}/mcp` });
    const tools = await createMcpPlugin().toolsFor!(context);
    await expect(byName(tools, "add").call({ a: 2, b: 40 }, context)).resolves.toBe("42");
    await expect(byName(tools, "weather_lookup").call({ city: "Oslo" }, context)).resolves.toEqual({
      city: "Oslo",
      sky: "sunny",
    });
  });

  it("reports the server's errors as the tool's, with its message", async () => {
    const context = contextFor({ url: `${base}/mcp` });
    const tools = await createMcpPlugin().toolsFor!(context);
    await expect(byName(tools, "fail").call({}, context)).rejects.toThrow(/the upstream database is down/);
    await expect(byName(tools, "add").call({ a: "two" }, context)).rejects.toThrow(
      /Invalid arguments for tool add/,
    );
  });

  it("stops a call at its deadline", async () => {
    const plugin = createMcpPlugin({ callTimeoutMs: 300 });
    const context = contextFor({ url: `${base}/mcp` });
    const tools = await plugin.toolsFor!(context);
    const started = Date.now();
    await expect(byName(tools, "hang").call({}, context)).rejects.toThrow(/failed/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("sends the named secret as a Bearer token, and says so when it is not set", async () => {
    const plugin = createMcpPlugin();
    const config = { url: `${base}/private`, authSecret: "MCP_TOKEN" };
    const context = contextFor(config, { secrets: { MCP_TOKEN: TOKEN } });
    const tools = await plugin.toolsFor!(context);
    await expect(byName(tools, "add").call({ a: 1, b: 1 }, context)).resolves.toBe("2");
    expect(seenAuth.at(-1)).toBe(`Bearer ${TOKEN}`);

    await expect(plugin.toolsFor!(contextFor(config))).rejects.toThrow(/no secret named MCP_TOKEN/);
    const wrong = plugin.toolsFor!(contextFor(config, { secrets: { MCP_TOKEN: "wrong-token-x" } }));
    await expect(wrong).rejects.toThrow(/MCP server at .*\/private failed/);
    await expect(wrong).rejects.not.toThrow(/wrong-token-x/);
  });

  it("keeps a server's tool list for its TTL, per URL and credential", async () => {
    let clock = 1_000_000;
    const plugin = createMcpPlugin({ toolsTtlMs: 60_000, now: () => clock });
    const context = contextFor({ url: `${base}/mcp` });
    const before = listCalls;
    await plugin.toolsFor!(context);
    await plugin.toolsFor!(context);
    expect(listCalls - before).toBe(1);
    await plugin.toolsFor!(contextFor({ url: `${base}/mcp?tenant=2` }));
    expect(listCalls - before).toBe(2);
    clock += 60_001;
    await plugin.toolsFor!(context);
    expect(listCalls - before).toBe(3);
  });

  it("is refused by the outbound guard for a private server unless private networks are allowed", async () => {
    const port = new URL(base).port;
    const plugin = createMcpPlugin();
    await expect(
      plugin.toolsFor!(contextFor({ url: `https://127.0.0.1:${port}/mcp` }, { allowPrivateNetworks: false })),
    ).rejects.toThrow(/private, loopback or reserved address/);
    await expect(
      plugin.toolsFor!(contextFor({ url: `${base}/mcp` }, { allowPrivateNetworks: false })),
    ).rejects.toThrow(/https URL/);
    await expect(
      plugin.toolsFor!(contextFor({ url: `https://localhost:${port}/mcp` }, { allowPrivateNetworks: false })),
    ).rejects.toThrow(/localhost resolves to a private/);
  });
});
