import { z } from "zod";

/** Bounds of a message request; the OpenAPI document states the same numbers. */
export const MESSAGE_BOUNDS = {
  textMaxLength: 100_000,
  idMaxLength: 256,
} as const;

const conversationId = (what: string) =>
  z
    .string({ error: "must be a string" })
    .min(1, `must not be empty; omit ${what} to use the default conversation`)
    .max(MESSAGE_BOUNDS.idMaxLength, `must be at most ${MESSAGE_BOUNDS.idMaxLength} characters`);

export const sendMessageBody = z.strictObject(
  {
    text: z
      .string({ error: "must be a string" })
      .min(1, "must not be empty")
      .max(MESSAGE_BOUNDS.textMaxLength, `must be at most ${MESSAGE_BOUNDS.textMaxLength} characters`),
    userId: conversationId("userId").optional(),
    roomId: conversationId("roomId").optional(),
    context: z.record(z.string(), z.json(), { error: "must be a JSON object" }).optional(),
    stream: z.boolean({ error: "must be a boolean" }).optional(),
  },
  { error: "must be a JSON object" },
);

export type SendMessageBody = z.infer<typeof sendMessageBody>;
