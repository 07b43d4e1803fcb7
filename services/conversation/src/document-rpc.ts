import { DOCUMENT_BOUNDS } from "@agentry/core";
import { AppError, invalid } from "@agentry/errors";
import { type CreateDocumentRequest, type Document, DocumentSchema } from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConversationContext } from "./context.js";
import { documentText, documentTooLarge, documentType, newDocument, unsupportedType } from "./documents.js";
import type { DocumentRecord } from "./store/types.js";

/** Reads, chunks and stores an uploaded document (CreateDocument). */
export async function createDocument(
  ctx: ConversationContext,
  accountId: string,
  agentId: string,
  request: CreateDocumentRequest,
): Promise<DocumentRecord> {
  const type = documentType(request.contentType);
  if (!type) throw unsupportedType(request.contentType);
  if (request.content.byteLength > DOCUMENT_BOUNDS.maxBytes) throw documentTooLarge();
  if ([...request.title].length > DOCUMENT_BOUNDS.titleMaxLength) {
    throw invalid("title", `must be at most ${DOCUMENT_BOUNDS.titleMaxLength} characters`);
  }
  if ([...request.source].length > DOCUMENT_BOUNDS.sourceMaxLength) {
    throw invalid("source", `must be at most ${DOCUMENT_BOUNDS.sourceMaxLength} characters`);
  }
  const text = await documentText(type, request.content);
  const document = newDocument(
    { title: request.title, type, sizeBytes: request.content.byteLength, source: request.source.trim() },
    text,
  );
  const stored = await ctx.store.addDocument(accountId, agentId, document);
  // Nothing stored: the agent was deleted meanwhile.
  if (!stored) throw new AppError("AGENT_NOT_FOUND", `Agent ${agentId} does not exist.`);
  ctx.memoryVectors?.indexChunks(accountId, agentId, stored.id, document.chunks);
  ctx.logger.info(
    { agentId, documentId: stored.id, contentType: type, chunks: stored.chunkCount },
    "document stored",
  );
  return stored;
}

export function toDocument(document: DocumentRecord): Document {
  return create(DocumentSchema, {
    id: document.id,
    agentId: document.agentId,
    title: document.title,
    contentType: document.contentType,
    sizeBytes: BigInt(document.sizeBytes),
    textLength: document.textLength,
    chunks: document.chunkCount,
    source: document.source,
    createTime: timestampFromDate(new Date(document.createdAt)),
  });
}
