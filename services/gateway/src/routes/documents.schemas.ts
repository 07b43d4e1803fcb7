import { DOCUMENT_BOUNDS } from "@agentry/core";
import { z } from "zod";
import type { ComponentRegistry } from "../openapi/convert.js";
import { createDocumentBody, DOCUMENT_TYPES } from "../validation/documents.js";
import { EXAMPLE_ULID } from "./common.schemas.js";

/* The response schemas of the document routes (docs/api/documents.md), components of the document. */

export const Document = z
  .object({
    id: z.string().meta({
      description: "The document's id: `doc_` and a ULID. Treat it as opaque.",
      examples: [`doc_${EXAMPLE_ULID}`],
    }),
    agentId: z
      .string()
      .meta({ description: "The agent that answers from it.", examples: [`agt_${EXAMPLE_ULID}`] }),
    title: z.string().meta({
      description: `Its title, 1 to ${DOCUMENT_BOUNDS.titleMaxLength} characters: the one given, else the file's name, else the first line of its text.`,
      examples: ["Opening hours"],
    }),
    contentType: z.enum(DOCUMENT_TYPES).meta({ description: "The type it was read as." }),
    sizeBytes: z.number().int().min(0).meta({ description: "The size of the file uploaded, in bytes." }),
    textLength: z.number().int().min(1).meta({ description: "Characters of text read from it." }),
    chunks: z.number().int().min(1).meta({ description: "How many chunks its text was cut into." }),
    source: z
      .string()
      .nullable()
      .meta({
        description:
          "The knowledge reference of the agent's character it answers; `null` when none was given.",
        examples: ["manuals/bicycle.pdf"],
      }),
    createdAt: z.iso
      .datetime()
      .meta({ description: "When it was stored.", examples: ["2026-11-20T09:30:00.000Z"] }),
  })
  .meta({ description: "A file an agent answers from (docs/api/documents.md)." });

const DocumentDeleted = z.object({
  id: z.string().meta({ description: "The deleted document's id.", examples: [`doc_${EXAMPLE_ULID}`] }),
  deleted: z.literal(true),
});

const KnowledgeSources = z.object({
  references: z
    .array(
      z.object({
        path: z
          .string()
          .meta({ description: "The path the character file names.", examples: ["manuals/bicycle.pdf"] }),
        kind: z.enum(["file", "folder"]).meta({ description: "Whether it names a file or a folder." }),
        uploaded: z.boolean().meta({
          description:
            "Whether a document answers it: one uploaded with this path as `source` (a folder's: a path inside it).",
        }),
      }),
    )
    .meta({ description: "The character's file and folder references, in the file's order." }),
  missing: z.array(z.string()).meta({
    description: "The paths of the references no document answers yet.",
    examples: [["manuals/kitchen"]],
  }),
});

/** Adds the document schemas; `success` and `cursorList` are the document's envelopes. */
export function registerDocumentSchemas(
  requests: ComponentRegistry,
  responses: ComponentRegistry,
  envelopes: {
    success: <T extends z.ZodType>(data: T) => z.ZodType;
    cursorList: <T extends z.ZodType>(item: T) => z.ZodType;
  },
): void {
  requests.add(createDocumentBody, { id: "CreateDocumentRequest" });
  responses.add(Document, { id: "Document" });
  responses.add(envelopes.success(Document), { id: "DocumentResponse" });
  responses.add(envelopes.cursorList(Document), { id: "DocumentListResponse" });
  responses.add(envelopes.success(DocumentDeleted), { id: "DocumentDeletedResponse" });
  responses.add(envelopes.success(KnowledgeSources), { id: "KnowledgeSourcesResponse" });
}
