import type { OpenedStream } from "./core.js";
import {
  AgentryError,
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  errorFromStreamEvent,
} from "./errors.js";
import { readServerSentEvents, type ServerSentEvent } from "./sse.js";
import type { MessageReply, MessageStarted, MessageStreamEvent, ToolCall, ToolCallStarted } from "./types.js";

/**
 * A reply streamed as it is written. The request is sent at once; iterate the stream for its events, or await
 * `text()` / `finalMessage()` for the outcome (after iterating too).
 *
 * ```ts
 * const stream = client.agents.messages.stream(agentId, { text: "Hello" });
 * for await (const event of stream) {
 *   if (event.type === "message.delta") process.stdout.write(event.data.text);
 * }
 * const reply = await stream.finalMessage();
 * ```
 *
 * A stream that fails after it started (its `error` event) throws from the loop the same error class a failed
 * request would (`InternalServerError` for `AGENT_UNAVAILABLE` or `MODEL_ERROR`, ...). It is never retried once
 * the response has begun. Aborting (`abort()` or the `signal` option) ends the loop quietly; `text()` and
 * `finalMessage()` then reject with `APIUserAbortError`. A stream silent for longer than the client's `timeout`
 * (the server sends a comment every 15 s) fails with `APITimeoutError`.
 */
export class MessageStream implements AsyncIterable<MessageStreamEvent> {
  /** Aborting this controller ends the stream, as `abort()` does. */
  readonly controller = new AbortController();
  readonly #opened: Promise<OpenedStream>;
  readonly #timeoutMs: number;
  readonly #done: Promise<void>;
  #resolveDone: () => void = () => {};
  #rejectDone: (error: APIError) => void = () => {};
  #settled = false;
  #consumed = false;
  #idleTimedOut = false;
  #response: Response | undefined;
  #text = "";
  #final: MessageReply | undefined;
  #unlink: () => void = () => {};

  /** @internal */
  constructor(
    open: (signal: AbortSignal) => Promise<OpenedStream>,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ) {
    this.#timeoutMs = timeoutMs;
    if (signal?.aborted) this.controller.abort();
    else if (signal) {
      const onAbort = () => this.controller.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      // A long-lived signal shared by many streams must not collect a listener per stream.
      this.#unlink = () => signal.removeEventListener("abort", onAbort);
    }
    this.#done = new Promise<void>((resolve, reject) => {
      this.#resolveDone = resolve;
      this.#rejectDone = reject;
    });
    // Failures are reported to whoever consumes the stream, never as unhandled rejections.
    this.#done.catch(() => {});
    this.#opened = open(this.controller.signal);
    this.#opened.catch(() => {});
  }

  /** The request id (`X-Request-Id`) once the response has arrived. */
  get requestId(): string | undefined {
    return this.#response?.headers.get("x-request-id") ?? undefined;
  }

  /** Ends the stream and closes its connection; the server then stops the model call. */
  abort(): void {
    this.controller.abort();
  }

  /** The events, in order. A stream can be iterated once. */
  [Symbol.asyncIterator](): AsyncGenerator<MessageStreamEvent> {
    if (this.#consumed) {
      throw new AgentryError(
        "A MessageStream can be iterated once; use text() or finalMessage() after that.",
      );
    }
    this.#consumed = true;
    return this.#iterate();
  }

  /** The whole reply text (the deltas joined), once the stream has completed. */
  async text(): Promise<string> {
    await this.#drain();
    return this.#text;
  }

  /** The completed reply (the `message.completed` event's data), once the stream has completed. */
  async finalMessage(): Promise<MessageReply> {
    await this.#drain();
    return this.#final!;
  }

  async #drain(): Promise<void> {
    if (!this.#consumed) {
      const events = this[Symbol.asyncIterator]();
      while (!(await events.next()).done) {
        // Each event is recorded by the iterator itself.
      }
    }
    await this.#done;
  }

  async *#iterate(): AsyncGenerator<MessageStreamEvent> {
    let opened: OpenedStream | undefined;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const armIdleTimer = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        this.#idleTimedOut = true;
        this.controller.abort();
      }, this.#timeoutMs);
    };
    try {
      opened = await this.#opened;
      this.#response = opened.response;
      armIdleTimer();
      const body = opened.response.body;
      if (!body) throw new APIConnectionError("The stream ended before the reply was complete.");
      for await (const message of readServerSentEvents(body, armIdleTimer)) {
        const event = this.#accept(message, opened.response.headers);
        if (event) {
          // Time spent by the loop's body is not the server's silence.
          clearTimeout(idle);
          yield event;
          armIdleTimer();
        }
        if (this.#final) break;
      }
      if (!this.#final) throw new APIConnectionError("The stream ended before the reply was complete.");
      this.#settle();
    } catch (error) {
      const failure = this.#failureOf(error);
      this.#settle(failure);
      if (!(failure instanceof APIUserAbortError)) throw failure;
    } finally {
      clearTimeout(idle);
      // The loop stopped early (`break`): close the connection unless the reply was already complete.
      if (!this.#settled) {
        if (this.#final) this.#settle();
        else {
          this.#settle(new APIUserAbortError("The stream was closed before the reply was complete."));
          this.controller.abort();
        }
      }
      opened?.release();
    }
  }

  /** Turns one server-sent event into the event to yield; throws the error of an `error` event. */
  #accept(message: ServerSentEvent, headers: Headers): MessageStreamEvent | undefined {
    const type = message.event;
    // Event types added in later API versions are skipped, so an older SDK keeps working.
    if (
      type !== "message.started" &&
      type !== "message.delta" &&
      type !== "tool.call" &&
      type !== "tool.result" &&
      type !== "message.completed" &&
      type !== "error"
    )
      return undefined;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      throw new APIError(`The '${type}' event's data is not JSON.`, { headers, body: message.data });
    }
    if (type === "error") throw errorFromStreamEvent(data, headers);
    const id = message.id ?? "";
    if (type === "message.delta") {
      const delta = data as { text?: unknown };
      if (typeof delta.text !== "string")
        throw new APIError("A 'message.delta' event carries no text.", { headers, body: data });
      this.#text += delta.text;
      return { type, id, data: { text: delta.text } };
    }
    if (type === "tool.call") return { type, id, data: data as ToolCallStarted };
    if (type === "tool.result") return { type, id, data: data as ToolCall };
    if (type === "message.completed") {
      this.#final = data as MessageReply;
      return { type, id, data: this.#final };
    }
    return { type, id, data: data as MessageStarted };
  }

  #failureOf(error: unknown): APIError {
    if (this.#idleTimedOut) {
      return new APITimeoutError(`The stream sent nothing for ${this.#timeoutMs} ms.`, error);
    }
    if (error instanceof APIError) return error;
    if (this.controller.signal.aborted) return new APIUserAbortError();
    const reason = error instanceof Error ? error.message : String(error);
    return new APIConnectionError(`The stream broke: ${reason}`, error);
  }

  #settle(error?: APIError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#unlink();
    if (error) this.#rejectDone(error);
    else this.#resolveDone();
  }
}
