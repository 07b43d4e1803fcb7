import { newId } from "@agentry/core";
import type { AppError } from "@agentry/errors";
import {
  messageCompletedData,
  messageFailedData,
  messageRequiresActionData,
  type PublicEvent,
  type ReplyView,
} from "@agentry/events";
import type { ReplyRecord } from "./service.js";
import type { ConversationKey, NewOutboxEvent, OutboxEvent } from "./store/types.js";
import type { PendingToolCall } from "./tool-loop.js";

/*
 * The message events (docs/api/webhooks.md, "Events"), made here and written by the stores in the transaction of what
 * they tell of: `message.completed` with the stored exchange, `message.failed` with the record of the failed call.
 * Their `data` is written as receivers get it, so the relay only hands rows over.
 */

/** A reply record as the public presentation takes it: what the send call answers, field for field. */
export function replyView(reply: ReplyRecord): ReplyView {
  return {
    id: reply.id,
    agentId: reply.agentId,
    userId: reply.userId ?? null,
    roomId: reply.roomId ?? null,
    text: reply.text,
    model: reply.model,
    modelProvider: reply.modelProvider,
    finishReason: reply.finishReason,
    usage: { ...reply.usage },
    latencyMs: reply.latencyMs,
    createdAt: reply.createdAt.toISOString(),
    toolCalls: reply.toolCalls,
  };
}

/** `message.completed`: the reply object, exactly as the send answered it (streamed or not). */
export function messageCompleted(accountId: string, reply: ReplyRecord): NewOutboxEvent {
  return {
    id: newId("event"),
    type: "message.completed",
    accountId,
    agentId: reply.agentId,
    createdAt: reply.createdAt.toISOString(),
    data: messageCompletedData(replyView(reply)),
  };
}

/**
 * `message.failed`: the send ended with `error` instead of a reply; `messageId` is the id the reply would have
 * had (the one a stream's `message.started` named). A caller that went away is no failure and has no event.
 */
export function messageFailed(
  key: ConversationKey,
  messageId: string,
  error: AppError,
  at: Date,
): NewOutboxEvent {
  return {
    id: newId("event"),
    type: "message.failed",
    accountId: key.accountId,
    agentId: key.agentId,
    createdAt: at.toISOString(),
    data: messageFailedData({
      agentId: key.agentId,
      messageId,
      code: error.code,
      message: error.message,
    }),
  };
}

/** `message.requires_action`: the message paused before `calls`, which wait for a person's approval until `expiresAt`. */
export function messageRequiresAction(
  record: { accountId: string; agentId: string; id: string; userId: string | null; roomId: string | null },
  calls: readonly PendingToolCall[],
  expiresAt: Date,
): NewOutboxEvent {
  return {
    id: newId("event"),
    type: "message.requires_action",
    accountId: record.accountId,
    agentId: record.agentId,
    createdAt: new Date().toISOString(),
    data: messageRequiresActionData({
      agentId: record.agentId,
      messageId: record.id,
      userId: record.userId,
      roomId: record.roomId,
      pendingToolCalls: calls.map((call) => ({ id: call.id, tool: call.tool, arguments: call.arguments })),
      expiresAt: expiresAt.toISOString(),
    }),
  };
}

/** What the webhooks service is handed of an outbox row: the event as written. */
export function publicEvent(event: OutboxEvent): PublicEvent {
  return {
    id: event.id,
    type: event.type,
    accountId: event.accountId,
    createdAt: event.createdAt,
    data: event.data,
  };
}
