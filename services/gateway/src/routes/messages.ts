import { replyUsage } from "@agentry/budgets";
import { FALLBACK_MAX_ITEMS, isId } from "@agentry/core";
import { AppError, type ErrorCode } from "@agentry/errors";
import {
  presentReply as presentReplyView,
  presentToolCall,
  type ReplyJson,
  type ToolCallView,
  toolCallStarted,
} from "@agentry/events";
import {
  type Agent,
  AgentStatus,
  AgentView,
  type BackgroundMessage,
  type Citation,
  MessageStatus,
  type PendingToolCall,
  type Reply,
  type SendMessageRequest,
  type StreamMessageResponse,
  type ToolCall,
} from "@agentry/proto";
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampNow } from "@bufbuild/protobuf/wkt";
import type { CallOptions } from "@connectrpc/connect";
import { toAppError } from "../http/errors.js";
import { EventStream, PING_INTERVAL_MS } from "../http/sse.js";
import { sendMessageBody } from "../validation/messages.js";
import { defineRoute, type HandlerInput, type RequestContext, type Route } from "./define.js";
import { ApproveToolCallsBody, STREAM_EVENT_SCHEMA_ID } from "./messages.schemas.js";

/** A tool call waiting for approval (docs/api/plugins-and-tools.md, "Tool approvals"). */
export function presentPendingToolCall(call: PendingToolCall) {
  return { id: call.id, tool: call.tool, arguments: call.argumentsJson };
}

/**
 * A background message (docs/api/messages-and-streams.md, "Background messages"): the reply object with its
 * `status`; only the ids while pending, the whole reply once completed, the error once failed.
 */
export function presentBackgroundMessage(message: BackgroundMessage) {
  if (message.status === MessageStatus.COMPLETED && message.reply) {
    return { ...presentReply(message.reply), status: "completed" as const };
  }
  // Interrupted by a later message: the reply with the text it had.
  if (message.status === MessageStatus.CANCELLED && message.reply) {
    return { ...presentReply(message.reply), status: "cancelled" as const };
  }
  const ids = {
    id: message.id,
    agentId: message.agentId,
    userId: message.userId ?? null,
    roomId: message.roomId ?? null,
  };
  if (message.status === MessageStatus.FAILED || message.status === MessageStatus.CANCELLED) {
    return {
      ...ids,
      status: message.status === MessageStatus.CANCELLED ? ("cancelled" as const) : ("failed" as const),
      error: { code: message.error?.code ?? "INTERNAL_ERROR", message: message.error?.message ?? "" },
    };
  }
  if (message.status === MessageStatus.REQUIRES_ACTION) {
    return {
      ...ids,
      status: "requires_action" as const,
      pendingToolCalls: message.pendingToolCalls.map(presentPendingToolCall),
      approvalExpiresAt: message.approvalExpireTime
        ? timestampDate(message.approvalExpireTime).toISOString()
        : "",
    };
  }
  return { ...ids, status: "pending" as const };
}

/** The fields SendMessage and StreamMessage share. */
type MessageRequest = Omit<SendMessageRequest, "$typeName" | "agent"> & { agent: Agent };

/**
 * The non-stream reply and the stream's `message.completed` event (docs/api/messages-and-streams.md, "Reply"). The presentation is
 * `@agentry/events`' own, which the conversation service's `message.completed` webhook events carry too.
 */
export function presentReply(reply: Reply): ReplyJson & { citations?: CitationJson[] } {
  const view = presentReplyView({
    id: reply.id,
    agentId: reply.agentId,
    userId: reply.userId ?? null,
    roomId: reply.roomId ?? null,
    text: reply.text,
    model: reply.model,
    modelProvider: reply.modelProvider,
    finishReason: reply.finishReason,
    usage: {
      inputTokens: reply.usage?.inputTokens ?? 0,
      outputTokens: reply.usage?.outputTokens ?? 0,
      totalTokens: reply.usage?.totalTokens ?? 0,
    },
    latencyMs: reply.latencyMs,
    createdAt: reply.createTime ? timestampDate(reply.createTime).toISOString() : new Date().toISOString(),
    toolCalls: reply.toolCalls.map(toolCallView),
  });
  return reply.citations.length > 0 ? { ...view, citations: reply.citations.map(presentCitation) } : view;
}

/** A chunk of an agent's document that a reply's prompt carried (docs/api/documents.md, "Retrieval and citations"). */
export type CitationJson = { documentId: string; chunk: number; score: number };

export function presentCitation(citation: Citation): CitationJson {
  return { documentId: citation.documentId, chunk: citation.chunk, score: citation.score };
}

/** A tool call of the RPCs as the presentation takes it. */
export function toolCallView(call: ToolCall): ToolCallView {
  return {
    id: call.id,
    name: call.name,
    arguments: call.argumentsJson,
    ok: call.ok,
    output: call.outputJson,
    error: call.error,
  };
}

/**
 * Records the outcome of a model call on the agent: a lasting failure (MODEL_ERROR) puts it in `error` with the
 * reason; a success takes it out of `error`. A failure to record is logged, never turned into the caller's error.
 */
export async function reportHealth(
  input: RequestContext,
  agent: Agent,
  failure: AppError | null,
): Promise<void> {
  const { gateway, principal, rpc } = input;
  if (failure === null && agent.status !== AgentStatus.ERROR) return;
  if (failure !== null && failure.code !== "MODEL_ERROR") return;
  try {
    await gateway.agents.reportAgentHealth(
      {
        accountId: principal.accountId,
        id: agent.id,
        ...(failure
          ? { failure: { code: failure.code, message: failure.message, time: timestampNow() } }
          : {}),
      },
      rpc,
    );
  } catch (error) {
    gateway.logger.warn({ err: error, agentId: agent.id }, "could not record the agent's health");
  }
}

/** Aborts when the caller goes away before the response is complete. */
export function callerGone(input: RequestContext): AbortController {
  const controller = new AbortController();
  input.ctx.res.once("close", () => {
    if (!input.ctx.res.writableFinished) controller.abort();
  });
  return controller;
}

/**
 * Accepts a background message: 202 with its reply's id once the conversation service has recorded it. The
 * agent's concurrency slot is held until the message ends, which this gateway follows (and reports on the
 * agent's health) after the response.
 */
async function startBackground(input: HandlerInput, agent: Agent, request: MessageRequest): Promise<void> {
  const { ctx, gateway, rpc } = input;
  const { messageId } = await gateway.conversations.startMessage(request, rpc);
  ctx.status = 202;
  ctx.body = { success: true, data: { id: messageId, status: "pending" } };
  ctx.state.holdSlotUntil?.(awaitEnd(input, agent, messageId));
}

/** How long a follower of a message may wait for its end: every model in line may take the whole time limit. */
function followTimeoutMs(input: HandlerInput): number {
  return (1 + FALLBACK_MAX_ITEMS) * input.gateway.config.MESSAGE_TIMEOUT_MS + 60_000;
}

/**
 * Waits for the end of a message that goes on without its caller (in the background, or a stream continued
 * after its caller left), then records it on the agent's health. Never throws.
 */
async function awaitEnd(input: HandlerInput, agent: Agent, messageId: string): Promise<void> {
  const { gateway, principal, rpc } = input;
  const spend = input.ctx.state.spend;
  try {
    const events = gateway.conversations.watchMessage(
      { accountId: principal.accountId, agentId: agent.id, messageId, after: 0n, endOnly: true },
      { headers: rpc.headers, timeoutMs: followTimeoutMs(input) },
    );
    for await (const { event } of events) {
      if (event.case === "completed") {
        await spend?.settle(replyUsage(event.value));
        if (!event.value.fallback) await reportHealth(input, agent, null);
      } else if (event.case === "failed") {
        await reportHealth(input, agent, new AppError(event.value.code as ErrorCode, event.value.message));
      }
    }
  } catch (error) {
    gateway.logger.warn(
      { err: error, agentId: agent.id, messageId },
      "could not follow a message to its end",
    );
  }
}

/**
 * Streams the reply as server-sent events. Until the conversation service has accepted the call (its `started`
 * event) nothing is written, so an early failure is an ordinary JSON error; after it, a failure is the stream's
 * one terminal `error` event. Each event's `id:` is its number in the message's event log, which the events route
 * resumes after. A caller that disconnects aborts the call upstream, so no half reply is stored, unless the
 * request asked to continue: then the reply is generated to its end, and the agent's concurrency slot is held
 * until it is.
 */
async function streamReply(
  input: HandlerInput,
  agent: Agent,
  request: MessageRequest & { continueOnDisconnect: boolean },
  options: CallOptions & { signal: AbortSignal },
): Promise<void> {
  const { ctx, gateway } = input;
  const events = gateway.conversations.streamMessage(request, options)[Symbol.asyncIterator]();

  let first: IteratorResult<Awaited<ReturnType<typeof events.next>>["value"]>;
  try {
    first = await events.next();
  } catch (error) {
    const failure = toAppError(error);
    await reportHealth(input, agent, failure);
    throw failure;
  }

  ctx.respond = false;
  ctx.status = 200;
  const stream = new EventStream(ctx.res, undefined, ctx.state.idempotency?.recordEvent);
  stream.open();
  const streamClosed = gateway.metrics?.streamOpened("sse");
  let completed: "by the agent's model" | "by a fallback" | null = null;
  let messageId: string | null = null;
  let paused = false;
  try {
    for (let next = first; !next.done; next = await events.next()) {
      const { event, sequence } = next.value;
      if (event.case === "started") messageId = event.value.messageId;
      if (event.case === "completed") {
        completed = event.value.fallback ? "by a fallback" : "by the agent's model";
        await ctx.state.spend?.settle(replyUsage(event.value));
      }
      // Paused for approval: the stream ends here; the reply comes once a person answers.
      if (event.case === "approvalRequired") paused = true;
      sendEvent(stream, event, Number(sequence));
    }
    if (paused) return;
    if (!completed) throw new AppError("AGENT_UNAVAILABLE", "The reply stream ended before it was complete.");
    if (completed === "by the agent's model") await reportHealth(input, agent, null);
  } catch (error) {
    const failure = toAppError(error);
    if (options.signal.aborted && request.continueOnDisconnect && messageId) {
      gateway.logger.info({ agentId: agent.id, messageId }, "caller disconnected; the reply goes on");
      ctx.state.holdSlotUntil?.(awaitEnd(input, agent, messageId));
    } else if (options.signal.aborted) {
      gateway.logger.info({ agentId: agent.id }, "caller disconnected; the model call was cancelled");
    } else {
      if (failure.code === "INTERNAL_ERROR")
        gateway.logger.error({ err: failure.cause ?? failure }, "stream failed");
      stream.send("error", { code: failure.code, message: failure.message });
      await reportHealth(input, agent, failure);
    }
  } finally {
    stream.close();
    streamClosed?.();
  }
}

type LoggedEvent =
  | StreamMessageResponse["event"]
  | { case: "failed"; value: { code: string; message: string } };

/** One event of a message's log as the stream sends it; a resumed stream sends it exactly so again. */
function sendEvent(stream: EventStream, event: LoggedEvent, id: number): void {
  switch (event.case) {
    case "started":
      stream.send(
        "message.started",
        {
          id: event.value.messageId,
          agentId: event.value.agentId,
          userId: event.value.userId ?? null,
          roomId: event.value.roomId ?? null,
        },
        id,
      );
      break;
    case "delta":
      stream.send("message.delta", { text: event.value.text }, id);
      break;
    case "toolCall":
      stream.send("tool.call", toolCallStarted(toolCallView(event.value)), id);
      break;
    case "toolResult":
      stream.send("tool.result", presentToolCall(toolCallView(event.value)), id);
      break;
    case "approvalRequired":
      stream.send(
        "tool.approval_required",
        {
          messageId: event.value.messageId,
          pendingToolCalls: event.value.pendingToolCalls.map(presentPendingToolCall),
        },
        id,
      );
      break;
    case "completed":
      stream.send("message.completed", presentReply(event.value), id);
      break;
    case "failed":
      stream.send("error", { code: event.value.code, message: event.value.message }, id);
      break;
  }
}

/** The number after which a resumed stream starts: `Last-Event-ID`, else `?after=`, else 0 (from the start). */
function resumeAfter(input: HandlerInput): number {
  const { ctx } = input;
  // The header wins: a browser's EventSource sends it when it reconnects to the URL it opened, `after` and all.
  const header = ctx.get("last-event-id");
  if (header !== "") return eventNumber(header, "Last-Event-ID");
  const query = ctx.query.after;
  if (query === undefined) return 0;
  return eventNumber(Array.isArray(query) ? "" : query, "after");
}

function eventNumber(value: string, field: string): number {
  if (!/^\d{1,15}$/.test(value)) {
    throw new AppError("INVALID_REQUEST", `${field} must be an event id: a whole number, 0 or more.`, {
      details: [{ field, issue: "must be a whole number, 0 or more" }],
    });
  }
  return Number(value);
}

export const messageRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/agents/:agentId/messages",
    scope: "messages:send",
    limit: "messagesPerMinute",
    concurrency: true,
    operationId: "sendMessage",
    tag: "Messages",
    summary: "Send a message to an agent",
    description: `Sends a text message and returns the agent's reply. Context is kept per agent, \`userId\` and \`roomId\`: send the same \`userId\` for the same user; calls without them share one default conversation. \`context\` applies to this message only. The model may call the tools of the agent's enabled plugins, up to \`settings.maxToolSteps\` rounds; the reply's \`toolCalls\` lists the calls with their outcomes, and its \`usage\` counts every model call of the turn. An agent in \`error\` is still called (a success takes it out of \`error\`); an \`inactive\` one refuses messages.\n\nWith \`stream: true\` the reply arrives as server-sent events (\`text/event-stream\`): \`message.started\`, any number of \`message.delta\` (and, when the model calls tools of the agent's plugins, \`tool.call\` and \`tool.result\` between them), then exactly one of \`message.completed\` or \`error\`, after which the stream closes. Each event has an \`id:\` (its sequence number, from 1), an \`event:\` name and JSON \`data:\`; the \`text/event-stream\` schema, \`MessageStreamEvent\`, describes each event and the JSON of its data. A \`: ping\` comment line is sent after every ${PING_INTERVAL_MS / 1000} seconds of silence. Anything that fails before the stream starts (validation, 404, 409, 429, a provider that is down) is an ordinary JSON error response. Only a complete reply is stored.\n\nEvery stream can be resumed for \`STREAM_RETENTION\` (1 hour by default) after it ends, at \`GET /v1/agents/{agentId}/messages/{messageId}/events\` with \`Last-Event-ID\`. With \`onDisconnect: "continue"\` the reply is generated to its end and stored even when the caller goes away (it still holds a concurrency slot until then); the default, \`cancel\`, stops it.\n\nWith \`background: true\` the answer is \`202\` with the reply's id and \`status: "pending"\` at once; the reply is generated whatever happens to the caller, and \`GET /v1/agents/{agentId}/messages/{messageId}\` tells whether it is \`pending\`, \`completed\` (with the reply) or \`failed\` (with the error). It holds a concurrency slot until it ends.\n\nOne message of a conversation is answered at a time. A message sent while its conversation has one in progress does what \`onConflict\` says (else the agent's \`settings.concurrentMessages\`, else \`enqueue\`): \`enqueue\` waits its turn, in the order messages came, across every conversation instance; \`reject\` answers \`409 CONVERSATION_BUSY\`; \`interrupt\` cancels the message in progress, whose reply is stored with the text it had and \`finishReason: "cancelled"\` (a background one reads \`status: "cancelled"\`), then answers this one.`,
    body: { schema: sendMessageBody, component: "SendMessageRequest" },
    success: {
      status: 200,
      schema: "MessageResponse",
      description:
        "The agent's reply; with `stream: true`, a stream of server-sent events, each one a `MessageStreamEvent`.",
    },
    otherSuccess: [
      {
        status: 202,
        schema: "BackgroundMessageAcceptedResponse",
        description:
          'With `background: true`: the message is accepted, and its reply is being generated. Without it, when the turn paused before tool calls that wait for approval: `status: "requires_action"` with `pendingToolCalls`.',
        whenBody: { background: true },
        sdkMethod: "sendBackground",
      },
    ],
    errors: [
      "INVALID_REQUEST",
      "AGENT_NOT_FOUND",
      "AGENT_INACTIVE",
      "CONVERSATION_BUSY",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
      "MODEL_ERROR",
      "BUDGET_EXCEEDED",
    ],
    stream: true,
    // A malformed id is a 404 before a bad body is a 400, and both come before the send reserves its budget.
    async validate(input) {
      const agentId = input.params.agentId;
      if (!isId("agent", agentId))
        throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(agentId)} does not exist.`);
      await input.body();
    },
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = input.params.agentId;
      const body = await input.body();

      // The JSON view: the agent goes on to the conversation service with its JSON fields as text, which no
      // process turns into Struct messages (a registry of the earlier release answers the Struct form, read alike).
      const { agent } = await gateway.agents.getAgent(
        { accountId: principal.accountId, id: agentId, view: AgentView.JSON },
        rpc,
      );
      if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${agentId} does not exist.`);
      if (agent.status === AgentStatus.INACTIVE) {
        throw new AppError(
          "AGENT_INACTIVE",
          `Agent ${agentId} is inactive; set its status to 'active' to send it messages.`,
        );
      }

      const request: MessageRequest = {
        accountId: principal.accountId,
        agent,
        text: body.text,
        ...(body.userId !== undefined ? { userId: body.userId } : {}),
        ...(body.roomId !== undefined ? { roomId: body.roomId } : {}),
        ...(body.context ? { context: body.context as JsonObject } : {}),
        requestId: ctx.state.requestId,
        // Usage is attributed to the key the message was sent with.
        apiKeyId: principal.keyId,
        // A message retried with its key after this gateway stopped mid-send is answered with the reply generated.
        ...(ctx.state.idempotency ? { idempotencyKeyHash: ctx.state.idempotency.keyHash } : {}),
        ...(body.onConflict !== undefined ? { onConflict: body.onConflict } : {}),
      };
      if (body.background === true) return startBackground(input, agent, request);
      const abort = callerGone(input);
      const options = { ...rpc, timeoutMs: gateway.config.MESSAGE_TIMEOUT_MS, signal: abort.signal };

      // Returned, not awaited: this function's frame need not stay open for as long as the stream runs.
      if (body.stream === true) {
        const continued = body.onDisconnect === "continue";
        return streamReply(input, agent, { ...request, continueOnDisconnect: continued }, options);
      }
      try {
        const { reply, paused } = await gateway.conversations.sendMessage(request, options);
        if (paused) {
          // Not held open for a person: the message waits, requires_action, for its answer.
          ctx.status = 202;
          ctx.body = {
            success: true,
            data: {
              id: paused.id,
              status: "requires_action",
              pendingToolCalls: paused.pendingToolCalls.map(presentPendingToolCall),
            },
          };
          return;
        }
        await ctx.state.spend?.settle(replyUsage(reply!));
        // A fallback's answer says nothing of the agent's own model.
        if (!reply!.fallback) await reportHealth(input, agent, null);
        ctx.body = { success: true, data: presentReply(reply!) };
      } catch (error) {
        const failure = toAppError(error);
        await reportHealth(input, agent, failure);
        throw failure;
      }
    },
  }),
  /**
   * Replays a message's events after the one asked, then follows its live events until its terminal event
   * (`message.completed` or `error`), whichever gateway and conversation replica generate it. An unknown message,
   * or one whose events are no longer kept, is 404 STREAM_NOT_FOUND, answered before the stream opens.
   */
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/messages/:messageId/events",
    scope: "messages:send",
    limit: "getPerMinute",
    operationId: "resumeMessageEvents",
    tag: "Messages",
    summary: "Resume a message's stream",
    description:
      "The server-sent events of a streamed or background message after the one named by `Last-Event-ID` (the `id:` of the last event received) or, without that header, by `after`; from the first event when neither is given. Events are replayed exactly as first sent (same `id:`, `event:` and data), then live ones follow while the reply is generated, whichever gateway serves the request; the stream ends with its terminal event (`message.completed` or `error`). A message whose reply ended more than `STREAM_RETENTION` (1 hour by default) ago, or that is unknown, is `404 STREAM_NOT_FOUND`. The SDKs resume a dropped stream this way by themselves.",
    queryParameters: () => [
      {
        name: "after",
        required: false,
        schema: {
          type: "string",
          pattern: "^\\d{1,15}$",
          description:
            "The id of the last event received (as `Last-Event-ID`, which takes precedence): the events after it are sent. `0` or unset: all of them.",
          examples: ["3"],
        },
      },
    ],
    success: {
      status: 200,
      schema: STREAM_EVENT_SCHEMA_ID,
      description: "The events after the one named, then the live ones, each one a `MessageStreamEvent`.",
    },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "STREAM_NOT_FOUND"],
    eventsOnly: true,
    sdkExclude: true,
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = input.params.agentId;
      if (!isId("agent", agentId))
        throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(agentId)} does not exist.`);
      const messageId = input.params.messageId;
      const after = resumeAfter(input);
      if (!isId("message", messageId)) {
        throw new AppError(
          "STREAM_NOT_FOUND",
          `No events are kept for message ${JSON.stringify(messageId)}.`,
        );
      }
      // Only whether it exists: the registry's smallest answer.
      const { agent } = await gateway.agents.getAgent(
        { accountId: principal.accountId, id: agentId, view: AgentView.PUBLIC },
        rpc,
      );
      if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${agentId} does not exist.`);

      const abort = callerGone(input);
      const events = gateway.conversations
        .watchMessage(
          { accountId: principal.accountId, agentId, messageId, after: BigInt(after), endOnly: false },
          { headers: rpc.headers, timeoutMs: followTimeoutMs(input), signal: abort.signal },
        )
        [Symbol.asyncIterator]();
      // The first answer carries no event: it says the log exists (or the call fails, as JSON).
      try {
        await events.next();
      } catch (error) {
        throw toAppError(error);
      }

      ctx.respond = false;
      ctx.status = 200;
      const stream = new EventStream(ctx.res);
      stream.open();
      const streamClosed = gateway.metrics?.streamOpened("sse");
      try {
        for (let next = await events.next(); !next.done; next = await events.next()) {
          sendEvent(stream, next.value.event, Number(next.value.sequence));
        }
      } catch (error) {
        if (!abort.signal.aborted) {
          const failure = toAppError(error);
          if (failure.code === "INTERNAL_ERROR")
            gateway.logger.error({ err: failure.cause ?? failure }, "resumed stream failed");
          stream.send("error", { code: failure.code, message: failure.message });
        }
      } finally {
        stream.close();
        streamClosed?.();
      }
    },
  }),
  defineRoute({
    method: "POST",
    path: "/v1/agents/:agentId/messages/:messageId/approve",
    scope: "messages:send",
    limit: "updatePerMinute",
    operationId: "approveToolCalls",
    sdk: { resource: ["agents", "messages"], method: "approve" },
    tag: "Messages",
    summary: "Approve or refuse a message's tool calls",
    description:
      "Answers tool calls a message paused before (its plugin item's `requireApproval`): with `approve: true` they run; with `false` the model is told the person refused them (with `reason`). The calls are the ones the server stored: an answer names them by id only. Once every pending call is decided the message resumes in the background from its stored steps (tool rounds before the pause are not run again) and is `pending`, then `completed` or `failed`, at `GET …/messages/{messageId}`; while some are undecided it stays `requires_action`, listing those. Unanswered for `TOOL_APPROVAL_TIMEOUT` (24 hours by default) it fails with `APPROVAL_EXPIRED`.",
    body: { schema: ApproveToolCallsBody, component: "ApproveToolCallsRequest" },
    success: {
      status: 200,
      schema: "BackgroundMessageResponse",
      description:
        "The message after the answer: `pending` once it resumed, `requires_action` while calls wait.",
    },
    errors: [
      "INVALID_REQUEST",
      "AGENT_NOT_FOUND",
      "MESSAGE_NOT_FOUND",
      "MESSAGE_NOT_AWAITING_APPROVAL",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const body = await input.body();
      const agentId = input.params.agentId;
      if (!isId("agent", agentId))
        throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(agentId)} does not exist.`);
      const messageId = input.params.messageId;
      if (!isId("message", messageId))
        throw new AppError("MESSAGE_NOT_FOUND", `The agent has no message ${JSON.stringify(messageId)}.`);
      const { agent } = await gateway.agents.getAgent(
        { accountId: principal.accountId, id: agentId, view: AgentView.PUBLIC },
        rpc,
      );
      if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${agentId} does not exist.`);
      const { message } = await gateway.conversations.approveToolCalls(
        {
          accountId: principal.accountId,
          agentId,
          messageId,
          toolCallIds: body.toolCallIds,
          approve: body.approve,
          ...(body.reason === undefined ? {} : { reason: body.reason }),
        },
        rpc,
      );
      ctx.body = { success: true, data: presentBackgroundMessage(message!) };
    },
  }),
];
