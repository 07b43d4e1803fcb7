import { knowledgeReferences, missingSources } from "@agentry/characters";
import { DOCUMENT_BOUNDS, isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { type Document, HistoryOrder } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { readUpload, typeOfFileName } from "../http/upload.js";
import { CURSOR_NOTE } from "../openapi/operations.js";
import {
  createDocumentBody,
  DOCUMENT_TYPES,
  listDocumentsQuery,
  UPLOAD_FORM,
} from "../validation/documents.js";
import { defineRoute, type RequestContext, type Route } from "./define.js";

/** A document as every route presents it (docs/api/documents.md, "The document object"). */
export function presentDocument(document: Document) {
  return {
    id: document.id,
    agentId: document.agentId,
    title: document.title,
    contentType: document.contentType,
    sizeBytes: Number(document.sizeBytes),
    textLength: document.textLength,
    chunks: document.chunks,
    source: document.source || null,
    createdAt: (document.createTime ? timestampDate(document.createTime) : new Date(0)).toISOString(),
  };
}

/** The agent of a document route, once it is known to be the caller's (another account's is answered as missing). */
async function callersAgent({ ctx, gateway, principal, rpc }: RequestContext) {
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
  return agent;
}

function documentId(id: string): string {
  if (!isId("document", id)) {
    throw new AppError("DOCUMENT_NOT_FOUND", `Document ${JSON.stringify(id)} does not exist.`);
  }
  return id;
}

const MIB = DOCUMENT_BOUNDS.maxBytes / (1024 * 1024);

const documentParam = {
  documentId: {
    description:
      "The document's id (`doc_…`). An id of another agent's or account's document, or not of that form, is answered `404 DOCUMENT_NOT_FOUND`.",
    example: "doc_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
};

/** The files an agent answers from (docs/api/documents.md). */
export const documentRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/agents/:agentId/documents",
    scope: "agents:write",
    limit: "createPerMinute",
    operationId: "createDocument",
    tag: "Agents",
    summary: "Upload a document",
    description: `Adds a file the agent answers from: ${DOCUMENT_TYPES.join(", ")}, at most ${MIB} MiB. Its text is extracted (HTML without markup, PDF page by page), cut into chunks of about 1,200 characters that overlap by 200, and indexed for full-text search; each later message to the agent carries the chunks that match it best, within \`settings.knowledgeTokenBudget\` (${DOCUMENT_BOUNDS.knowledgeTokenBudget.default} estimated tokens by default), and the reply lists them in \`citations\`. Send the file as \`multipart/form-data\` (part \`file\`, and optionally \`title\` and \`source\`), or as JSON (\`text\`, or \`contentBase64\` with \`contentType\`) within the 1 MiB of a JSON body. Another type is answered \`415 UNSUPPORTED_MEDIA_TYPE\` naming the supported ones; a larger file \`413 PAYLOAD_TOO_LARGE\`; a file without text \`400 INVALID_REQUEST\`.`,
    body: {
      schema: createDocumentBody,
      component: "CreateDocumentRequest",
      multipart: {
        schema: UPLOAD_FORM,
        description: `The file as \`multipart/form-data\` (at most ${MIB} MiB), or JSON of at most 1 MiB.`,
      },
    },
    success: { status: 201, schema: "DocumentResponse", description: "The document stored." },
    errors: ["AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      let upload: { title: string; contentType: string; content: Uint8Array; source: string };
      if (ctx.is("multipart/form-data")) {
        const { content, contentType, fileName, fields } = await readUpload(ctx);
        const type =
          !contentType || contentType === "application/octet-stream" ? typeOfFileName(fileName) : "";
        upload = {
          title: (fields.title ?? "").trim() || fileName,
          contentType: type || contentType || "application/octet-stream",
          content,
          source: fields.source ?? "",
        };
      } else {
        const body = await input.body();
        upload = {
          title: body.title ?? "",
          contentType: body.contentType,
          content:
            body.text !== undefined
              ? new TextEncoder().encode(body.text)
              : new Uint8Array(Buffer.from(body.contentBase64 ?? "", "base64")),
          source: body.source ?? "",
        };
      }
      const { document } = await gateway.conversations.createDocument(
        { accountId: principal.accountId, agentId: agent.id, ...upload },
        rpc,
      );
      ctx.status = 201;
      ctx.body = { success: true, data: presentDocument(document!) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/documents",
    scope: "agents:read",
    limit: "listPerMinute",
    operationId: "listDocuments",
    tag: "Agents",
    summary: "List an agent's documents",
    description: `The files the agent answers from, newest first unless \`order=asc\`. ${CURSOR_NOTE}`,
    query: listDocumentsQuery,
    pagination: "cursor",
    success: { status: 200, schema: "DocumentListResponse", description: "One page of documents." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      const query = input.query();
      const response = await gateway.conversations.listDocuments(
        {
          accountId: principal.accountId,
          agentId: agent.id,
          page: {
            limit: query.limit,
            before: query.before ?? "",
            after: query.after ?? "",
            order: query.order === "asc" ? HistoryOrder.ASC : HistoryOrder.DESC,
          },
        },
        rpc,
      );
      ctx.body = {
        success: true,
        data: response.documents.map(presentDocument),
        pagination: { limit: query.limit, hasMore: response.hasMore },
      };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/documents/:documentId",
    params: documentParam,
    scope: "agents:read",
    operationId: "getDocument",
    tag: "Agents",
    summary: "Get a document",
    description: "One of the files the agent answers from.",
    success: { status: 200, schema: "DocumentResponse", description: "The document." },
    errors: ["AGENT_NOT_FOUND", "DOCUMENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      const { document } = await gateway.conversations.getDocument(
        {
          accountId: principal.accountId,
          agentId: agent.id,
          documentId: documentId(input.params.documentId),
        },
        rpc,
      );
      ctx.body = { success: true, data: presentDocument(document!) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/agents/:agentId/documents/:documentId",
    params: documentParam,
    scope: "agents:write",
    limit: "deletePerMinute",
    operationId: "deleteDocument",
    tag: "Agents",
    summary: "Delete a document",
    description:
      "Deletes a document and its chunks: no later message carries them. Replies already stored keep their citations. Deleting it again is answered `404 DOCUMENT_NOT_FOUND`.",
    success: { status: 200, schema: "DocumentDeletedResponse", description: "The document was deleted." },
    errors: ["AGENT_NOT_FOUND", "DOCUMENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      const id = documentId(input.params.documentId);
      await gateway.conversations.deleteDocument(
        { accountId: principal.accountId, agentId: agent.id, documentId: id },
        rpc,
      );
      ctx.body = { success: true, data: { id, deleted: true } };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/knowledge-sources",
    scope: "agents:read",
    operationId: "listKnowledgeSources",
    tag: "Agents",
    sdk: { resource: ["agents", "documents"], method: "sources" },
    summary: "List a character's knowledge files",
    description:
      "The file and folder references of the agent's imported character (`knowledge` entries `{path}` and `{directory}`, kept in `personality.knowledgeSources`), and which of them no document answers yet: upload each file with its path as `source` (a folder's: a path inside it).",
    success: { status: 200, schema: "KnowledgeSourcesResponse", description: "The references." },
    errors: ["AGENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      const { sources } = await gateway.conversations.listDocuments(
        { accountId: principal.accountId, agentId: agent.id, page: { limit: 1 } },
        rpc,
      );
      const personality = agent.spec?.personality;
      const missing = new Set(missingSources(personality, sources));
      ctx.body = {
        success: true,
        data: {
          references: knowledgeReferences(personality).map(({ path, folder }) => ({
            path,
            kind: folder ? "folder" : "file",
            uploaded: !missing.has(path),
          })),
          missing: [...missing],
        },
      };
    },
  }),
];
