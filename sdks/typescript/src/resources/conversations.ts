import type { RequestOptions, Transport } from "../core.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import type { Conversation, ConversationDeleted, ConversationListParams } from "../types.js";
import { idSegment } from "./path.js";

/**
 * An agent's conversations: one per `userId` and `roomId` it has talked with (messages sent without them share
 * one, whose `userId` and `roomId` are `null`). Listing needs `history:read`; deleting, `history:delete`.
 */
export class Conversations {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Lists the agent's conversations, latest activity first, a page at a time (default 20). Await the result for
   * one page, or iterate it for every conversation:
   *
   * ```ts
   * for await (const conversation of client.agents.conversations.list(agentId, { userId: "user-42" })) {
   *   console.log(conversation.id, conversation.roomId, conversation.messageCount);
   * }
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {BadRequestError} a query value out of range, or a cursor that is not a conversation of this list
   */
  list(
    agentId: string,
    params: ConversationListParams = {},
    options?: RequestOptions,
  ): CursorPagePromise<Conversation> {
    const path = `/agents/${idSegment("agentId", agentId)}/conversations`;
    return listCursorPages<Conversation>(this.#transport, path, params, options);
  }

  /** Every conversation that `list` would walk through, fetched page by page and returned in one array. */
  listAll(
    agentId: string,
    params: ConversationListParams = {},
    options?: RequestOptions,
  ): Promise<Conversation[]> {
    return collect(this.list(agentId, params, options));
  }

  /**
   * Deletes a conversation: its messages are gone from every read and from every later prompt. The agent's
   * usage figures stay.
   *
   * Sent with an `Idempotency-Key`: if a first attempt deleted it but its answer was lost, the retry gets that
   * answer.
   *
   * @throws {NotFoundError} `CONVERSATION_NOT_FOUND`, `AGENT_NOT_FOUND`
   * @throws {PermissionDeniedError} without the `history:delete` scope
   */
  async delete(
    agentId: string,
    conversationId: string,
    options?: RequestOptions,
  ): Promise<ConversationDeleted> {
    const body = (await this.#transport.json(
      {
        method: "DELETE",
        path: `/agents/${idSegment("agentId", agentId)}/conversations/${idSegment("conversationId", conversationId)}`,
      },
      options,
    )) as { data: ConversationDeleted };
    return body.data;
  }
}
