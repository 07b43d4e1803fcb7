import { MESSAGE_BOUNDS, PAGE_LIMIT } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { Router } from "@koa/router";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { GatewayContext, GatewayState } from "../context.js";
import { readJsonBody } from "../http/body.js";
import { toAppError } from "../http/errors.js";
import { presentReply } from "../routes/messages.js";
import { presentAgent, SORT_FIELDS, SORT_ORDERS, STATUS_VALUES } from "../routes/present.js";
import { type LimitsMiddleware, StandardCaller } from "./access.js";

export const MCP_PATH = "/v1/mcp";

const agentShape = z.looseObject({
  id: z.string(),
  name: z.string(),
  status: z.string(),
});

/**
 * An error as an MCP tool result (`isError: true`), so the model using the tool reads what went wrong and what to
 * do, after the error code of this API.
 */
function toolError(gateway: GatewayContext, error: unknown): CallToolResult {
  const failure = toAppError(error);
  if (failure.code === "INTERNAL_ERROR")
    gateway.logger.error({ err: failure.cause ?? error }, "MCP tool failed");
  return {
    isError: true,
    content: [{ type: "text", text: `${failure.code}: ${failure.message}` }],
  };
}

async function tool(gateway: GatewayContext, work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    return toolError(gateway, error);
  }
}

/** The MCP server of one request: its tools act as the request's key, under the key's scopes and limits. */
function serverFor(caller: StandardCaller): McpServer {
  const { gateway, principal } = caller;
  const server = new McpServer({ name: "agentry", version: "1.0.0" });

  server.registerTool(
    "list_agents",
    {
      title: "List agents",
      description: "Lists the agents of this account, newest first (needs the agents:read scope).",
      inputSchema: {
        status: z.enum(["active", "inactive", "error"]).optional().describe("Only agents with this status."),
        page: z.number().int().min(1).optional().describe("Page number, from 1."),
        limit: z
          .number()
          .int()
          .min(1)
          .max(PAGE_LIMIT.max)
          .optional()
          .describe(`Agents per page, from 1 to ${PAGE_LIMIT.max}.`),
      },
      outputSchema: {
        agents: z.array(agentShape),
        pagination: z.object({
          page: z.number(),
          limit: z.number(),
          total: z.number(),
          hasMore: z.boolean(),
        }),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      tool(gateway, () =>
        caller.run("listAgents", undefined, async () => {
          const page = args.page ?? 1;
          const limit = args.limit ?? PAGE_LIMIT.default;
          const response = await gateway.agents.listAgents(
            {
              accountId: principal.accountId,
              page,
              pageSize: limit,
              ...(args.status ? { status: STATUS_VALUES[args.status] } : {}),
              sortBy: SORT_FIELDS.createdAt,
              order: SORT_ORDERS.desc,
            },
            caller.rpc,
          );
          const agents = response.agents.map((agent) => presentAgent(agent, gateway.config.PUBLIC_BASE_URL));
          const total = response.totalSize;
          const structured = {
            agents,
            pagination: { page, limit, total, hasMore: page < Math.ceil(total / limit) },
          };
          return {
            content: [{ type: "text", text: JSON.stringify(structured) }],
            structuredContent: structured,
          };
        }),
      ),
  );

  server.registerTool(
    "get_agent",
    {
      title: "Get an agent",
      description: "An agent of this account by its id: its character, model and status (needs agents:read).",
      inputSchema: { agentId: z.string().describe("The agent's id (agt_…).") },
      outputSchema: { agent: agentShape },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      tool(gateway, () =>
        caller.run("getAgent", args.agentId, async () => {
          const agent = presentAgent(await caller.agent(args.agentId), gateway.config.PUBLIC_BASE_URL);
          return {
            content: [{ type: "text", text: JSON.stringify(agent) }],
            structuredContent: { agent },
          };
        }),
      ),
  );

  server.registerTool(
    "send_message",
    {
      title: "Send a message to an agent",
      description:
        "Sends one message to an agent and answers with its reply (needs messages:send). The same userId and " +
        "roomId continue the same conversation; the turn is kept in the agent's history.",
      inputSchema: {
        agentId: z.string().describe("The agent's id (agt_…)."),
        text: z.string().min(1).max(MESSAGE_BOUNDS.textMaxLength).describe("The message text."),
        userId: z.string().optional().describe("Who is speaking, for conversation continuity."),
        roomId: z.string().optional().describe("The conversation room, for multi-user conversations."),
      },
      outputSchema: {
        messageId: z.string(),
        agentId: z.string(),
        userId: z.string().nullable(),
        roomId: z.string().nullable(),
        model: z.string(),
        finishReason: z.string(),
        usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() }),
      },
    },
    (args, extra) =>
      tool(gateway, () => {
        const message = caller.message({ text: args.text, userId: args.userId, roomId: args.roomId });
        return caller.run("sendMessage", args.agentId, async (state) => {
          const agent = await caller.agent(args.agentId);
          const reply = presentReply(
            await caller.send(agent, message, { signal: extra.signal, spend: state.spend }),
          );
          return {
            content: [{ type: "text", text: reply.text }],
            structuredContent: {
              messageId: reply.id,
              agentId: reply.agentId,
              userId: reply.userId,
              roomId: reply.roomId,
              model: reply.model,
              finishReason: reply.finishReason,
              usage: reply.usage,
            },
          };
        });
      }),
  );
  return server;
}

/**
 * The MCP server (Streamable HTTP, stateless: every POST carries its own key and needs no session), so any MCP
 * client reaches the account's agents with a base URL and an API key as its bearer token.
 */
export function mcpRoutes(
  router: Router<GatewayState>,
  gateway: GatewayContext,
  limits: LimitsMiddleware | undefined,
): void {
  router.post(MCP_PATH, async (ctx) => {
    const caller = await StandardCaller.of(gateway, ctx, limits);
    const body = await readJsonBody(ctx);
    const server = serverFor(caller);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    ctx.respond = false;
    ctx.res.once("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, body);
  });
  // Stateless: there is no session to hold a server-to-client stream open on, nor one to end.
  router.register(MCP_PATH, ["GET", "DELETE"], (ctx) => {
    throw new AppError(
      "METHOD_NOT_ALLOWED",
      `${ctx.method} ${MCP_PATH} is not served: this MCP server is stateless; send each request with POST.`,
    );
  });
}
