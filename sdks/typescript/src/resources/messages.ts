import type { RequestOptions, Transport } from "../core.js";
import { MessageStream } from "../streaming.js";
import type { MessageReply, MessageSendParams } from "../types.js";
import { idSegment } from "./path.js";

/** Messages to an agent. Context is kept per agent, `userId` and `roomId`. */
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
   * Retried on 429 and 503 (`AGENT_UNAVAILABLE`): the exchange is kept only once a reply is complete, so a
   * failed attempt left nothing behind. Not retried after a timeout.
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
        safety: "message",
      },
      options,
    )) as { data: MessageReply };
    return body.data;
  }

  /**
   * Sends a message and streams the reply as it is written: `message.started`, `message.delta`s,
   * `message.completed`. The request goes out at once; failures before the stream starts (404, 409, 429, ...)
   * are thrown when you consume it, and are retried as for `send`. Once started, a stream is never retried.
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
          { method: "POST", path, body: { ...params, stream: true }, safety: "message" },
          { ...options, signal },
        ),
      options.signal,
      options.timeout ?? this.#timeout,
    );
  }
}
