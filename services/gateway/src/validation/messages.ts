import { MESSAGE_BOUNDS } from "@agentry/core";
import { z } from "zod";
import { plainText } from "./text.js";

const conversationId = (what: string) =>
  plainText(1, MESSAGE_BOUNDS.idMaxLength, `must not be empty; omit ${what} to use the default conversation`);

export const sendMessageBody = z.strictObject(
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
      description: "`true` answers with server-sent events (`text/event-stream`). Default `false`.",
    }),
  },
  { error: "must be a JSON object" },
);

export type SendMessageBody = z.infer<typeof sendMessageBody>;
