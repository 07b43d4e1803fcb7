import type { JsonValue } from "./types.js";

/** One tool call of a turn as services hold it: its arguments and answer as JSON text. */
export interface ToolCallView {
  id: string;
  /** As the model called it: `<plugin>__<tool>`. */
  name: string;
  /** As the model wrote them; not necessarily valid JSON. */
  arguments: string;
  ok: boolean;
  /** The answer's JSON text, when `ok`. */
  output?: string | undefined;
  /** Why it failed, when not `ok`. */
  error?: string | undefined;
}

/**
 * A tool call in the API (docs/api/plugins-and-tools.md, "Tools in a turn"): `{id, name, arguments, ok, output | error}`, its
 * arguments and output as JSON values (arguments the model wrote that are not JSON stay the text it wrote).
 */
export interface ToolCallJson {
  [key: string]: JsonValue;
  id: string;
  name: string;
  arguments: JsonValue;
  ok: boolean;
}

/** A complete reply as a service holds it, whatever its source (the conversation service's record, an RPC reply). */
export interface ReplyView {
  id: string;
  agentId: string;
  /** Null when the message carried none. */
  userId: string | null;
  roomId: string | null;
  text: string;
  model: string;
  modelProvider: string;
  finishReason: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  latencyMs: number;
  /** ISO 8601 with milliseconds, UTC: when the reply was complete. */
  createdAt: string;
  /** The tools the model called during the turn; none when unset or empty. */
  toolCalls?: readonly ToolCallView[] | undefined;
}

/**
 * The reply object of docs/api/messages-and-streams.md, "Reply": the non-stream reply's `data`, the stream's `message.completed`
 * event and the `message.completed` webhook event's `data`.
 */
export interface ReplyJson {
  [key: string]: JsonValue;
  id: string;
  agentId: string;
  userId: string | null;
  roomId: string | null;
  text: string;
  model: string;
  modelProvider: string;
  finishReason: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  latencyMs: number;
  createdAt: string;
  // And `toolCalls: ToolCallJson[]` last, when the model called tools during the turn.
}

/**
 * The public JSON of a reply, for the API and for events alike: fields picked one by one, in the order of the
 * contract, so that the answer of a send and the event of its completion cannot drift apart.
 */
export function presentReply(reply: ReplyView): ReplyJson {
  return {
    id: reply.id,
    agentId: reply.agentId,
    userId: reply.userId,
    roomId: reply.roomId,
    text: reply.text,
    model: reply.model,
    modelProvider: reply.modelProvider,
    finishReason: reply.finishReason,
    usage: {
      inputTokens: reply.usage.inputTokens,
      outputTokens: reply.usage.outputTokens,
      totalTokens: reply.usage.totalTokens,
    },
    latencyMs: reply.latencyMs,
    createdAt: reply.createdAt,
    ...(reply.toolCalls?.length ? { toolCalls: reply.toolCalls.map(presentToolCall) } : {}),
  };
}

/** A tool call and its outcome: the items of `toolCalls` and the stream's `tool.result` event. */
export function presentToolCall(call: ToolCallView): ToolCallJson {
  return {
    ...toolCallStarted(call),
    ok: call.ok,
    ...(call.ok ? { output: jsonOf(call.output ?? "null") } : { error: call.error ?? "" }),
  };
}

/** The stream's `tool.call` event: the call the model made, before it runs. */
export function toolCallStarted(call: Pick<ToolCallView, "id" | "name" | "arguments">): {
  [key: string]: JsonValue;
  id: string;
  name: string;
  arguments: JsonValue;
} {
  return { id: call.id, name: call.name, arguments: jsonOf(call.arguments) };
}

/** JSON text as its value; text that is not JSON as itself. */
function jsonOf(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** The `data` of `message.completed`: the reply object, exactly as the send call answered it. */
export function messageCompletedData(reply: ReplyView): ReplyJson {
  return presentReply(reply);
}

/**
 * The `data` of `message.failed` (docs/api/webhooks.md, "Events"): a send whose reply failed, with the error code (of the
 * error table) and the message its caller was answered with.
 */
export interface MessageFailedData {
  [key: string]: JsonValue;
  agentId: string;
  messageId: string;
  code: string;
  message: string;
}

export function messageFailedData(failure: MessageFailedData): MessageFailedData {
  return {
    agentId: failure.agentId,
    messageId: failure.messageId,
    code: failure.code,
    message: failure.message,
  };
}

/**
 * The `data` of `message.requires_action` (docs/api/webhooks.md, "Events"): a message paused before tool calls that
 * wait for a person's approval, with those calls and when the wait ends (ISO 8601).
 */
export interface MessageRequiresActionData {
  [key: string]: JsonValue;
  agentId: string;
  messageId: string;
  userId: string | null;
  roomId: string | null;
  pendingToolCalls: { id: string; tool: string; arguments: string }[];
  expiresAt: string;
}

export function messageRequiresActionData(paused: MessageRequiresActionData): MessageRequiresActionData {
  return {
    agentId: paused.agentId,
    messageId: paused.messageId,
    userId: paused.userId,
    roomId: paused.roomId,
    pendingToolCalls: paused.pendingToolCalls.map((call) => ({
      id: call.id,
      tool: call.tool,
      arguments: call.arguments,
    })),
    expiresAt: paused.expiresAt,
  };
}
