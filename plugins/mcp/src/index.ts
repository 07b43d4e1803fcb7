import { createHash } from "node:crypto";
import {
  definePlugin,
  type GuardedFetch,
  type Plugin,
  type Tool,
  type ToolContext,
} from "@agentry/plugin-kit";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { z } from "zod";

const SECRET_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const config = z.object({
  /** The server's Streamable HTTP endpoint; http only reaches a deployment that allows private networks. */
  url: z
    .url({ protocol: /^https?$/, error: "must be the https URL of an MCP server's Streamable HTTP endpoint" })
    .max(2048),
  /** The agent secret sent as `Authorization: Bearer <value>`. */
  authSecret: z.string().regex(SECRET_NAME, "must be a secret name (1 to 64 of A-Z a-z 0-9 _ -)").optional(),
});

export type McpConfig = z.output<typeof config>;

type ServerTool = Awaited<ReturnType<Client["listTools"]>>["tools"][number];
type CallResult = Awaited<ReturnType<Client["callTool"]>>;

export interface McpPluginOptions {
  /** How long a server's tool list is kept, per URL and credential (default 5 minutes). */
  toolsTtlMs?: number;
  /** How many servers' lists are kept at most (default 1,000); the oldest go first. */
  maxCachedServers?: number;
  /** Milliseconds since the epoch; tests stand a clock in. */
  now?: () => number;
  /** The most one call of a server's tool may take (default 30 s); the turn's deadline caps it. */
  callTimeoutMs?: number;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,48}$/;

/** A server tool's name as models accept it: other characters become `_`, cut at 48. */
function localName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 48);
  return TOOL_NAME.test(cleaned) ? cleaned : "tool";
}

interface Connection {
  url: string;
  token: string | undefined;
  fetch: GuardedFetch;
  signal: AbortSignal;
}

type SdkModules = {
  Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
  StreamableHTTPClientTransport: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport;
};
let loaded: Promise<SdkModules> | undefined;

/**
 * The SDK's client, loaded at the first connection: processes that only list the catalogue (the gateways) never
 * pay for it (about a third of a second).
 */
function sdk(): Promise<SdkModules> {
  loaded ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ]).then(([client, transport]) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: transport.StreamableHTTPClientTransport,
  }));
  return loaded;
}

/** What went wrong talking to the server, in words for the model; never the credential. */
function serverError(url: string, error: unknown, token: string | undefined): Error {
  let message = error instanceof Error ? error.message : String(error);
  if (token) message = message.split(token).join("[secret]");
  return new Error(`the MCP server at ${url} failed: ${message}`);
}

/** Runs `use` with a client connected to the server, and closes it afterwards. */
async function withClient<T>(
  connection: Connection,
  timeoutMs: number,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const { Client, StreamableHTTPClientTransport } = await sdk();
  const transport = new StreamableHTTPClientTransport(new URL(connection.url), {
    fetch: (url, init) =>
      connection.fetch(url, {
        ...init,
        signal: init?.signal ? AbortSignal.any([init.signal, connection.signal]) : connection.signal,
      }),
    ...(connection.token
      ? { requestInit: { headers: { authorization: `Bearer ${connection.token}` } } }
      : {}),
  });
  const client = new Client({ name: "agentry", version: "1.0.0" });
  try {
    await client.connect(transport, { signal: connection.signal, timeout: timeoutMs });
    return await use(client);
  } catch (error) {
    throw serverError(connection.url, error, connection.token);
  } finally {
    await client.close().catch(() => {});
  }
}

/** The answer of a tool call as the model reads it: its structured content, else its text, else its parts. */
function answerOf(result: CallResult): unknown {
  if ("toolResult" in result) return result.toolResult;
  if (result.structuredContent !== undefined) return result.structuredContent;
  const parts = result.content ?? [];
  if (parts.every((part) => part.type === "text")) return parts.map((part) => part.text).join("\n");
  return parts.map((part) =>
    part.type === "text"
      ? part
      : { type: part.type, ...("mimeType" in part ? { mimeType: part.mimeType } : {}) },
  );
}

function errorText(result: CallResult): string {
  const parts = "content" in result && Array.isArray(result.content) ? result.content : [];
  const text = parts
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("\n");
  return text || "the tool reported an error";
}

/**
 * The `mcp` plugin: the tools of a remote MCP server (Streamable HTTP), listed when a turn starts and callable as
 * the agent's own. Every request goes through the host's guarded fetch. Lists are kept for a while per server URL
 * and credential, so a turn does not wait for one each time.
 */
export function createMcpPlugin(options: McpPluginOptions = {}): Plugin<McpConfig> {
  const ttlMs = options.toolsTtlMs ?? 5 * 60 * 1000;
  const maxServers = options.maxCachedServers ?? 1000;
  const now = options.now ?? Date.now;
  const callTimeoutMs = options.callTimeoutMs ?? 30_000;
  const cache = new Map<string, { expires: number; tools: readonly ServerTool[] }>();

  const connectionOf = (context: Omit<ToolContext<McpConfig>, "deadline">): Connection => {
    const { url, authSecret } = context.config;
    const token = authSecret ? context.secrets[authSecret] : undefined;
    if (authSecret && token === undefined) {
      throw new Error(`the agent has no secret named ${authSecret} for its MCP server`);
    }
    return { url, token, fetch: context.host.fetch, signal: context.signal };
  };

  const toolOf = (serverTool: ServerTool, name: string): Tool<McpConfig> => ({
    name,
    description: serverTool.description ?? serverTool.title ?? serverTool.name,
    inputSchema: serverTool.inputSchema,
    timeoutMs: callTimeoutMs,
    async call(args, context) {
      const connection = connectionOf(context);
      const timeout = Math.max(1, Math.min(callTimeoutMs, context.deadline - now()));
      const result = await withClient(connection, timeout, (client) =>
        client.callTool(
          { name: serverTool.name, arguments: (args ?? {}) as Record<string, unknown> },
          undefined,
          { signal: context.signal, timeout },
        ),
      );
      if (result.isError) throw new Error(errorText(result));
      return answerOf(result);
    },
  });

  return definePlugin<McpConfig>({
    name: "mcp",
    version: "1.0.0",
    description:
      "Connects the agent to a remote Model Context Protocol server over Streamable HTTP: its tools become the " +
      "agent's. Config: `url`, and `authSecret`, the name of an agent secret sent as a Bearer token.",
    config,
    secrets: [],
    secretsFor: (agentConfig) => (agentConfig.authSecret ? [agentConfig.authSecret] : []),
    tools: [],
    async toolsFor(context) {
      const connection = connectionOf(context);
      const key = `${connection.url}\n${connection.token ? createHash("sha256").update(connection.token).digest("hex") : ""}`;
      let entry = cache.get(key);
      if (!entry || entry.expires <= now()) {
        const tools = await withClient(connection, callTimeoutMs, async (client) => {
          const listed: ServerTool[] = [];
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor ? { cursor } : {}, { signal: context.signal });
            listed.push(...page.tools);
            cursor = page.nextCursor;
          } while (cursor && listed.length < 256);
          return listed;
        });
        cache.delete(key);
        entry = { expires: now() + ttlMs, tools };
        cache.set(key, entry);
        while (cache.size > maxServers) cache.delete(cache.keys().next().value as string);
      }
      const seen = new Set<string>();
      const tools: Tool<McpConfig>[] = [];
      for (const serverTool of entry.tools) {
        const name = localName(serverTool.name);
        if (seen.has(name)) continue;
        seen.add(name);
        tools.push(toolOf(serverTool, name));
      }
      return tools;
    },
  });
}

export const mcpPlugin = createMcpPlugin();
