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
import type {
  MessageReply,
  MessageStarted,
  MessageStreamEvent,
  ToolApprovalRequired,
  ToolCall,
  ToolCallStarted,
} from "./types.js";

/** How many times in a row a dropped stream is resumed before it fails. */
export const MAX_RECONNECTS = 3;
/** The wait before the first resumption; each next one waits twice as long. */
const RECONNECT_DELAY_MS = 200;

/** @internal Opens a message's events after the event `after` (`Last-Event-ID`). */
export type ResumeStream = (messageId: string, after: string, signal: AbortSignal) => Promise<OpenedStream>;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

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
 * request would (`InternalServerError` for `AGENT_UNAVAILABLE` or `MODEL_ERROR`, ...). It is never sent again once
 * the response has begun; a connection that drops (or stays silent for longer than the client's `timeout`: the
 * server sends a comment every 15 s) is resumed where it stopped, with `Last-Event-ID`, up to
 * `MAX_RECONNECTS` times in a row, unseen by the loop: it yields each event once, in order. Only once those fail
 * does it throw `APIConnectionError` (or `APITimeoutError`). Aborting (`abort()` or the `signal` option) ends the
 * loop quietly; `text()` and `finalMessage()` then reject with `APIUserAbortError`.
 */
export class MessageStream implements AsyncIterable<MessageStreamEvent> {
  /** Aborting this controller ends the stream, as `abort()` does. */
  readonly controller = new AbortController();
  /** The current connection's: aborted when it goes silent, so that it is resumed on a new one. */
  #connection: AbortController;
  readonly #resume: ResumeStream | undefined;
  #messageId: string | undefined;
  #lastId = 0;
  #resumed = false;
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
  #paused: ToolApprovalRequired | undefined;
  #unlink: () => void = () => {};

  /** @internal `resume` opens the message's events after an event id, to resume a dropped connection. */
  constructor(
    open: (signal: AbortSignal) => Promise<OpenedStream>,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    resume?: ResumeStream,
  ) {
    this.#timeoutMs = timeoutMs;
    this.#resume = resume;
    this.#connection = this.#newConnection();
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
    this.#opened = open(this.#connection.signal);
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

  /**
   * The completed reply (the `message.completed` event's data), once the stream has completed.
   *
   * @throws {AgentryError} the turn paused for tool approval (`pendingApproval()` says which calls)
   */
  async finalMessage(): Promise<MessageReply> {
    await this.#drain();
    if (this.#paused) {
      throw new AgentryError(
        `Message ${this.#paused.messageId} paused for tool approval; answer it with messages.approve().`,
      );
    }
    return this.#final!;
  }

  /** The calls the turn paused before (the `tool.approval_required` event's data), or undefined when it did not. */
  async pendingApproval(): Promise<ToolApprovalRequired | undefined> {
    await this.#drain();
    return this.#paused;
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

  /** A controller for the next connection, aborted with the stream. */
  #newConnection(): AbortController {
    const connection = new AbortController();
    if (this.controller.signal.aborted) connection.abort();
    else {
      const onAbort = () => connection.abort();
      this.controller.signal.addEventListener("abort", onAbort, { once: true });
      connection.signal.addEventListener(
        "abort",
        () => this.controller.signal.removeEventListener("abort", onAbort),
        { once: true },
      );
    }
    return connection;
  }

  async *#iterate(): AsyncGenerator<MessageStreamEvent> {
    let opened: OpenedStream | undefined;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const armIdleTimer = () => {
      clearTimeout(idle);
      const connection = this.#connection;
      idle = setTimeout(() => {
        this.#idleTimedOut = true;
        connection.abort();
      }, this.#timeoutMs);
    };
    try {
      opened = await this.#opened;
      this.#response = opened.response;
      for (let reconnects = 0; ; ) {
        try {
          armIdleTimer();
          const body = opened.response.body;
          if (!body) throw new APIConnectionError("The stream ended before the reply was complete.");
          for await (const message of readServerSentEvents(body, armIdleTimer)) {
            const event = this.#accept(message, opened.response.headers);
            if (event) {
              // Time spent by the loop's body is not the server's silence.
              clearTimeout(idle);
              reconnects = 0;
              yield event;
              armIdleTimer();
            }
            if (this.#final || this.#paused) break;
          }
          if (!this.#final && !this.#paused)
            throw new APIConnectionError("The stream ended before the reply was complete.");
          break;
        } catch (error) {
          clearTimeout(idle);
          if (!this.#resumable(error) || reconnects >= MAX_RECONNECTS) throw error;
          reconnects += 1;
          this.#resumed = true;
          opened.release();
          this.#idleTimedOut = false;
          this.#connection.abort();
          this.#connection = this.#newConnection();
          await pause(RECONNECT_DELAY_MS * 2 ** (reconnects - 1), this.controller.signal);
          opened = await this.#resume!(this.#messageId!, String(this.#lastId), this.#connection.signal);
        }
      }
      this.#settle();
    } catch (error) {
      const failure = this.#failureOf(error);
      this.#settle(failure);
      if (!(failure instanceof APIUserAbortError)) throw failure;
    } finally {
      clearTimeout(idle);
      // The loop stopped early (`break`): close the connection unless the reply was already complete.
      if (!this.#settled) {
        if (this.#final || this.#paused) this.#settle();
        else {
          this.#settle(new APIUserAbortError("The stream was closed before the reply was complete."));
          this.controller.abort();
        }
      }
      opened?.release();
    }
  }

  /**
   * Whether a failure is a dropped or silent connection that the events route can resume: the stream has started
   * (its message id is known), the caller did not abort, and it is not the server's answer (an `error` event, or
   * a refused resumption).
   */
  #resumable(error: unknown): boolean {
    if (!this.#resume || this.#messageId === undefined || this.controller.signal.aborted) return false;
    if (error instanceof APIError && !(error instanceof APIConnectionError)) return false;
    return true;
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
      type !== "tool.approval_required" &&
      type !== "message.completed" &&
      type !== "error"
    )
      return undefined;
    // A resumed connection starts after the last event seen; an event seen already is never yielded twice.
    const seq = Number(message.id);
    if (Number.isSafeInteger(seq) && seq > 0) {
      if (this.#resumed && seq <= this.#lastId) return undefined;
      this.#lastId = Math.max(this.#lastId, seq);
    }
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
    if (type === "tool.approval_required") {
      this.#paused = data as ToolApprovalRequired;
      return { type, id, data: this.#paused };
    }
    if (type === "message.completed") {
      this.#final = data as MessageReply;
      return { type, id, data: this.#final };
    }
    this.#messageId ??= (data as MessageStarted).id;
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
