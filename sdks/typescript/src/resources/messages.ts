import type { RequestOptions, Transport } from "../core.js";
import {
  type CursorEnvelope,
  type CursorPagePromise,
  collect,
  fetchCursorPage,
  PagePromise,
} from "../pagination.js";
import { MessageStream } from "../streaming.js";
import type { HistoryMessage, MessageListParams, MessageReply, MessageSendParams } from "../types.js";
import { idSegment } from "./path.js";

/**
 * Messages to an agent, and the agent's stored history of them. Context is kept per agent, `userId` and
 * `roomId`. Reading history needs the `history:read` scope.
 */
export class Messages {
  readonly #transport: Transport;
  readonly #timeout: number;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
    this.#timeout = transport.timeout;
  }

  /**
   * Sends a message and waits for the whole reply.
   *
   * Sent with an `Idempotency-Key`, so it is retried like any call (timeouts, lost connections, 408, 409, 429,
   * 5xx): a retry after a lost answer gets the stored reply, without calling the model again. A retry that
   * finds the first attempt still running waits as the `409 IDEMPOTENCY_KEY_IN_USE` answer asks.
   *
   * @throws {ConflictError} `AGENT_INACTIVE`: the agent is inactive
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {InternalServerError} `MODEL_ERROR` (502): the model provider refused the call, and the agent's
   *   status is now `error`; `AGENT_UNAVAILABLE` (503) once retries are spent
   */
  async send(agentId: string, params: MessageSendParams, options?: RequestOptions): Promise<MessageReply> {
    const body = (await this.#transport.json(
      {
        method: "POST",
        path: `/agents/${idSegment("agentId", agentId)}/messages`,
        body: params,
      },
      options,
    )) as { data: MessageReply };
    return body.data;
  }

  /**
   * Sends a message and streams the reply as it is written: `message.started`, `message.delta`s,
   * `message.completed`. The request goes out at once; failures before the stream starts (404, 409, 429, ...)
   * are thrown when you consume it, and are retried as for `send` (a retry of a stream that completed meanwhile
   * gets its events again). Once started, a stream is never retried.
   *
   * ```ts
   * const stream = client.agents.messages.stream(agentId, { text: "Tell me a story" });
   * for await (const event of stream) {
   *   if (event.type === "message.delta") process.stdout.write(event.data.text);
   * }
   * ```
   */
  stream(agentId: string, params: MessageSendParams, options: RequestOptions = {}): MessageStream {
    const path = `/agents/${idSegment("agentId", agentId)}/messages`;
    return new MessageStream(
      (signal) =>
        this.#transport.stream(
          { method: "POST", path, body: { ...params, stream: true } },
          { ...options, signal },
        ),
      options.signal,
      options.timeout ?? this.#timeout,
    );
  }

  /**
   * Lists the agent's stored messages, both sides of each exchange, a page at a time (default 20, newest first).
   * Await the result for one page, or iterate it for every message:
   *
   * ```ts
   * const page = await client.agents.messages.list(agentId, { userId: "user-42", limit: 50 });
   * for (const message of page.data) console.log(message.role, message.text);
   * for await (const message of client.agents.messages.list(agentId, { conversationId, order: "asc" })) {
   *   // the whole conversation, oldest first
   * }
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`; `CONVERSATION_NOT_FOUND` for a `conversationId` that is not one
   *   of the agent's
   * @throws {BadRequestError} a query value out of range, `before` with `after`, or a cursor that is not a
   *   message of this list
   * @throws {PermissionDeniedError} without the `history:read` scope
   */
  list(
    agentId: string,
    params: MessageListParams = {},
    options?: RequestOptions,
  ): CursorPagePromise<HistoryMessage> {
    const path = `/agents/${idSegment("agentId", agentId)}/messages`;
    return new PagePromise(() =>
      fetchCursorPage(
        params,
        async (query) =>
          (await this.#transport.json(
            { method: "GET", path, query: { ...query } },
            options,
          )) as CursorEnvelope<HistoryMessage>,
      ),
    );
  }

  /**
   * Every stored message that `list` would walk through, fetched page by page (`limit` per request) and
   * returned in one array. For long histories, iterate `list` instead.
   */
  listAll(
    agentId: string,
    params: MessageListParams = {},
    options?: RequestOptions,
  ): Promise<HistoryMessage[]> {
    return collect(this.list(agentId, params, options));
  }

  /**
   * Reads one stored message, by the id a list or the send call gave (a reply's id is its message's id).
   *
   * @throws {NotFoundError} `MESSAGE_NOT_FOUND` (also once its conversation was deleted), `AGENT_NOT_FOUND`
   */
  async get(agentId: string, messageId: string, options?: RequestOptions): Promise<HistoryMessage> {
    const body = (await this.#transport.json(
      {
        method: "GET",
        path: `/agents/${idSegment("agentId", agentId)}/messages/${idSegment("messageId", messageId)}`,
      },
      options,
    )) as { data: HistoryMessage };
    return body.data;
  }
}
