import { replyUsage } from "@agentry/budgets";
import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type Agent,
  AgentStatus,
  AgentView,
  type Reply,
  type SendMessageRequest,
  type SuppliedContextSchema,
  SuppliedRole,
} from "@agentry/proto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { CallOptions } from "@connectrpc/connect";
import { readJsonBody } from "../../http/body.js";
import { toAppError } from "../../http/errors.js";
import type { RequestContext } from "../../routes/define.js";
import { callerGone, presentCitation, reportHealth } from "../../routes/messages.js";
import { parseOrThrow } from "../../validation/issues.js";
import {
  type ChatCompletionBody,
  chatCompletionBody,
  finishReasonOf,
  messageText,
  OPENAI_ROOM_ID,
  type OpenAiUsage,
  openAiError,
  unsupported,
} from "./wire.js";

type MessageRequest = Omit<SendMessageRequest, "$typeName" | "agent" | "suppliedContext"> & {
  agent: Agent;
  suppliedContext: MessageInitShape<typeof SuppliedContextSchema>;
};

/**
 * `POST /v1/chat/completions`: one turn of the agent named by `model`, through the conversation service as any
 * message is (history, usage, limits, health), with the request's messages as the whole context.
 */
export async function chatCompletions(input: RequestContext): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const { body, text, suppliedContext } = await checkedRequest(input);
  const agent = await addressedAgent(input, body.model);
  if (agent.status === AgentStatus.INACTIVE) {
    throw new AppError(
      "AGENT_INACTIVE",
      `Agent ${agent.id} is inactive; set its status to 'active' to send it messages.`,
    );
  }
  const request: MessageRequest = {
    accountId: principal.accountId,
    agent,
    text,
    ...(body.user !== undefined ? { userId: body.user } : {}),
    roomId: OPENAI_ROOM_ID,
    requestId: ctx.state.requestId,
    apiKeyId: principal.keyId,
    // A completion retried with its Idempotency-Key after this gateway stopped mid-send gets the reply generated.
    ...(ctx.state.idempotency ? { idempotencyKeyHash: ctx.state.idempotency.keyHash } : {}),
    suppliedContext,
  };
  const abort = callerGone(input);
  const options = { ...rpc, timeoutMs: gateway.config.MESSAGE_TIMEOUT_MS, signal: abort.signal };
  if (body.stream === true) {
    return streamCompletion(input, agent, request, options, body.stream_options?.include_usage === true);
  }
  try {
    const { reply } = await gateway.conversations.sendMessage(request, options);
    await ctx.state.spend?.settle(replyUsage(reply!));
    if (!reply!.fallback) await reportHealth(input, agent, null);
    ctx.body = completion(reply!, agent.id);
  } catch (error) {
    const failure = toAppError(error);
    await reportHealth(input, agent, failure);
    throw failure;
  }
}

/** A request's body and the turn it asks for, checked once, before the completion is admitted. */
interface CheckedRequest {
  body: ChatCompletionBody;
  text: string;
  suppliedContext: MessageInitShape<typeof SuppliedContextSchema>;
}

const checked = new WeakMap<object, Promise<CheckedRequest>>();

/**
 * The chat completion's own checks, before its limits and budgets (`ServedRoute.validate`): the body's shape,
 * and what this API does not do. A malformed request is a 400 whatever the agent's budgets say.
 */
export async function validateChatCompletion(input: RequestContext): Promise<void> {
  await checkedRequest(input);
}

function checkedRequest({ ctx }: RequestContext): Promise<CheckedRequest> {
  let request = checked.get(ctx);
  if (!request) {
    request = readJsonBody(ctx).then((raw) => {
      const body = parseOrThrow(chatCompletionBody, raw, "request body");
      refuseUnsupported(body);
      // A model that cannot be an agent is answered 404 before the messages are read, as a malformed agent id is.
      if (!isId("agent", body.model)) throw unknownModel(body.model);
      return { body, ...conversation(body) };
    });
    checked.set(ctx, request);
  }
  return request;
}

/** The agent `model` names, of the caller's account; 404 otherwise, as OpenAI answers an unknown model. */
export async function addressedAgent(input: RequestContext, model: string): Promise<Agent> {
  const { gateway, principal, rpc } = input;
  if (!isId("agent", model)) throw unknownModel(model);
  // The JSON view, which a completion passes on to the conversation service as it came (the messages route's).
  const { agent } = await gateway.agents.getAgent(
    { accountId: principal.accountId, id: model, view: AgentView.JSON },
    rpc,
  );
  if (!agent) throw unknownModel(model);
  return agent;
}

function unknownModel(model: string): AppError {
  return new AppError(
    "AGENT_NOT_FOUND",
    `The model ${JSON.stringify(model)} is not an agent of this account; GET /v1/models lists them.`,
  );
}

/** What the agent does not do through this API is refused, never dropped: its own tools run on its side. */
function refuseUnsupported(body: ChatCompletionBody): void {
  if (body.tools && body.tools.length > 0) {
    throw unsupported(
      "tools",
      "are not supported: the agent calls its own plugins' tools; send the request without tools",
    );
  }
  if (body.functions && body.functions.length > 0) {
    throw unsupported("functions", "are not supported: send the request without functions");
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw unsupported("n", "must be 1: an agent gives one reply per turn");
  }
}

/**
 * The request's messages as the turn's context: system and developer messages become instructions after the
 * agent's own system prompt; the last message, the user's, is the turn's text; the ones before it are what was
 * said. Tool messages have no place here, since client tools are refused.
 */
function conversation(body: ChatCompletionBody): {
  text: string;
  suppliedContext: MessageInitShape<typeof SuppliedContextSchema>;
} {
  const instructions: string[] = [];
  const said: { role: SuppliedRole; text: string }[] = [];
  body.messages.forEach((message, index) => {
    const field = `messages[${index}]`;
    if (message.role === "tool" || message.role === "function" || message.tool_calls?.length) {
      throw unsupported(field, "is a tool message; tools are not supported, send text messages only");
    }
    const text = messageText(message);
    if (message.role === "system" || message.role === "developer") instructions.push(text);
    else said.push({ role: message.role === "user" ? SuppliedRole.USER : SuppliedRole.ASSISTANT, text });
  });
  const last = said.pop();
  if (!last || last.role !== SuppliedRole.USER || body.messages.at(-1)?.role !== "user") {
    throw unsupported("messages", "must end with a user message, which the agent answers");
  }
  if (last.text.trim() === "") {
    throw unsupported(`messages[${body.messages.length - 1}].content`, "must not be empty");
  }
  return {
    text: last.text,
    suppliedContext: { system: instructions.join("\n\n"), messages: said },
  };
}

function usageOf(reply: Reply): OpenAiUsage {
  return {
    prompt_tokens: reply.usage?.inputTokens ?? 0,
    completion_tokens: reply.usage?.outputTokens ?? 0,
    total_tokens: reply.usage?.totalTokens ?? 0,
  };
}

function createdOf(reply: Reply): number {
  const at = reply.createTime ? timestampDate(reply.createTime) : new Date();
  return Math.floor(at.getTime() / 1000);
}

/** The `chat.completion` object of a reply; its id is the reply's, as history lists it. */
function completion(reply: Reply, model: string) {
  return {
    id: reply.id,
    object: "chat.completion",
    created: createdOf(reply),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: reply.text, refusal: null },
        logprobs: null,
        finish_reason: finishReasonOf(reply.finishReason),
      },
    ],
    usage: usageOf(reply),
    system_fingerprint: null,
    ...citationsOf(reply),
  };
}

/**
 * The documents' chunks the reply's prompt carried, as the REST reply lists them: a field OpenAI's shape does not
 * have, which its SDKs keep on the object and otherwise ignore. Absent when there are none.
 */
function citationsOf(reply: Reply) {
  return reply.citations.length > 0 ? { citations: reply.citations.map(presentCitation) } : {};
}

/**
 * The reply as `chat.completion.chunk` server-sent events ending with `data: [DONE]`. Until the conversation
 * service has accepted the call nothing is written, so an early failure is an ordinary error response; after it,
 * a failure is one `data: {"error": …}` event (which OpenAI's SDKs raise) and no `[DONE]`. A caller that
 * disconnects cancels the turn, so no half reply is stored.
 */
async function streamCompletion(
  input: RequestContext,
  agent: Agent,
  request: MessageRequest,
  options: CallOptions & { signal: AbortSignal },
  includeUsage: boolean,
): Promise<void> {
  const { ctx, gateway } = input;
  const events = gateway.conversations.streamMessage(request, options)[Symbol.asyncIterator]();
  let first: Awaited<ReturnType<typeof events.next>>;
  try {
    first = await events.next();
  } catch (error) {
    const failure = toAppError(error);
    await reportHealth(input, agent, failure);
    throw failure;
  }

  ctx.respond = false;
  ctx.status = 200;
  ctx.res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
  });
  const streamClosed = gateway.metrics?.streamOpened("sse");
  const created = Math.floor(Date.now() / 1000);
  let id = "";
  // A stream sent with an Idempotency-Key is kept once complete (its `[DONE]`), and replayed as it was sent.
  const write = (frame: string, event: "chunk" | "message.completed") => {
    if (ctx.res.writableEnded || ctx.res.destroyed) return;
    ctx.res.write(frame);
    ctx.state.idempotency?.recordEvent(event, frame);
    // Written now, not at the end of the tick (see EventStream.flush).
    if (ctx.res.socket?.writableCorked) ctx.res.socket.uncork();
  };
  const send = (data: unknown) => write(`data: ${JSON.stringify(data)}\n\n`, "chunk");
  const chunk = (choices: unknown[], usage?: OpenAiUsage) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: agent.id,
    system_fingerprint: null,
    choices,
    ...(includeUsage ? { usage: usage ?? null } : {}),
  });
  const choice = (delta: Record<string, string>, finishReason: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finishReason,
  });
  try {
    let completed: Reply | undefined;
    for (let next = first; !next.done; next = await events.next()) {
      const { event } = next.value;
      if (event.case === "started") {
        id = event.value.messageId;
        send(chunk([choice({ role: "assistant", content: "" })]));
      } else if (event.case === "delta") {
        send(chunk([choice({ content: event.value.text })]));
      } else if (event.case === "completed") {
        completed = event.value;
        await ctx.state.spend?.settle(replyUsage(completed));
      }
    }
    if (!completed) throw new AppError("AGENT_UNAVAILABLE", "The reply stream ended before it was complete.");
    send({ ...chunk([choice({}, finishReasonOf(completed.finishReason))]), ...citationsOf(completed) });
    if (includeUsage) send(chunk([], usageOf(completed)));
    write("data: [DONE]\n\n", "message.completed");
    if (!completed.fallback) await reportHealth(input, agent, null);
  } catch (error) {
    const failure = toAppError(error);
    if (options.signal.aborted) {
      gateway.logger.info({ agentId: agent.id }, "caller disconnected; the model call was cancelled");
    } else {
      if (failure.code === "INTERNAL_ERROR")
        gateway.logger.error({ err: failure.cause ?? failure }, "stream failed");
      send(openAiError(failure));
      await reportHealth(input, agent, failure);
    }
  } finally {
    if (!ctx.res.writableEnded) ctx.res.end();
    streamClosed?.();
  }
}
