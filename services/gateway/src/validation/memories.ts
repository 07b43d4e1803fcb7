import { MEMORY_BOUNDS } from "@agentry/core";
import { z } from "zod";
import { conversationPart, cursorLimit, cursorOrder, cursors, oneCursor } from "./history.js";
import { trimmedText } from "./text.js";

/* The query and body of the memory routes (docs/api/memories.md). */

/** The most characters of a search query. */
export const MEMORY_QUERY_MAX_LENGTH = 500;

export const listMemoriesQuery = z
  .strictObject({
    userId: conversationPart("Only the memories of this user id.", "user-42").optional(),
    q: trimmedText(1, MEMORY_QUERY_MAX_LENGTH)
      .optional()
      .meta({
        description: `Only the memories that contain every word of this text (full-text search: case, punctuation and word endings do not matter), 1 to ${MEMORY_QUERY_MAX_LENGTH} characters.`,
        examples: ["favourite colour"],
      }),
    limit: cursorLimit,
    ...cursors("memory", "mem", "memory", "memories"),
    order: cursorOrder,
  })
  .superRefine(oneCursor);

export type ListMemoriesQuery = z.infer<typeof listMemoriesQuery>;

export const createMemoryBody = z.strictObject(
  {
    userId: conversationPart("The user the memory is about, as messages name them.", "user-42"),
    text: trimmedText(1, MEMORY_BOUNDS.textMaxLength).meta({
      description: `The fact, 1 to ${MEMORY_BOUNDS.textMaxLength} characters once trimmed.`,
      examples: ["The user's favourite colour is teal."],
    }),
  },
  { error: "must be a JSON object" },
);

export type CreateMemoryBody = z.infer<typeof createMemoryBody>;
