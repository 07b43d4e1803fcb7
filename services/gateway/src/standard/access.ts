import { type Charge, replyUsage } from "@agentry/budgets";
import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { type Agent, AgentStatus, AgentView, type Reply } from "@agentry/proto";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import type { CallOptions } from "@connectrpc/connect";
import type { Middleware, ParameterizedContext } from "koa";
import type { z } from "zod";
import type { GatewayContext, GatewayState, Principal } from "../context.js";
import { requireScope } from "../http/auth.js";
import { toAppError } from "../http/errors.js";
import { agentRoutes } from "../routes/agents.js";
import type { Route, ServedRoute } from "../routes/define.js";
import { messageRoutes } from "../routes/messages.js";
import { parseOrThrow } from "../validation/issues.js";
import { sendMessageBody } from "../validation/messages.js";

/** The limits of a REST operation, as the composition root supplies them (see `buildApp`). */
export type LimitsMiddleware = (route: ServedRoute) => Middleware<GatewayState>;

/** The REST operations the standard protocols stand in for: their scopes and limits are these operations' own. */
export type Operation = "listAgents" | "getAgent" | "sendMessage";

/** A message as `StandardCaller.message` checked it. */
export type CheckedMessage = z.output<typeof sendMessageBody>;

const OPERATIONS: Record<Operation, [Route["method"], string, Route[]]> = {
  listAgents: ["GET", "/v1/agents", agentRoutes],
  getAgent: ["GET", "/v1/agents/:agentId", agentRoutes],
  sendMessage: ["POST", "/v1/agents/:agentId/messages", messageRoutes],
};

function routeOf(operation: Operation): Route {
  const [method, path, routes] = OPERATIONS[operation];
  const route = routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`The REST route ${method} ${path} is not declared.`);
  return route;
}

/**
 * A caller of a standard protocol (MCP, A2A): its key, checked as the REST API checks it, and the means to run
 * an operation under that operation's scope and limits.
 */
export class StandardCaller {
  readonly rpc: CallOptions;

  private constructor(
    readonly gateway: GatewayContext,
    readonly principal: Principal,
    private readonly ctx: ParameterizedContext<GatewayState>,
    private readonly limits: LimitsMiddleware | undefined,
  ) {
    this.rpc = { headers: { "x-request-id": ctx.state.requestId }, timeoutMs: gateway.config.RPC_TIMEOUT_MS };
  }

  /** Authenticates the request's `Authorization: Bearer` key: 401 in the error envelope when it is not valid. */
  static async of(
    gateway: GatewayContext,
    ctx: ParameterizedContext<GatewayState>,
    limits: LimitsMiddleware | undefined,
  ): Promise<StandardCaller> {
    const rpc = {
      headers: { "x-request-id": ctx.state.requestId },
      timeoutMs: gateway.config.RPC_TIMEOUT_MS,
    };
    const principal = await gateway.auth.authenticate(ctx.get("authorization"), rpc);
    if (principal.keyId !== "") gateway.keyUsage.record(principal.keyId);
    ctx.state.principal = principal;
    return new StandardCaller(gateway, principal, ctx, limits);
  }

  /**
   * Runs `work` as the REST operation would run: the key must hold its scope (403 FORBIDDEN naming it), then its
   * rate limits and, for messages, a concurrency slot of the agent held while `work` runs.
   */
  async run<T>(
    operation: Operation,
    agentId: string | undefined,
    work: (state: GatewayState) => Promise<T>,
  ): Promise<T> {
    const route = routeOf(operation);
    if (route.scope) requireScope(this.principal, route.scope);
    const middleware: Middleware<GatewayState> | undefined = this.limits?.(route);
    if (!middleware) return work(this.ctx.state);
    // The limits read the caller and the agent from a request context; each operation of a protocol request
    // (several in one JSON-RPC batch) gets its own, so slots are neither shared nor left held.
    const outer = this.ctx;
    const scoped = {
      state: { requestId: outer.state.requestId, principal: this.principal },
      params: agentId ? { agentId } : {},
      set: outer.set.bind(outer),
      res: outer.res,
    } as unknown as ParameterizedContext<GatewayState>;
    let result: T | undefined;
    await middleware(scoped, async () => {
      result = await work(scoped.state);
    });
    return result as T;
  }

  /** The account's agent, or 404 AGENT_NOT_FOUND. */
  async agent(agentId: string): Promise<Agent> {
    if (!isId("agent", agentId))
      throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(agentId)} does not exist.`);
    // The JSON view, which a send passes on to the conversation service as it came (the messages route's).
    const { agent } = await this.gateway.agents.getAgent(
      { accountId: this.principal.accountId, id: agentId, view: AgentView.JSON },
      this.rpc,
    );
    if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${agentId} does not exist.`);
    return agent;
  }

  /**
   * A message checked against the bounds of `POST /v1/agents/{agentId}/messages` (400 INVALID_REQUEST naming
   * each problem): checked before `run` admits the send, as that route checks its body before its budgets.
   */
  message(message: {
    text: string;
    userId?: string | undefined;
    roomId?: string | undefined;
  }): CheckedMessage {
    return parseOrThrow(
      sendMessageBody,
      Object.fromEntries(Object.entries(message).filter(([, value]) => value !== undefined)),
      "arguments",
    );
  }

  /**
   * One turn with the agent through the conversation service, as `POST /v1/agents/{agentId}/messages` makes it:
   * the same bounds on the text and ids (`message`), history, usage (attributed to this key) and the agent's
   * health.
   */
  async send(
    agent: Agent,
    body: CheckedMessage,
    options: {
      signal?: AbortSignal;
      onText?: (messageId: string, text: string) => void;
      /** The send's budget charge (the state `run` hands its work), settled with the reply's usage. */
      spend?: Charge | undefined;
    } = {},
  ): Promise<Reply> {
    if (agent.status === AgentStatus.INACTIVE) {
      throw new AppError(
        "AGENT_INACTIVE",
        `Agent ${agent.id} is inactive; set its status to 'active' to send it messages.`,
      );
    }
    const request = {
      accountId: this.principal.accountId,
      agent,
      text: body.text,
      ...(body.userId !== undefined ? { userId: body.userId } : {}),
      ...(body.roomId !== undefined ? { roomId: body.roomId } : {}),
      requestId: this.ctx.state.requestId,
      apiKeyId: this.principal.keyId,
    };
    const call = {
      ...this.rpc,
      timeoutMs: this.gateway.config.MESSAGE_TIMEOUT_MS,
      ...(options.signal ? { signal: options.signal } : {}),
    };
    try {
      const reply = options.onText
        ? await this.streamed(request, call, options.onText)
        : (await this.gateway.conversations.sendMessage(request, call)).reply!;
      await options.spend?.settle(replyUsage(reply));
      if (!reply.fallback) await this.reportHealth(agent, null);
      return reply;
    } catch (error) {
      const failure = toAppError(error);
      await this.reportHealth(agent, failure);
      throw failure;
    }
  }

  /** The turn as a stream: each piece of the reply's text to `onText` as it comes, then the complete reply. */
  private async streamed(
    request: Parameters<GatewayContext["conversations"]["streamMessage"]>[0],
    call: CallOptions,
    onText: (messageId: string, text: string) => void,
  ): Promise<Reply> {
    let messageId = "";
    for await (const { event } of this.gateway.conversations.streamMessage(request, call)) {
      if (event.case === "started") messageId = event.value.messageId;
      else if (event.case === "delta") onText(messageId, event.value.text);
      else if (event.case === "completed") return event.value;
    }
    throw new AppError("AGENT_UNAVAILABLE", "The reply stream ended before it was complete.");
  }

  /** A lasting model failure puts the agent in `error`; a success takes it out (as the messages route does). */
  private async reportHealth(agent: Agent, failure: AppError | null): Promise<void> {
    if (failure === null && agent.status !== AgentStatus.ERROR) return;
    if (failure !== null && failure.code !== "MODEL_ERROR") return;
    try {
      await this.gateway.agents.reportAgentHealth(
        {
          accountId: this.principal.accountId,
          id: agent.id,
          ...(failure
            ? { failure: { code: failure.code, message: failure.message, time: timestampNow() } }
            : {}),
        },
        this.rpc,
      );
    } catch (error) {
      this.gateway.logger.warn({ err: error, agentId: agent.id }, "could not record the agent's health");
    }
  }
}
