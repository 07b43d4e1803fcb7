import { MEMORY_BOUNDS } from "@agentry/core";
import { z } from "zod";
import { createMemoryBody, listMemoriesQuery } from "../validation/memories.js";
import type { ComponentRegistry } from "./convert.js";
import type { OperationDoc } from "./operations.js";

/*
 * The document's part for memories (docs/api/memories.md): the operations and their component schemas, merged
 * into the document by `OPERATION_DOCS` and `componentSchemas`.
 */

const CURSOR_NOTE =
  "Cursor-paged: `limit` (1 to 100, default 20), then `before` (or `after`, for `order=asc`) the last item's id for the next page.";

export const MEMORY_OPERATION_DOCS: Record<string, OperationDoc> = {
  "GET /v1/agents/:agentId/memories": {
    operationId: "listMemories",
    tag: "History",
    summary: "List an agent's memories",
    description: `What the agent remembers of its users: facts it learnt after turns, or that were added by hand, newest first unless \`order=asc\`. \`userId\`: only that user's; \`q\`: only those containing every word of the text (full-text search). ${CURSOR_NOTE}`,
    query: listMemoriesQuery,
    pagination: "cursor",
    success: { status: 200, schema: "MemoryListResponse", description: "One page of memories." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
  },
  "POST /v1/agents/:agentId/memories": {
    operationId: "createMemory",
    tag: "History",
    summary: "Add a memory",
    description: `Adds a fact about a user by hand; it reaches that user's later prompts with this agent when relevant. A fact the user already has (the same text, ignoring case, punctuation and spacing) is not stored twice: the answer is the one stored. Beyond the agent's \`settings.memoryLimit\` per user (${MEMORY_BOUNDS.memoryLimit.default} by default) the user's oldest memories are deleted.`,
    requestBody: "CreateMemoryRequest",
    success: {
      status: 201,
      schema: "MemoryResponse",
      description: "The memory stored, or the same one the user already had.",
    },
    errors: ["AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "DELETE /v1/agents/:agentId/memories/:memoryId": {
    operationId: "deleteMemory",
    tag: "History",
    summary: "Delete a memory",
    description:
      "Deletes one memory: it reaches no later prompt, and the same fact may be learnt again. Deleting it again is answered `404 MEMORY_NOT_FOUND`.",
    success: { status: 200, schema: "MemoryDeletedResponse", description: "The memory was deleted." },
    errors: ["AGENT_NOT_FOUND", "MEMORY_NOT_FOUND"],
  },
};

/** The `memoryId` path parameter. */
export const MEMORY_PATH_PARAMETER = {
  description:
    "The memory's id (`mem_…`). An id of another agent's or account's memory, or not of that form, is answered `404 MEMORY_NOT_FOUND`.",
  example: "mem_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
};

const EXAMPLE_ID = "01JCZ3S8Q5M2T7V9X0B4D6F8H1";

export const Memory = z
  .object({
    id: z.string().meta({
      description: "The memory's id: `mem_` and a ULID. Treat it as opaque.",
      examples: [`mem_${EXAMPLE_ID}`],
    }),
    agentId: z.string().meta({ description: "The agent that keeps it.", examples: [`agt_${EXAMPLE_ID}`] }),
    userId: z.string().meta({ description: "The user it is about.", examples: ["user-42"] }),
    text: z.string().meta({
      description: `The fact, 1 to ${MEMORY_BOUNDS.textMaxLength} characters.`,
      examples: ["The user's favourite colour is teal."],
    }),
    source: z
      .object({
        messageId: z.string().meta({
          description: "The user's message it was learnt from (`msg_…`).",
          examples: [`msg_${EXAMPLE_ID}`],
        }),
      })
      .nullable()
      .meta({ description: "Where it was learnt; `null` when it was added by hand." }),
    createdAt: z.iso
      .datetime()
      .meta({ description: "When it was stored.", examples: ["2026-11-20T09:30:00.000Z"] }),
  })
  .meta({ description: "A fact an agent keeps about one of its users (docs/api/memories.md)." });

const MemoryDeleted = z.object({
  id: z.string().meta({ description: "The deleted memory's id.", examples: [`mem_${EXAMPLE_ID}`] }),
  deleted: z.literal(true),
});

/** Adds the memory schemas; `success` and `cursorList` are the document's envelopes. */
export function registerMemorySchemas(
  requests: ComponentRegistry,
  responses: ComponentRegistry,
  envelopes: {
    success: <T extends z.ZodType>(data: T) => z.ZodType;
    cursorList: <T extends z.ZodType>(item: T) => z.ZodType;
  },
): void {
  requests.add(createMemoryBody, { id: "CreateMemoryRequest" });
  responses.add(Memory, { id: "Memory" });
  responses.add(envelopes.success(Memory), { id: "MemoryResponse" });
  responses.add(envelopes.cursorList(Memory), { id: "MemoryListResponse" });
  responses.add(envelopes.success(MemoryDeleted), { id: "MemoryDeletedResponse" });
}
