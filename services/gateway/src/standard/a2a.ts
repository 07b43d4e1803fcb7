import type { IncomingMessage, ServerResponse } from "node:http";
import {
  A2A_PROTOCOL_VERSION,
  A2A_VERSION_HEADER,
  AgentCard,
  type AgentSkill,
  Role,
  TaskState,
} from "@a2a-js/sdk";
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
  type User,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler } from "@a2a-js/sdk/server/express";
import { AppError } from "@agentry/errors";
import { type Agent, agentSpecJson } from "@agentry/proto";
import type { Router } from "@koa/router";
import express, { type NextFunction, type RequestHandler } from "express";
import type { GatewayContext, GatewayState } from "../context.js";
import { requireScope } from "../http/auth.js";
import { readJsonBody } from "../http/body.js";
import { toAppError } from "../http/errors.js";
import { taskOwner } from "./a2a-tasks.js";
import { type LimitsMiddleware, StandardCaller } from "./access.js";

export const A2A_PATH = "/v1/a2a/:agentId";
const CARD_PATH = "/.well-known/agent-card.json";

/** The caller of one A2A request, as the SDK's user: tasks are kept per account and agent, never seen by others. */
class A2AUser implements User {
  constructor(
    readonly caller: StandardCaller,
    readonly agent: Agent,
  ) {}

  get isAuthenticated(): boolean {
    return true;
  }

  get userName(): string {
    return `${this.caller.principal.accountId}/${this.agent.id}`;
  }
}

/** The card of one agent: served at v1.0 and, for clients that ask for it (or say nothing), at 0.3. */
export function agentCard(gateway: GatewayContext, agent: Agent): AgentCard {
  const url = `${gateway.config.PUBLIC_BASE_URL}/v1/a2a/${agent.id}`;
  const spec = agent.spec;
  const plugins = agentSpecJson(spec)
    .plugins.map((item) =>
      typeof item === "string"
        ? item
        : typeof item === "object" && item !== null && !Array.isArray(item) && typeof item.name === "string"
          ? item.name
          : "",
    )
    .filter((name) => name !== "");
  const skills: AgentSkill[] = plugins.map((name) => ({
    id: name,
    name,
    description: gateway.catalogue.get(name)?.description ?? `The ${name} plugin.`,
    tags: ["plugin"],
    examples: [],
    inputModes: ["text/plain"],
    outputModes: ["text/plain"],
    securityRequirements: [],
  }));
  return {
    name: spec?.name ?? agent.id,
    description: (spec?.bio ?? []).join(" ") || `The agent ${spec?.name ?? agent.id}.`,
    supportedInterfaces: duplicateInterfacesForLegacy(
      [{ url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_PROTOCOL_VERSION }],
      ["JSONRPC"],
    ),
    provider: { organization: "Agentry", url: gateway.config.PUBLIC_BASE_URL },
    version: "1.0.0",
    documentationUrl: `${gateway.config.PUBLIC_BASE_URL}/docs`,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: { description: "An Agentry API key.", scheme: "bearer", bearerFormat: "API key" },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills,
    signatures: [],
  };
}

const textPart = (text: string) => ({
  content: { $case: "text" as const, value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

/**
 * Runs each task as one turn with the agent: the message's text parts are the message, the task's `contextId`
 * is the room, the reply is the task's artifact. A cancelled task cancels its model call, so nothing is stored.
 */
class TurnExecutor implements AgentExecutor {
  /** The tasks running here, by owner and task id (a client may name its own task ids). */
  private readonly running = new Map<string, AbortController>();
  /** The same, by the event bus the SDK hands a cancel on this gateway (it is scoped to the task's owner). */
  private readonly byBus = new WeakMap<ExecutionEventBus, AbortController>();

  /** Aborts a task if it runs here: cancelled through this gateway, or through another that shares the store. */
  abort(owner: string, taskId: string): void {
    this.running.get(`${owner}\n${taskId}`)?.abort();
  }

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = request;
    const user = request.context.user as A2AUser;
    const message = request.userMessage;
    const status = (state: TaskState, text?: string) =>
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state,
          timestamp: new Date().toISOString(),
          message: text
            ? {
                role: Role.ROLE_AGENT,
                messageId: crypto.randomUUID(),
                parts: [textPart(text)],
                taskId,
                contextId,
                extensions: [],
                metadata: {},
                referenceTaskIds: [],
              }
            : undefined,
        },
        metadata: {},
      });
    if (!request.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            timestamp: new Date().toISOString(),
            message: undefined,
          },
          artifacts: [],
          history: [message],
          metadata: {},
        }),
      );
    }
    const abort = new AbortController();
    const running = `${user.userName}\n${taskId}`;
    this.running.set(running, abort);
    this.byBus.set(bus, abort);
    try {
      const text = message.parts
        .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
        .join("");
      if (text === "")
        throw new AppError("INVALID_REQUEST", "The message has no text part; send its text in one.");
      const checked = user.caller.message({ text, roomId: contextId });
      bus.publish(status(TaskState.TASK_STATE_WORKING));
      // The reply's text streams as pieces of one artifact (the reply's id): the first starts it, the next are
      // appended, and the complete text replaces them last, so the task keeps the reply whole in one part.
      const piece = (messageId: string, text: string, at: "first" | "next" | "whole") =>
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: messageId,
            name: "reply",
            description: `The reply of ${user.agent.spec?.name ?? user.agent.id}.`,
            parts: [textPart(text)],
            metadata: undefined,
            extensions: [],
          },
          append: at === "next",
          lastChunk: at === "whole",
          metadata: undefined,
        });
      let started = false;
      const reply = await user.caller.run("sendMessage", user.agent.id, (state) =>
        user.caller.send(user.agent, checked, {
          signal: abort.signal,
          spend: state.spend,
          onText: (messageId, delta) => {
            bus.publish(piece(messageId, delta, started ? "next" : "first"));
            started = true;
          },
        }),
      );
      bus.publish(piece(reply.id, reply.text, "whole"));
      bus.publish(status(TaskState.TASK_STATE_COMPLETED));
    } catch (error) {
      if (abort.signal.aborted)
        bus.publish(status(TaskState.TASK_STATE_CANCELED, "Cancelled by the caller."));
      else {
        const failure = toAppError(error);
        if (failure.code === "INTERNAL_ERROR")
          user.caller.gateway.logger.error({ err: failure.cause ?? error }, "A2A task failed");
        bus.publish(status(TaskState.TASK_STATE_FAILED, `${failure.code}: ${failure.message}`));
      }
    } finally {
      this.running.delete(running);
      this.byBus.delete(bus);
    }
  }

  async cancelTask(_taskId: string, bus: ExecutionEventBus): Promise<void> {
    this.byBus.get(bus)?.abort();
  }
}

/**
 * A2A with the official SDK's JSON-RPC transport: each agent at `/v1/a2a/{agentId}` (protocol 1.0, and the 0.3
 * methods `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`), its card beside it. The key is checked
 * here, as for any route: the card needs `agents:read`, the methods `messages:send`.
 */
export function a2aRoutes(
  router: Router<GatewayState>,
  gateway: GatewayContext,
  limits: LimitsMiddleware | undefined,
): void {
  // Shared by the gateways on one Redis (any of them reads or cancels a task); else kept by this one in memory.
  const tasks = gateway.a2aTasks ?? new InMemoryTaskStore(taskOwner);
  const executor = new TurnExecutor();
  gateway.a2aTasks?.onCancel((owner, taskId) => executor.abort(owner, taskId));
  const buses = new DefaultExecutionEventBusManager();
  const handlers = new WeakMap<IncomingMessage, RequestHandler>();
  const requestIds = new WeakMap<IncomingMessage, string>();

  const sdk = express();
  sdk.disable("x-powered-by");
  sdk.use((req, res, next) => handlers.get(req)!(req, res, next));
  // What the SDK's handlers leave unanswered or throw is answered in this API's envelope, never by Express's pages.
  sdk.use((req, res) => {
    res
      .status(404)
      .json(envelope(req, "NOT_FOUND", "Send A2A JSON-RPC requests with POST to /v1/a2a/{agentId}."));
  });
  sdk.use((error: unknown, req: IncomingMessage, res: ServerResponse, _next: NextFunction) => {
    gateway.logger.error({ err: error }, "A2A request failed");
    if (res.headersSent) res.end();
    else {
      res.statusCode = 500;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(envelope(req, "INTERNAL_ERROR", "Internal error.")));
    }
  });
  const envelope = (req: IncomingMessage, code: string, message: string) => ({
    success: false,
    error: { code, message, requestId: requestIds.get(req) ?? "" },
  });

  const serve =
    (
      scope: "agents:read" | "messages:send",
      handlerFor: (requestHandler: DefaultRequestHandler, user: A2AUser) => RequestHandler,
    ) =>
    async (ctx: Parameters<Parameters<Router<GatewayState>["get"]>[1]>[0]) => {
      const caller = await StandardCaller.of(gateway, ctx, limits);
      const agentId = ctx.params.agentId ?? "";
      // A card is a read of the agent, with its limits; a message spends its own when its task runs.
      if (scope === "messages:send") requireScope(caller.principal, scope);
      const agent =
        scope === "agents:read"
          ? await caller.run("getAgent", agentId, () => caller.agent(agentId))
          : await caller.agent(agentId);
      const user = new A2AUser(caller, agent);
      const requestHandler = new DefaultRequestHandler(agentCard(gateway, agent), tasks, executor, buses);
      // Read as every request body is (1 MiB, errors in the envelope); the SDK's own parser then takes it as read.
      if (ctx.method === "POST")
        (ctx.req as IncomingMessage & { body?: unknown }).body = await readJsonBody(ctx);
      handlers.set(ctx.req, handlerFor(requestHandler, user));
      requestIds.set(ctx.req, ctx.state.requestId);
      ctx.respond = false;
      // Koa's provisional 404 would otherwise stand on the SDK's event streams, which set no status of their own.
      ctx.res.statusCode = 200;
      // The SDK answers on the raw response; this request is over when it has.
      // The SDK's handlers are mounted at "/"; the request's own URL is put back for the access log.
      const url = ctx.req.url;
      await new Promise<void>((resolve) => {
        ctx.res.once("close", resolve);
        ctx.req.url = "/";
        sdk(ctx.req, ctx.res);
      });
      ctx.req.url = url;
    };

  router.get(`${A2A_PATH}${CARD_PATH}`, async (ctx, next) => {
    // A 1.0 client gets the card in the protocol's JSON form (the SDK's card handler writes its in-memory form,
    // whose security schemes a 1.0 client cannot read); clients of 0.3, or that name no version, get the SDK's.
    const version = ctx.get(A2A_VERSION_HEADER);
    if (version === "" || version.startsWith("0.")) return next();
    const caller = await StandardCaller.of(gateway, ctx, limits);
    const agentId = ctx.params.agentId ?? "";
    const agent = await caller.run("getAgent", agentId, () => caller.agent(agentId));
    ctx.set("Vary", A2A_VERSION_HEADER);
    ctx.body = AgentCard.toJSON(agentCard(gateway, agent));
  });
  router.get(
    `${A2A_PATH}${CARD_PATH}`,
    serve("agents:read", (requestHandler) =>
      agentCardHandler({
        agentCardProvider: requestHandler,
        cache: { maxAge: 0 },
        legacyCompat: { enabled: true },
      }),
    ),
  );
  router.post(
    A2A_PATH,
    serve("messages:send", (requestHandler, user) =>
      jsonRpcHandler({
        requestHandler,
        userBuilder: async () => user,
        legacyCompat: { enabled: true },
      }),
    ),
  );
  router.register(A2A_PATH, ["GET", "PUT", "PATCH", "DELETE"], (ctx) => {
    throw new AppError(
      "METHOD_NOT_ALLOWED",
      `${ctx.method} ${ctx.path} is not served: send A2A JSON-RPC requests with POST; the agent's card is at ${ctx.path}${CARD_PATH}.`,
    );
  });
}
