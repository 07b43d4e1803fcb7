import type { JsonValue } from "./types.js";

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
}

/**
 * The reply object of decisions.md, "Messages": the non-stream reply's `data`, the stream's `message.completed`
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
  };
}

/** The `data` of `message.completed`: the reply object, exactly as the send call answered it. */
export function messageCompletedData(reply: ReplyView): ReplyJson {
  return presentReply(reply);
}

/**
 * The `data` of `message.failed` (decisions.md, "Webhooks"): a send whose reply failed, with the error code (of the
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
