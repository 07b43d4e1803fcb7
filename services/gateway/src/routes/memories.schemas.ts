import { MEMORY_BOUNDS } from "@agentry/core";
import { z } from "zod";
import type { ComponentRegistry } from "../openapi/convert.js";
import { createMemoryBody } from "../validation/memories.js";
import { EXAMPLE_ULID } from "./common.schemas.js";

/* The response schemas of the memory routes (docs/api/memories.md), components of the document. */

export const Memory = z
  .object({
    id: z.string().meta({
      description: "The memory's id: `mem_` and a ULID. Treat it as opaque.",
      examples: [`mem_${EXAMPLE_ULID}`],
    }),
    agentId: z.string().meta({ description: "The agent that keeps it.", examples: [`agt_${EXAMPLE_ULID}`] }),
    userId: z.string().meta({ description: "The user it is about.", examples: ["user-42"] }),
    text: z.string().meta({
      description: `The fact, 1 to ${MEMORY_BOUNDS.textMaxLength} characters.`,
      examples: ["The user's favourite colour is teal."],
    }),
    source: z
      .object({
        messageId: z.string().meta({
          description: "The user's message it was learnt from (`msg_…`).",
          examples: [`msg_${EXAMPLE_ULID}`],
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
  id: z.string().meta({ description: "The deleted memory's id.", examples: [`mem_${EXAMPLE_ULID}`] }),
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
