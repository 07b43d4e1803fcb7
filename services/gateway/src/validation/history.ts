import { type IdKind, isId, MESSAGE_BOUNDS, PAGE_LIMIT } from "@agentry/core";
import { z } from "zod";
import { NUL_FREE_PATTERN } from "../http/body.js";
import { charCount } from "./text.js";

/*
 * Query and path values of the history routes (docs/api/lists-and-pagination.md, "Cursor pagination"; docs/api/history.md). A
 * parameter given twice arrives as an array and is refused, as List Agents refuses it.
 */

/** Items per page when the caller asks for none, and the most it may ask for. */
export const HISTORY_PAGE = { defaultLimit: PAGE_LIMIT.default, maxLimit: PAGE_LIMIT.max } as const;

const ULID_PATTERN = "[0-9A-HJKMNP-TV-Z]{26}";

const once = { error: "must be given once" };

/** A user or room id, as a message names it: 1 to 256 characters, no NUL. */
export function conversationPart(description: string, example: string) {
  const tooLong = `must be at most ${MESSAGE_BOUNDS.idMaxLength} characters`;
  return z
    .string(once)
    .min(1, "must not be empty")
    .refine((value) => charCount(value) <= MESSAGE_BOUNDS.idMaxLength, tooLong)
    .refine((value) => !value.includes("\u0000"), "must not contain U+0000")
    .meta({
      description,
      minLength: 1,
      maxLength: MESSAGE_BOUNDS.idMaxLength,
      pattern: NUL_FREE_PATTERN,
      examples: [example],
    });
}

/** An identifier of one kind (`msg_…`); anything else cannot name one and is refused as `issue`. */
export function idOf(kind: IdKind, prefix: string, issue: string, description: string) {
  return z
    .string(once)
    .refine((value) => isId(kind, value), issue)
    .meta({
      description,
      pattern: `^${prefix}_${ULID_PATTERN}$`,
      examples: [`${prefix}_01JCZ3S8Q5M2T7V9X0B4D6F8H1`],
    });
}

/** `limit` of a cursor-paged list (docs/api/lists-and-pagination.md, "Cursor pagination"). */
export const cursorLimit = z
  .string(once)
  .regex(/^\d+$/, `must be an integer from 1 to ${HISTORY_PAGE.maxLimit}`)
  .transform(Number)
  .pipe(
    z
      .number()
      .int()
      .min(1, `must be an integer from 1 to ${HISTORY_PAGE.maxLimit}`)
      .max(HISTORY_PAGE.maxLimit, `must be an integer from 1 to ${HISTORY_PAGE.maxLimit}`),
  )
  .default(HISTORY_PAGE.defaultLimit)
  .meta({ description: `Items per page, from 1 to ${HISTORY_PAGE.maxLimit}.` });

/** `before` and `after` of a cursor-paged list of `what`s, each an id of one of its items. */
export function cursors(kind: IdKind, prefix: string, what: string, whats = `${what}s`) {
  const issue = `must be the id of a ${what} (${prefix}_…), as a page of this list gives it`;
  return {
    before: idOf(
      kind,
      prefix,
      issue,
      `Only ${whats} older than this one (its id): the page just below it. The next page of a \`desc\` list is \`before\` its last item's id. Not with \`after\`.`,
    ).optional(),
    after: idOf(
      kind,
      prefix,
      issue,
      `Only ${whats} newer than this one (its id): the page just above it. The next page of an \`asc\` list is \`after\` its last item's id. Not with \`before\`.`,
    ).optional(),
  };
}

/** `before` and `after` name opposite directions; one page cannot go both ways. */
export function oneCursor(
  query: { before?: string | undefined; after?: string | undefined },
  ctx: z.RefinementCtx,
) {
  if (query.before !== undefined && query.after !== undefined) {
    ctx.addIssue({ code: "custom", path: ["after"], message: "cannot be combined with before" });
  }
}

/** `order` of a cursor-paged list. */
export const cursorOrder = z
  .enum(["asc", "desc"], { error: "must be 'asc' or 'desc'" })
  .default("desc")
  .meta({
    description: "`desc`: newest first; `asc`: oldest first. Cursors keep their meaning either way.",
  });

export const listConversationsQuery = z
  .strictObject({
    userId: conversationPart("Only the conversations of this user id (in every room).", "user-42").optional(),
    roomId: conversationPart(
      "Only the conversations in this room id (of every user).",
      "support-room-7",
    ).optional(),
    limit: cursorLimit,
    ...cursors("conversation", "conv", "conversation"),
  })
  .superRefine(oneCursor);

export type ListConversationsQuery = z.infer<typeof listConversationsQuery>;

export const listMessagesQuery = z
  .strictObject({
    conversationId: z
      .string(once)
      .meta({
        description:
          "Only the messages of this conversation (`conv_…`). Not with `userId` or `roomId`. An id that is not one of the agent's conversations is answered `404 CONVERSATION_NOT_FOUND`.",
        examples: ["conv_01JCZ3S8Q5M2T7V9X0B4D6F8H1"],
      })
      .optional(),
    userId: conversationPart(
      "Only the messages of this user id, in every room; with `roomId`, one conversation.",
      "user-42",
    ).optional(),
    roomId: conversationPart(
      "Only the messages in this room id, of every user; with `userId`, one conversation.",
      "support-room-7",
    ).optional(),
    limit: cursorLimit,
    ...cursors("message", "msg", "message"),
    order: cursorOrder,
  })
  .superRefine((query, ctx) => {
    oneCursor(query, ctx);
    if (query.conversationId !== undefined && (query.userId !== undefined || query.roomId !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["conversationId"],
        message: "cannot be combined with userId or roomId: a conversation is one user in one room",
      });
    }
  });

export type ListMessagesQuery = z.infer<typeof listMessagesQuery>;

/** The path of the user routes: its `userId` is what a message's `userId` can be. */
export const userPath = z.object({
  userId: conversationPart("The user id, as messages were sent with it (URL-encoded).", "user-42"),
});
