import { CONFLICT_MODES, MESSAGE_BOUNDS } from "@agentry/core";
import { z } from "zod";
import { plainText } from "./text.js";

const conversationId = (what: string) =>
  plainText(1, MESSAGE_BOUNDS.idMaxLength, `must not be empty; omit ${what} to use the default conversation`);

export const sendMessageBody = z
  .strictObject(
    {
      text: plainText(1, MESSAGE_BOUNDS.textMaxLength).meta({
        description: "The message text.",
        examples: ["Hello! What can you do?"],
      }),
      userId: conversationId("userId")
        .optional()
        .meta({
          description:
            "Identifies the user, for conversation continuity: send the same value for the same user. Unset is a user of its own.",
          examples: ["user-42"],
        }),
      roomId: conversationId("roomId")
        .optional()
        .meta({
          description:
            "Identifies the conversation room, for multi-user conversations. Unset is a room of its own.",
          examples: ["support-room-7"],
        }),
      context: z
        .record(z.string(), z.json(), { error: "must be a JSON object" })
        .optional()
        .meta({
          description:
            "Extra context for this message only: the model receives it as system context; it is never stored.",
          examples: [{ locale: "en-GB" }],
        }),
      stream: z.boolean({ error: "must be a boolean" }).optional().meta({
        description:
          "`true` answers with server-sent events (`text/event-stream`), each with an `id:` that `GET .../messages/{messageId}/events` resumes after. Default `false`.",
      }),
      background: z.boolean({ error: "must be a boolean" }).optional().meta({
        description:
          "`true` answers 202 with the reply's id at once and generates the reply whatever happens to the caller; `GET .../messages/{messageId}` tells how it stands. Not with `stream`. Default `false`.",
      }),
      onDisconnect: z
        .enum(["cancel", "continue"], { error: "must be 'cancel' or 'continue'" })
        .optional()
        .meta({
          description:
            "What a stream does when the caller goes away: `cancel` stops generating (nothing is stored); `continue` generates the whole reply and stores it, and the stream can be resumed. Default `cancel`.",
        }),
      onConflict: z
        .enum(CONFLICT_MODES, { error: `must be one of ${CONFLICT_MODES.join(", ")}` })
        .optional()
        .meta({
          description:
            'What this message does when its conversation (the agent, `userId` and `roomId`) has a message in progress: `reject` answers 409 `CONVERSATION_BUSY`; `enqueue` answers it after the messages before it, in the order they came; `interrupt` cancels the message in progress (its reply is stored with the text it had, `finishReason: "cancelled"`) and every one waiting before it, then answers this one. Default: the agent\'s `settings.concurrentMessages`, else `enqueue`.',
        }),
    },
    { error: "must be a JSON object" },
  )
  .refine((body) => !(body.background === true && body.stream === true), {
    path: ["background"],
    message:
      "cannot be combined with stream; follow a background message at GET .../messages/{messageId}/events",
  });

export type SendMessageBody = z.infer<typeof sendMessageBody>;
