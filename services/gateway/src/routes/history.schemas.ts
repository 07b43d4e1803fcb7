import { FINISH_REASONS, PROVIDER_NAMES } from "@agentry/core";
import { z } from "zod";
import { id, success, timestamp } from "./common.schemas.js";
import { Memory } from "./memories.schemas.js";
import { BackgroundMessage, citations, toolCalls, Usage } from "./messages.schemas.js";

/* Stored conversations and messages (docs/api/history.md), and what deleting or erasing them answers. */

const storedConversationPart = (what: string) =>
  z
    .string()
    .nullable()
    .meta({ description: `The conversation's \`${what}\`; \`null\` for messages sent without one.` });

const assistantOnly = "Assistant messages only.";

/**
 * A stored message, either side of an exchange (docs/api/history.md, "Stored messages"). The fields of the call
 * behind a reply are present on assistant messages only, so they are optional here rather than a second schema.
 */
export const HistoryMessage = z
  .object({
    id: id("msg", "The message's id; an assistant message has the id its send call answered with"),
    agentId: id("agt", "The agent of the conversation"),
    conversationId: id("conv", "The conversation it belongs to"),
    userId: storedConversationPart("userId"),
    roomId: storedConversationPart("roomId"),
    role: z.enum(["user", "assistant"]).meta({
      description: "`user`: the message sent to the agent; `assistant`: the agent's reply.",
    }),
    text: z.string().meta({ description: "The text." }),
    model: z
      .string()
      .optional()
      .meta({ description: `The model that answered, as the provider names it. ${assistantOnly}` }),
    modelProvider: z
      .enum(PROVIDER_NAMES)
      .optional()
      .meta({ description: `The provider that answered. ${assistantOnly}` }),
    finishReason: z
      .enum(FINISH_REASONS)
      .nullable()
      .optional()
      .meta({
        description: `Why generation stopped, as in the send reply; \`null\` for replies stored before it was recorded. ${assistantOnly}`,
      }),
    usage: Usage.optional().meta({ description: `Tokens used by the call. ${assistantOnly}` }),
    latencyMs: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: `Milliseconds from receipt to the complete reply. ${assistantOnly}` }),
    createdAt: timestamp("When the message was received, or the reply was complete."),
    toolCalls: toolCalls.meta({
      description: `The tools the model called while writing the reply, with their outcomes, as in the send reply; absent when it called none. ${assistantOnly}`,
    }),
    citations: citations.meta({
      description: `The chunks of the agent's documents the reply's prompt carried, as in the send reply; absent when it carried none. ${assistantOnly}`,
    }),
  })
  .meta({
    description:
      "A stored message: the one sent to the agent (`user`) or its reply (`assistant`, with the call's model, provider, finish reason, usage and latency). A message and its reply are stored together, once the reply is complete.",
  });

export const Conversation = z
  .object({
    id: id("conv", "The conversation's id, stable for its life"),
    agentId: id("agt", "The agent"),
    userId: storedConversationPart("userId"),
    roomId: storedConversationPart("roomId"),
    messageCount: z.number().int().min(0).meta({ description: "Messages it holds, both roles." }),
    createdAt: timestamp("When its first message was stored."),
    lastMessageAt: timestamp("When its latest message was stored."),
  })
  .meta({
    description:
      "The history of one (agent, `userId`, `roomId`): messages sent without `userId` or `roomId` share the default one, whose `userId` and `roomId` are `null`.",
  });

export const ConversationDeleted = z.object({
  id: id("conv", "The deleted conversation's id"),
  deleted: z.literal(true),
  messagesDeleted: z.number().int().min(0).meta({ description: "Messages deleted with it." }),
});

export const UserErased = z.object({
  userId: z.string().meta({ description: "The erased user id.", examples: ["user-42"] }),
  deleted: z.literal(true),
  messagesDeleted: z.number().int().min(0).meta({
    description:
      "Messages this call deleted, in every agent of the account; `0` when there were none left (erasing again, or a user with no messages).",
  }),
});

/**
 * `GET .../messages/{messageId}`: a stored message, or a background message while its events are kept. Exactly
 * one matches any answer: a stored message has `role` and `conversationId` and no `status`; a background message
 * has `status` and neither of the others.
 */
export function messageByIdResponse() {
  return success(z.xor([HistoryMessage, BackgroundMessage])).meta({
    description:
      "A stored message (`HistoryMessage`), or, for a message sent with `background: true` while its events are kept, a `BackgroundMessage` (it has `status`; a stored message has `role` instead).",
  });
}

/**
 * One line of a user's export: a stored message, or, after the messages, one of the user's memories. Exactly one
 * matches any line: a message has `role` and `conversationId`, a memory has `source` and neither of them.
 */
export const UserExportLine = z.xor([HistoryMessage, Memory]).meta({
  description:
    "One line of a user's export: a stored message (`HistoryMessage`, its id `msg_…`, with `role` and `conversationId`), or one of the user's memories (`Memory`, its id `mem_…`, with `source`). The messages come first, then the memories.",
});
