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

/**
 * Turns the server-sent events of one streamed reply into provider events; one reader per call. Its methods
 * may throw an AppError (a refusal reported inside the stream, an incomplete reply), which ends the stream.
 */
export interface StreamReader {
  /** The text this event adds to the reply, if any. `headers` are the stream's response headers. */
  event(event: EventSourceMessage, headers: UpstreamHeaders): string | undefined;
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

/** One generator per stream, holding between events little more than the connection: idle streams are many. */
async function* replyEvents(
  provider: HostedProvider,
  headers: UpstreamHeaders,
  body: Dispatcher.ResponseData["body"],
  reader: StreamReader,
): AsyncGenerator<ProviderEvent> {
  const texts: string[] = [];
  // An error the reader finds ends the stream after the text that came before it in the same chunk.
  let failure: unknown;
  const parser = createParser({
    onEvent(event) {
      if (failure !== undefined) return;
      try {
        const text = reader.event(event, headers);
        if (text) texts.push(text);
      } catch (error) {
        failure = error;
      }
    },
  });
  // undici's body ignores setEncoding; the decoder keeps a character split between chunks whole.
  const decoder = new StringDecoder("utf8");
  try {
    // Leaving this loop early (the reader stopped, or an event was an error) destroys the body, which closes
    // the connection.
    for await (const chunk of body) {
      parser.feed(decoder.write(chunk as Buffer));
      for (let text = texts.shift(); text !== undefined; text = texts.shift()) yield { type: "delta", text };
      if (failure !== undefined) throw failure;
    }
  } catch (error) {
    throw error instanceof AppError ? error : incompleteError(provider, error);
  }
  yield reader.end();
}
