import type { RequestOptions, Transport } from "../core.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import type {
  Document,
  DocumentCreateParams,
  DocumentDeleted,
  DocumentListParams,
  DocumentUploadParams,
  KnowledgeSources,
} from "../types.js";
import { idSegment } from "./path.js";

/**
 * The files an agent answers from (text, Markdown, HTML, PDF): the chunks that match a message reach its prompt
 * and the reply cites them. Uploading and deleting need `agents:write`; reading, `agents:read`.
 */
export class Documents {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Uploads a file (at most 10 MiB) as `multipart/form-data`:
   *
   * ```ts
   * const file = new Blob([await readFile("handbook.pdf")], { type: "application/pdf" });
   * const doc = await client.agents.documents.upload(agentId, file, { fileName: "handbook.pdf" });
   * ```
   *
   * @throws {APIError} 415 `UNSUPPORTED_MEDIA_TYPE` for another type, 413 `PAYLOAD_TOO_LARGE` over 10 MiB
   * @throws {BadRequestError} a file without text
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  async upload(
    agentId: string,
    file: Blob,
    params: DocumentUploadParams = {},
    options?: RequestOptions,
  ): Promise<Document> {
    const form = new FormData();
    form.append("file", file, params.fileName ?? "upload");
    if (params.title !== undefined) form.append("title", params.title);
    if (params.source !== undefined) form.append("source", params.source);
    const body = (await this.#transport.json(
      { method: "POST", path: `/agents/${idSegment("agentId", agentId)}/documents`, body: form },
      options,
    )) as { data: Document };
    return body.data;
  }

  /** Adds a document sent as JSON: `text`, or `contentBase64` with its `contentType` (at most 1 MiB of JSON). */
  async create(agentId: string, params: DocumentCreateParams, options?: RequestOptions): Promise<Document> {
    const body = (await this.#transport.json(
      { method: "POST", path: `/agents/${idSegment("agentId", agentId)}/documents`, body: { ...params } },
      options,
    )) as { data: Document };
    return body.data;
  }

  /** Lists the agent's documents, newest first, a page at a time; iterate it for every document. */
  list(
    agentId: string,
    params: DocumentListParams = {},
    options?: RequestOptions,
  ): CursorPagePromise<Document> {
    const path = `/agents/${idSegment("agentId", agentId)}/documents`;
    return listCursorPages<Document>(this.#transport, path, params, options);
  }

  /** Every document that `list` would walk through, in one array. */
  listAll(agentId: string, params: DocumentListParams = {}, options?: RequestOptions): Promise<Document[]> {
    return collect(this.list(agentId, params, options));
  }

  /** @throws {NotFoundError} `DOCUMENT_NOT_FOUND`, `AGENT_NOT_FOUND` */
  async get(agentId: string, documentId: string, options?: RequestOptions): Promise<Document> {
    const path = `/agents/${idSegment("agentId", agentId)}/documents/${idSegment("documentId", documentId)}`;
    return ((await this.#transport.json({ method: "GET", path }, options)) as { data: Document }).data;
  }

  /** Deletes a document and its chunks. @throws {NotFoundError} `DOCUMENT_NOT_FOUND`, `AGENT_NOT_FOUND` */
  async delete(agentId: string, documentId: string, options?: RequestOptions): Promise<DocumentDeleted> {
    const path = `/agents/${idSegment("agentId", agentId)}/documents/${idSegment("documentId", documentId)}`;
    return ((await this.#transport.json({ method: "DELETE", path }, options)) as { data: DocumentDeleted })
      .data;
  }

  /** The imported character's knowledge files and folders, and which no document answers yet. */
  async sources(agentId: string, options?: RequestOptions): Promise<KnowledgeSources> {
    const path = `/agents/${idSegment("agentId", agentId)}/knowledge-sources`;
    return ((await this.#transport.json({ method: "GET", path }, options)) as { data: KnowledgeSources })
      .data;
  }
}
