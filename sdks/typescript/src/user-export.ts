import type { OpenedStream } from "./core.js";
import { AgentryError, APIConnectionError, APIError, APITimeoutError, APIUserAbortError } from "./errors.js";
import { IncompleteLineError, readLines } from "./ndjson.js";
import type { HistoryMessage, Memory } from "./types.js";

/** One line of a user's export: a stored message, or (after every message) one of the user's memories (`mem_…`). */
export type UserExportLine = HistoryMessage | Memory;

/**
 * An NDJSON export read as it arrives (the type of its lines: `T`; a user's export by default, the audit log's with
 * `AuditEvent`). A user's export: the user's messages in every agent of the account, then the memories those agents keep of the user, read as the
 * service sends them (NDJSON, one a line): each is yielded as soon as its line has arrived, so memory stays flat whatever the export's size.
 *
 * ```ts
 * for await (const message of client.users.export("user-42")) {
 *   await archive.write(`${JSON.stringify(message)}\n`);
 * }
 * ```
 *
 * The request is sent when the loop starts; failures before the export starts (401, 403, 429, ...) are thrown
 * then, and retried like any read. Once it has started it is never retried: a connection that breaks, or a body
 * cut off in the middle of a line, throws `APIConnectionError` (after the messages that did arrive), so an export
 * that ends without an error is complete. Silence longer than the client's `timeout` throws `APITimeoutError`;
 * `abort()` or the `signal` option throws `APIUserAbortError`. Leaving the loop early closes the connection.
 */
export class UserExport<T = UserExportLine> implements AsyncIterable<T> {
  /** Aborting this controller ends the export, as `abort()` does. */
  readonly controller = new AbortController();
  readonly #open: (signal: AbortSignal) => Promise<OpenedStream>;
  readonly #timeoutMs: number;
  #consumed = false;
  #idleTimedOut = false;
  #response: Response | undefined;
  #unlink: () => void = () => {};

  /** @internal */
  constructor(
    open: (signal: AbortSignal) => Promise<OpenedStream>,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ) {
    this.#open = open;
    this.#timeoutMs = timeoutMs;
    if (signal?.aborted) this.controller.abort();
    else if (signal) {
      const onAbort = () => this.controller.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#unlink = () => signal.removeEventListener("abort", onAbort);
    }
  }

  /** The request id (`X-Request-Id`) once the response has arrived. */
  get requestId(): string | undefined {
    return this.#response?.headers.get("x-request-id") ?? undefined;
  }

  /** Ends the export and closes its connection; the loop throws `APIUserAbortError`. */
  abort(): void {
    this.controller.abort();
  }

  /** The messages, in the order they were stored (oldest first). An export can be iterated once. */
  [Symbol.asyncIterator](): AsyncGenerator<T> {
    if (this.#consumed) throw new AgentryError("An export can be iterated once; call export() again.");
    this.#consumed = true;
    return this.#iterate();
  }

  async *#iterate(): AsyncGenerator<T> {
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
      opened = await this.#open(this.controller.signal);
      this.#response = opened.response;
      const { body, headers } = opened.response;
      // An export of a user without messages is an empty body.
      if (!body) return;
      armIdleTimer();
      for await (const line of readLines(body, armIdleTimer)) {
        let message: T;
        try {
          message = JSON.parse(line) as T;
        } catch {
          throw new APIError("A line of the export is not JSON.", { headers, body: line });
        }
        // Time spent by the loop's body is not the server's silence.
        clearTimeout(idle);
        yield message;
        armIdleTimer();
      }
    } catch (error) {
      throw this.#failureOf(error);
    } finally {
      clearTimeout(idle);
      this.#unlink();
      opened?.release();
    }
  }

  #failureOf(error: unknown): APIError {
    if (this.#idleTimedOut) {
      return new APITimeoutError(`The export sent nothing for ${this.#timeoutMs} ms.`, error);
    }
    if (error instanceof APIError) return error;
    if (this.controller.signal.aborted) return new APIUserAbortError();
    if (error instanceof IncompleteLineError) {
      return new APIConnectionError(`The export was cut short: ${error.message}.`, error);
    }
    const reason = error instanceof Error ? error.message : String(error);
    return new APIConnectionError(`The export broke: ${reason}`, error);
  }
}
