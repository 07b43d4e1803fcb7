import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  presentReply as presentReplyView,
  presentToolCall,
  type ReplyJson,
  type ToolCallView,
  toolCallStarted,
} from "@agentry/events";
import { type Agent, AgentStatus, type Reply, type SendMessageRequest, type ToolCall } from "@agentry/proto";
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampNow } from "@bufbuild/protobuf/wkt";
import type { CallOptions } from "@connectrpc/connect";
import { readJsonBody } from "../http/body.js";
import { toAppError } from "../http/errors.js";
import { EventStream } from "../http/sse.js";
import { parseOrThrow } from "../validation/issues.js";
import { type SendMessageBody, sendMessageBody } from "../validation/messages.js";
import type { HandlerInput, Route } from "./table.js";

/** The fields SendMessage and StreamMessage share. */
type MessageRequest = Omit<SendMessageRequest, "$typeName" | "agent"> & { agent: Agent };

/**
 * The non-stream reply and the stream's `message.completed` event (decisions.md, "Messages"). The presentation is
 * `@agentry/events`' own, which the conversation service's `message.completed` webhook events carry too.
 */
export function presentReply(reply: Reply): ReplyJson {
  return presentReplyView({
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
async function reportHealth(input: HandlerInput, agent: Agent, failure: AppError | null): Promise<void> {
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
export function callerGone(input: HandlerInput): AbortController {
  const controller = new AbortController();
  input.ctx.res.once("close", () => {
    if (!input.ctx.res.writableFinished) controller.abort();
  });
  return controller;
}

async function sendMessage(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = ctx.params.agentId ?? "";
  if (!isId("agent", agentId))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(agentId)} does not exist.`);
  const body = parseOrThrow(sendMessageBody, await readJsonBody(ctx), "request body");

  const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id: agentId }, rpc);
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
  };
  const abort = callerGone(input);
  const options = { ...rpc, timeoutMs: gateway.config.MESSAGE_TIMEOUT_MS, signal: abort.signal };

  // Returned, not awaited: this function's frame need not stay open for as long as the stream runs.
  if (body.stream === true) return streamReply(input, agent, request, options, body);
  try {
    const { reply } = await gateway.conversations.sendMessage(request, options);
    // A fallback's answer says nothing of the agent's own model.
    if (!reply!.fallback) await reportHealth(input, agent, null);
    ctx.body = { success: true, data: presentReply(reply!) };
  } catch (error) {
    const failure = toAppError(error);
    await reportHealth(input, agent, failure);
    throw failure;
  }
}

/**
 * Streams the reply as server-sent events. Until the conversation service has accepted the call (its `started`
 * event) nothing is written, so an early failure is an ordinary JSON error; after it, a failure is the stream's
 * one terminal `error` event. A caller that disconnects aborts the call upstream; no half reply is stored.
 */
async function streamReply(
  input: HandlerInput,
  agent: Agent,
  request: MessageRequest,
  options: CallOptions & { signal: AbortSignal },
  body: SendMessageBody,
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
  try {
    for (let next = first; !next.done; next = await events.next()) {
      const event = next.value.event;
      if (event.case === "started") {
        stream.send("message.started", {
          id: event.value.messageId,
          agentId: event.value.agentId,
          userId: body.userId ?? null,
          roomId: body.roomId ?? null,
        });
      } else if (event.case === "delta") {
        stream.send("message.delta", { text: event.value.text });
      } else if (event.case === "toolCall") {
        stream.send("tool.call", toolCallStarted(toolCallView(event.value)));
      } else if (event.case === "toolResult") {
        stream.send("tool.result", presentToolCall(toolCallView(event.value)));
      } else if (event.case === "completed") {
        completed = event.value.fallback ? "by a fallback" : "by the agent's model";
        stream.send("message.completed", presentReply(event.value));
      }
    }
    if (!completed) throw new AppError("AGENT_UNAVAILABLE", "The reply stream ended before it was complete.");
    if (completed === "by the agent's model") await reportHealth(input, agent, null);
  } catch (error) {
    const failure = toAppError(error);
    if (options.signal.aborted) {
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

export const messageRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/agents/:agentId/messages",
    scope: "messages:send",
    limit: "messagesPerMinute",
    concurrency: true,
    handle: sendMessage,
  },
];
