import { StringDecoder } from "node:string_decoder";
import { AppError } from "@agentry/errors";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { Agent, type Dispatcher } from "undici";
import { connectionError, incompleteError, refusalError, type UpstreamHeaders } from "./errors.js";
import type { ProviderEvent, ProviderName } from "./types.js";

/** A connection attempt is given up after this long, or after the call's own timeout when that is shorter. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long after the call's own timeout the client's backstops (waiting for the headers, silence in the body)
 * fire: the caller's deadline, which says which limit was passed, always ends the call first.
 */
const BACKSTOP_MARGIN_MS = 1_000;

export type HostedProvider = Exclude<ProviderName, "local">;

/** What `refusalError` reads from a provider's error body. */
export interface ErrorDetail {
  type: string | undefined;
  message: string | undefined;
}

export interface EndpointOptions {
  provider: HostedProvider;
  /** The configured base URL, with or without a trailing slash; `path` is appended to it. */
  baseURL: string;
  path: string;
  /** Sent with every request, besides the JSON content type: credentials, API version. */
  headers: Record<string, string>;
  /**
   * The call's timeout. Connecting is given up after it (or 10 s, if shorter); the wait for the response headers
   * and silence between body chunks are backstops a second later. The caller's signal bounds the whole call.
   */
  timeoutMs: number;
  /** Masked out of any provider message passed on. */
  secrets: readonly string[];
  /** The provider's error type and message in an error body (parsed JSON; undefined when it was not JSON). */
  errorDetail(body: unknown): ErrorDetail;
}

/** What a reader answers for an event that begins a tool call: the reply has started, though with no text. */
export const TOOL_CALL_BEGUN = Symbol("a tool call begun");

/**
 * Turns the server-sent events of one streamed reply into provider events; one reader per call. Its methods
 * may throw an AppError (a refusal reported inside the stream, an incomplete reply), which ends the stream.
 */
export interface StreamReader {
  /**
   * The text this event adds to the reply, if any, or TOOL_CALL_BEGUN when it begins a tool call. `headers` are
   * the stream's response headers.
   */
  event(event: EventSourceMessage, headers: UpstreamHeaders): string | typeof TOOL_CALL_BEGUN | undefined;
  /** The closing `done` event, once the body has ended. */
  end(): ProviderEvent;
}

/**
 * One provider API endpoint, `POST`ed JSON over a keep-alive connection pool (undici), with the failures mapped
 * to the public errors: a refusal (non-2xx status) by `refusalError`, no answer (refused connection, timeout
 * before the headers, abort) by `connectionError`, a body that breaks by `incompleteError`. Nothing is retried:
 * the caller decides. Redirects are not followed, so credentials never go to another address.
 */
export interface Endpoint {
  /** Resolves to the parsed JSON body of a 2xx answer. */
  json(payload: object, model: string, signal: AbortSignal): Promise<unknown>;
  /**
   * Resolves once the provider answered 2xx (a refusal rejects here, before any event), to the reply's events:
   * deltas as the reader finds text, then its `done`. A body that breaks throws AGENT_UNAVAILABLE; leaving the
   * iteration early closes the connection.
   */
  stream(
    payload: object,
    model: string,
    signal: AbortSignal,
    reader: StreamReader,
  ): Promise<AsyncIterable<ProviderEvent>>;
  /** The error for a refusal reported inside a stream that had started (no status then). */
  refusal(model: string, headers: UpstreamHeaders, body: unknown): AppError;
}

export function createEndpoint(options: EndpointOptions): Endpoint {
  const { provider, secrets } = options;
  const url = new URL(joinPath(options.baseURL, options.path));
  const origin = url.origin;
  const path = `${url.pathname}${url.search}`;
  const headers = { "content-type": "application/json", accept: "application/json", ...options.headers };
  const dispatcher = new Agent({
    connectTimeout: Math.min(options.timeoutMs, CONNECT_TIMEOUT_MS),
    headersTimeout: options.timeoutMs + BACKSTOP_MARGIN_MS,
    bodyTimeout: options.timeoutMs + BACKSTOP_MARGIN_MS,
  });

  const refuse = (model: string, status: number | undefined, headers: UpstreamHeaders, body: unknown) => {
    const { type, message } = options.errorDetail(body);
    return refusalError(provider, model, { status, headers, type, message }, secrets);
  };

  async function post(payload: object, model: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    try {
      response = await dispatcher.request({
        origin,
        path,
        method: "POST",
        headers,
        // undici holds the body until the response ends; as a Buffer it stays off the JS heap.
        body: Buffer.from(JSON.stringify(payload)),
        signal,
      });
    } catch (error) {
      throw connectionError(provider, error);
    }
    const status = response.statusCode;
    if (status >= 200 && status < 300) return response;
    let text = "";
    try {
      text = await response.body.text();
    } catch {
      // The body broke: the status says what happened.
    }
    throw refuse(model, status, response.headers, parseJson(text));
  }

  return {
    async json(payload, model, signal) {
      const { body } = await post(payload, model, signal);
      let text: string;
      try {
        text = await body.text();
      } catch (error) {
        throw incompleteError(provider, error);
      }
      const value = parseJson(text);
      if (value === undefined) throw incompleteError(provider, new Error("the answer is not JSON"));
      return value;
    },

    async stream(payload, model, signal, reader) {
      const { headers, body } = await post(payload, model, signal);
      return replyEvents(provider, headers, body, reader);
    },

    refusal: (model, headers, body) => refuse(model, undefined, headers, body),
  };
}

/** JSON text parsed, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `path` appended to the base URL with one slash between them, whether or not the base URL ends with one. */
function joinPath(baseURL: string, path: string): string {
  return baseURL.endsWith("/") && path.startsWith("/") ? baseURL + path.slice(1) : baseURL + path;
}

/**
 * The events of one streamed reply as the body brings them: deltas as the reader finds text, then its `done`.
 * Read from the body's own events rather than through a `for await` loop in a generator, whose frame and
 * whose stream iterator (with its half-dozen listeners) would stay suspended with every idle stream; between
 * events this holds little more than the connection. The body is paused while read events wait to be taken.
 */
function replyEvents(
  provider: HostedProvider,
  headers: UpstreamHeaders,
  body: Dispatcher.ResponseData["body"],
  reader: StreamReader,
): AsyncIterable<ProviderEvent> {
  const events = new ReplyEvents(provider, headers, body, reader);
  return { [Symbol.asyncIterator]: () => events };
}

const FINISHED: IteratorReturnResult<undefined> = { done: true, value: undefined };

class ReplyEvents implements AsyncIterator<ProviderEvent> {
  /** Events read from the body and not yet taken. */
  private readonly pending: ProviderEvent[] = [];
  /** Why the stream fails, once the events read before it are taken. */
  private failure: unknown;
  private bodyEnded = false;
  /** The reader has had the end, an error, or left. */
  private finished = false;
  /** Wakes the `next` waiting for the body. */
  private wake: (() => void) | undefined;
  // undici's body ignores setEncoding; the decoder keeps a character split between chunks whole.
  private readonly decoder = new StringDecoder("utf8");
  private readonly parser = createParser({
    onEvent: (event) => {
      if (this.failure !== undefined) return;
      try {
        const text = this.reader.event(event, this.headers);
        if (text === TOOL_CALL_BEGUN) this.pending.push({ type: "tool" });
        else if (text) this.pending.push({ type: "delta", text });
      } catch (error) {
        // An error the reader finds ends the stream after the text that came before it.
        this.failure = error instanceof AppError ? error : incompleteError(this.provider, error);
      }
    },
  });

  constructor(
    private readonly provider: HostedProvider,
    private readonly headers: UpstreamHeaders,
    private readonly body: Dispatcher.ResponseData["body"],
    private readonly reader: StreamReader,
  ) {
    body.on("data", (chunk: Buffer) => {
      if (this.finished) return;
      this.parser.feed(this.decoder.write(chunk));
      if (this.pending.length > 0 || this.failure !== undefined) body.pause();
      this.wake?.();
    });
    body.on("end", () => {
      this.bodyEnded = true;
      this.wake?.();
    });
    body.on("error", (error) => this.fail(error));
    body.on("close", () => {
      if (!this.bodyEnded) this.fail(new Error("the body closed before its end"));
    });
  }

  next(): Promise<IteratorResult<ProviderEvent>> {
    const event = this.pending.shift();
    if (event) return Promise.resolve({ done: false, value: event });
    if (this.finished) return Promise.resolve(FINISHED);
    if (this.failure !== undefined) {
      this.finished = true;
      // Leaving with an error (a refusal inside the stream) closes the connection.
      this.body.destroy();
      return Promise.reject(this.failure);
    }
    if (this.bodyEnded) {
      this.finished = true;
      try {
        return Promise.resolve({ done: false, value: this.reader.end() });
      } catch (error) {
        return Promise.reject(error);
      }
    }
    this.body.resume();
    return new Promise((resolve, reject) => {
      this.wake = () => {
        this.wake = undefined;
        this.next().then(resolve, reject);
      };
    });
  }

  /** The reader stopped early: destroying the body closes the connection. */
  return(): Promise<IteratorResult<ProviderEvent>> {
    this.finished = true;
    this.pending.length = 0;
    this.body.destroy();
    this.wake?.();
    return Promise.resolve(FINISHED);
  }

  private fail(error: unknown): void {
    this.failure ??= error instanceof AppError ? error : incompleteError(this.provider, error);
    this.wake?.();
  }
}
