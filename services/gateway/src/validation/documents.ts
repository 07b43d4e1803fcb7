import { DOCUMENT_BOUNDS } from "@agentry/core";
import { z } from "zod";
import { exactlyOneOf } from "./exclusive.js";
import { cursorLimit, cursorOrder, cursors, oneCursor } from "./history.js";
import { trimmedText } from "./text.js";

/* The query and JSON body of the document routes (docs/api/documents.md). */

/** The media types a document may be uploaded as (the conversation service reads them). */
export const DOCUMENT_TYPES = ["text/plain", "text/markdown", "text/html", "application/pdf"] as const;

export const listDocumentsQuery = z
  .strictObject({
    limit: cursorLimit,
    ...cursors("document", "doc", "document"),
    order: cursorOrder,
  })
  .superRefine(oneCursor);

const title = trimmedText(0, DOCUMENT_BOUNDS.titleMaxLength).meta({
  description: `The document's title, 0 to ${DOCUMENT_BOUNDS.titleMaxLength} characters; empty or absent: the file's name, else the first line of its text.`,
  examples: ["Opening hours"],
});

const source = trimmedText(0, DOCUMENT_BOUNDS.sourceMaxLength).meta({
  description:
    "The knowledge reference of the agent's imported character this file answers (`personality.knowledgeSources`: a file's path, or a path inside a folder's), as `GET /v1/agents/{agentId}/knowledge-sources` lists them.",
  examples: ["manuals/bicycle.pdf"],
});

/** The JSON form of an upload: the text itself, or the file in base64, within the 1 MiB of a JSON body. */
export const createDocumentBody = exactlyOneOf(
  z.strictObject(
    {
      title: title.optional(),
      contentType: z
        .enum(DOCUMENT_TYPES)
        .default("text/plain")
        .meta({
          description: "How to read the content; `text/plain` by default.",
          examples: ["text/markdown"],
        }),
      text: z
        .string({ error: "must be a string" })
        .optional()
        .meta({
          description:
            "The document's text (plain, Markdown or HTML, as `contentType` says). Give it or `contentBase64`.",
          examples: ["# Opening hours\n\nThe reading room opens at nine."],
        }),
      contentBase64: z.base64({ error: "must be base64" }).optional().meta({
        description: "The file's bytes in base64 (a PDF, for instance). Give it or `text`.",
      }),
      source: source.optional(),
    },
    { error: "must be a JSON object" },
  ),
  "text",
  "contentBase64",
  "give exactly one of text and contentBase64",
);

export type CreateDocumentBody = z.infer<typeof createDocumentBody>;

/** The form of a multipart upload, as the document describes it. */
export const UPLOAD_FORM = {
  type: "object",
  required: ["file"],
  properties: {
    file: {
      type: "string",
      contentMediaType: "application/octet-stream",
      description: `The file, at most ${DOCUMENT_BOUNDS.maxBytes / (1024 * 1024)} MiB, of a type its part's Content-Type (or, for \`application/octet-stream\`, its name's extension: .txt, .md, .html, .pdf) says: ${DOCUMENT_TYPES.join(", ")}.`,
    },
    title: { type: "string", maxLength: DOCUMENT_BOUNDS.titleMaxLength, description: "As in the JSON form." },
    source: {
      type: "string",
      maxLength: DOCUMENT_BOUNDS.sourceMaxLength,
      description: "As in the JSON form.",
    },
  },
} as const;
