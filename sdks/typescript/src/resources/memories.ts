import type { RequestOptions, Transport } from "../core.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import type { Memory, MemoryCreateParams, MemoryDeleted, MemoryListParams } from "../types.js";
import { idSegment } from "./path.js";

/**
 * What an agent remembers of its users: facts it learns after turns (unless its `settings.memory` is `false`) or
 * that are added by hand; the most relevant reach that user's later prompts. Listing needs `history:read`;
 * adding and deleting, `history:delete`.
 */
export class Memories {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Lists the agent's memories, newest first, a page at a time (default 20). Await the result for one page, or
   * iterate it for every memory:
   *
   * ```ts
   * for await (const memory of client.agents.memories.list(agentId, { userId: "user-42", q: "colour" })) {
   *   console.log(memory.text);
   * }
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {BadRequestError} a query value out of range, or a cursor that is not a memory of this list
   */
  list(agentId: string, params: MemoryListParams = {}, options?: RequestOptions): CursorPagePromise<Memory> {
    const path = `/agents/${idSegment("agentId", agentId)}/memories`;
    return listCursorPages<Memory>(this.#transport, path, params, options);
  }

  /** Every memory that `list` would walk through, fetched page by page and returned in one array. */
  listAll(agentId: string, params: MemoryListParams = {}, options?: RequestOptions): Promise<Memory[]> {
    return collect(this.list(agentId, params, options));
  }

  /**
   * Adds a fact about a user. A fact the user already has (the same text, ignoring case, punctuation and spacing)
   * is not stored twice: the one stored is returned. Beyond the agent's `settings.memoryLimit` per user, the
   * user's oldest memories are deleted.
   *
   * @throws {BadRequestError} no `userId`, or a `text` empty or over 1,000 characters
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {PermissionDeniedError} without the `history:delete` scope
   */
  async create(agentId: string, params: MemoryCreateParams, options?: RequestOptions): Promise<Memory> {
    const body = (await this.#transport.json(
      { method: "POST", path: `/agents/${idSegment("agentId", agentId)}/memories`, body: { ...params } },
      options,
    )) as { data: Memory };
    return body.data;
  }

  /**
   * Deletes a memory: it reaches no later prompt.
   *
   * @throws {NotFoundError} `MEMORY_NOT_FOUND`, `AGENT_NOT_FOUND`
   * @throws {PermissionDeniedError} without the `history:delete` scope
   */
  async delete(agentId: string, memoryId: string, options?: RequestOptions): Promise<MemoryDeleted> {
    const body = (await this.#transport.json(
      {
        method: "DELETE",
        path: `/agents/${idSegment("agentId", agentId)}/memories/${idSegment("memoryId", memoryId)}`,
      },
      options,
    )) as { data: MemoryDeleted };
    return body.data;
  }
}
