import type { RequestOptions, Transport } from "../core.js";
import { AgentryError, APITimeoutError, APIUserAbortError, ApprovalRequiredError } from "../errors.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import { MessageStream } from "../streaming.js";
import type {
  BackgroundMessage,
  BackgroundMessageAccepted,
  BackgroundWaitOptions,
  HistoryMessage,
  MessageApproveParams,
  MessageListParams,
  MessageReply,
  MessageSendParams,
  MessageStreamParams,
} from "../types.js";
import { idSegment } from "./path.js";

/** The first pause of `waitForBackground`, the longest (each is twice the one before), and its whole wait, in ms. */
const DEFAULT_POLL_INTERVAL = 500;
const MAX_POLL_INTERVAL = 5_000;
const DEFAULT_MAX_WAIT = 600_000;

function pauseFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError("The wait was aborted."));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError("The wait was aborted."));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

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
   * @throws {ApprovalRequiredError} the turn paused before tool calls that wait for approval (the agent's
   *   plugins set `requireApproval`): answer them with `approve`
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
    )) as { data: MessageReply | BackgroundMessageAccepted };
    if ("status" in body.data && body.data.status === "requires_action") {
      throw new ApprovalRequiredError(body.data.id, body.data.pendingToolCalls ?? []);
    }
    return body.data as MessageReply;
  }

  /**
   * Answers tool calls a message paused before: approved ones run, refused ones are reported to the model as
   * refused (with `reason`). Once every pending call is answered the message resumes in the background; follow
   * it with `waitForBackground`.
   *
   * ```ts
   * const paused = await client.agents.messages.getBackground(agentId, messageId);
   * if (paused.status === "requires_action") {
   *   await client.agents.messages.approve(agentId, messageId, {
   *     toolCallIds: paused.pendingToolCalls.map((call) => call.id),
   *     approve: true,
   *   });
   * }
   * ```
   *
   * @throws {ConflictError} `MESSAGE_NOT_AWAITING_APPROVAL`: the message is not paused (or was answered)
   * @throws {BadRequestError} `INVALID_REQUEST`: ids that are not pending
   * @throws {NotFoundError} `MESSAGE_NOT_FOUND`, `AGENT_NOT_FOUND`
   */
  async approve(
    agentId: string,
    messageId: string,
    params: MessageApproveParams,
    options?: RequestOptions,
  ): Promise<BackgroundMessage> {
    const body = (await this.#transport.json(
      {
        method: "POST",
        path: `/agents/${idSegment("agentId", agentId)}/messages/${idSegment("messageId", messageId)}/approve`,
        body: params,
      },
      options,
    )) as { data: BackgroundMessage };
    return body.data;
  }

  /**
   * Sends a message and streams the reply as it is written: `message.started`, `message.delta`s,
   * `message.completed`. The request goes out at once; failures before the stream starts (404, 409, 429, ...)
   * are thrown when you consume it, and are retried as for `send` (a retry of a stream that completed meanwhile
   * gets its events again). Once started, a stream is never sent again: a connection that drops is resumed where
   * it stopped (`Last-Event-ID`), unseen by the loop, because the service goes on generating the reply
   * (`onDisconnect: "continue"`, this method's default).
   *
   * ```ts
   * const stream = client.agents.messages.stream(agentId, { text: "Tell me a story" });
   * for await (const event of stream) {
   *   if (event.type === "message.delta") process.stdout.write(event.data.text);
   * }
   * ```
   */
  stream(agentId: string, params: MessageStreamParams, options: RequestOptions = {}): MessageStream {
    const path = `/agents/${idSegment("agentId", agentId)}/messages`;
    const { idempotencyKey: _, ...readOptions } = options;
    return new MessageStream(
      (signal) =>
        this.#transport.stream(
          { method: "POST", path, body: { onDisconnect: "continue", ...params, stream: true } },
          { ...options, signal },
        ),
      options.signal,
      options.timeout ?? this.#timeout,
      (messageId, after, signal) =>
        this.#transport.stream(
          { method: "GET", path: `${path}/${idSegment("messageId", messageId)}/events` },
          { ...readOptions, headers: { ...options.headers, "Last-Event-ID": after }, signal },
        ),
    );
  }

  /**
   * Sends a message to be answered in the background: the service answers at once (202) with the reply's id, and
   * generates the reply whatever happens to this process. Read it with `getBackground`. Retried like `send`.
   *
   * ```ts
   * const { id } = await client.agents.messages.sendBackground(agentId, { text: "Summarise the quarter" });
   * const message = await client.agents.messages.waitForBackground(agentId, id);
   * if (message.status === "completed") console.log(message.text);
   * else console.error(message.error.code);
   * ```
   *
   * @throws {ConflictError} `AGENT_INACTIVE`: the agent is inactive
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  async sendBackground(
    agentId: string,
    params: MessageSendParams,
    options?: RequestOptions,
  ): Promise<BackgroundMessageAccepted> {
    const body = (await this.#transport.json(
      {
        method: "POST",
        path: `/agents/${idSegment("agentId", agentId)}/messages`,
        body: { ...params, background: true },
      },
      options,
    )) as { data: BackgroundMessageAccepted };
    return body.data;
  }

  /**
   * Reads a background message: `pending`, `completed` (with the whole reply) or `failed` (with the error), while
   * the service keeps it (`STREAM_RETENTION` after it ends); after that, `get` reads a completed reply.
   *
   * @throws {NotFoundError} `MESSAGE_NOT_FOUND`, `AGENT_NOT_FOUND`
   * @throws {PermissionDeniedError} without the `history:read` scope
   */
  async getBackground(
    agentId: string,
    messageId: string,
    options?: RequestOptions,
  ): Promise<BackgroundMessage> {
    const body = (await this.#transport.json(
      {
        method: "GET",
        path: `/agents/${idSegment("agentId", agentId)}/messages/${idSegment("messageId", messageId)}`,
      },
      options,
    )) as { data: BackgroundMessage | HistoryMessage };
    if (!("status" in body.data)) {
      // Kept longer than its state: a completed background message is then a stored reply.
      throw new AgentryError(
        `Message ${messageId} is not a background message whose state is kept; use get().`,
      );
    }
    return body.data;
  }

  /**
   * Waits until a background message is no longer `pending`, and returns it, `completed` or `failed`: reads it
   * with `getBackground`, pausing `pollInterval` ms at first (500) and twice as long each time, at most 5 s. Each
   * read is retried like any call.
   *
   * @throws {APITimeoutError} still pending after `maxWait` ms (10 minutes by default); the message goes on
   * @throws {APIUserAbortError} `signal` aborted the wait
   * @throws {NotFoundError} `MESSAGE_NOT_FOUND`, `AGENT_NOT_FOUND`
   */
  async waitForBackground(
    agentId: string,
    messageId: string,
    options: BackgroundWaitOptions = {},
  ): Promise<BackgroundMessage> {
    const { pollInterval = DEFAULT_POLL_INTERVAL, maxWait = DEFAULT_MAX_WAIT, ...readOptions } = options;
    if (!(pollInterval > 0)) throw new AgentryError(`pollInterval must be above 0 ms, got ${pollInterval}.`);
    if (!(maxWait > 0)) throw new AgentryError(`maxWait must be above 0 ms, got ${maxWait}.`);
    const deadline = Date.now() + maxWait;
    const longest = Math.max(MAX_POLL_INTERVAL, pollInterval);
    let pause = pollInterval;
    for (;;) {
      const message = await this.getBackground(agentId, messageId, readOptions);
      if (message.status !== "pending") return message;
      const left = deadline - Date.now();
      if (left <= 0) throw new APITimeoutError(`Still pending after ${maxWait} ms; read it again later.`);
      await pauseFor(Math.min(pause, left), options.signal);
      pause = Math.min(pause * 2, longest);
    }
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
    return listCursorPages<HistoryMessage>(this.#transport, path, params, options);
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
