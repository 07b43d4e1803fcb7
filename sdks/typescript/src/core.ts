import {
  AgentryError,
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  errorFromResponse,
} from "./errors.js";
import {
  type AttemptFailure,
  newIdempotencyKey,
  parseRetryAfter,
  retryDelayMs,
  shouldRetry,
  takesIdempotencyKey,
} from "./retry.js";
import type { RateLimitInfo } from "./types.js";
import { VERSION } from "./version.js";

/** A `fetch` implementation: the global one by default, or any compatible function (for proxies, tests, ...). */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Options of a single call; each overrides the client's setting for this call only. */
export interface RequestOptions {
  /** Aborts the call (a stream too, at any point) when signalled; the call then rejects with `APIUserAbortError`. */
  signal?: AbortSignal | undefined;
  /** Milliseconds each attempt may take (for a stream: until it starts, then between two chunks). */
  timeout?: number | undefined;
  /** How many times a failed attempt may be retried. */
  maxRetries?: number | undefined;
  /** Extra HTTP headers. */
  headers?: Record<string, string> | undefined;
  /**
   * The `Idempotency-Key` of a write (POST, PUT, PATCH, DELETE), sent on every attempt of this call; reads ignore it.
   * Without it each write gets a new random key, the same on each of its retries. Give your own to make a call
   * you repeat yourself (after a crash, from a queue) run once: the service answers the same key and request
   * with the first answer for 24 hours, and the same key with another request with a `BadRequestError` (422
   * `IDEMPOTENCY_KEY_REUSED`). 1 to 255 printable ASCII characters.
   */
  idempotencyKey?: string | undefined;
}

/** @internal The client's settings, resolved. */
export interface TransportConfig {
  apiKey: string;
  baseURL: string;
  timeout: number;
  maxRetries: number;
  maxRetryDelay: number;
  fetch: Fetch;
  defaultHeaders: Record<string, string>;
}

/** @internal One REST operation to perform. */
export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Relative to the base URL, e.g. `/agents`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
}

/** @internal A stream whose response has arrived. `release` must be called once the body is done with. */
export interface OpenedStream {
  response: Response;
  release(): void;
}

type Attempt<T> =
  | { ok: true; value: T }
  | { ok: false; error: APIError; failure: AttemptFailure; retryAfter?: number | undefined };

/**
 * @internal Sends requests: headers, timeouts, retries with backoff, error mapping and the rate-limit state.
 * Resources call it; nothing else should.
 */
export class Transport {
  /** The `X-RateLimit-*` state of the last response that carried it. */
  lastRateLimit: RateLimitInfo | null = null;
  readonly #config: TransportConfig;

  constructor(config: TransportConfig) {
    this.#config = config;
  }

  /** The client's per-attempt timeout in milliseconds. */
  get timeout(): number {
    return this.#config.timeout;
  }

  /** Performs a JSON request and returns the parsed success body (the `{success, data, ...}` envelope). */
  async json(spec: RequestSpec, options: RequestOptions = {}): Promise<unknown> {
    return this.send(spec, options, (attempt, key) => this.jsonAttempt(spec, options, attempt, key));
  }

  /**
   * Starts a streamed request (`text/event-stream` unless `mediaType` says otherwise) and returns once the
   * response has arrived and is of that type. Failures before that are retried like any request; the body is
   * never retried.
   */
  async stream(
    spec: RequestSpec,
    options: RequestOptions = {},
    mediaType = "text/event-stream",
  ): Promise<OpenedStream> {
    return this.send(spec, options, (attempt, key) =>
      this.streamAttempt(spec, options, attempt, key, mediaType),
    );
  }

  /**
   * Runs attempts until one succeeds, one fails for good, or the retries are spent. A write's attempts share one
   * `Idempotency-Key`, so that the service runs it once however many of them reach it.
   */
  private async send<T>(
    spec: RequestSpec,
    options: RequestOptions,
    attempt: (controls: AttemptControls, idempotencyKey: string | undefined) => Promise<Attempt<T>>,
  ): Promise<T> {
    const maxRetries = options.maxRetries ?? this.#config.maxRetries;
    const timeout = options.timeout ?? this.#config.timeout;
    const idempotencyKey = takesIdempotencyKey(spec.method)
      ? (options.idempotencyKey ?? newIdempotencyKey())
      : undefined;
    for (let retry = 0; ; retry++) {
      const outcome = await attempt(startAttempt(options.signal, timeout), idempotencyKey);
      if (outcome.ok) return outcome.value;
      if (retry >= maxRetries || !shouldRetry(outcome.failure)) throw outcome.error;
      await sleep(retryDelayMs(retry, outcome.retryAfter, this.#config.maxRetryDelay), options.signal);
    }
  }

  private async jsonAttempt(
    spec: RequestSpec,
    options: RequestOptions,
    controls: AttemptControls,
    idempotencyKey: string | undefined,
  ): Promise<Attempt<unknown>> {
    let response: Response;
    try {
      response = await this.fetch(spec, options, controls, idempotencyKey, "application/json");
    } catch (cause) {
      return connectionFailure(cause, controls);
    }
    this.recordRateLimit(response.headers);
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      return connectionFailure(cause, controls);
    }
    controls.release();
    if (!response.ok) return statusFailure(response, text);
    const body = parseJson(text);
    if (body === undefined) {
      throw new APIError(`${response.status}: the response is not JSON.`, {
        status: response.status,
        requestId: response.headers.get("x-request-id") ?? undefined,
        headers: response.headers,
        body: text,
      });
    }
    return { ok: true, value: body };
  }

  private async streamAttempt(
    spec: RequestSpec,
    options: RequestOptions,
    controls: AttemptControls,
    idempotencyKey: string | undefined,
    mediaType: string,
  ): Promise<Attempt<OpenedStream>> {
    let response: Response;
    try {
      response = await this.fetch(spec, options, controls, idempotencyKey, mediaType);
    } catch (cause) {
      return connectionFailure(cause, controls);
    }
    this.recordRateLimit(response.headers);
    if (response.ok && hasMediaType(response, mediaType)) {
      // From here the stream's own silence timer applies; the caller's signal still reaches the body.
      controls.stopTimer();
      return { ok: true, value: { response, release: controls.release } };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      return connectionFailure(cause, controls);
    }
    controls.release();
    if (!response.ok) return statusFailure(response, text);
    throw new APIError(
      `${response.status}: expected ${mediaType}, got '${response.headers.get("content-type")}'.`,
      {
        status: response.status,
        requestId: response.headers.get("x-request-id") ?? undefined,
        headers: response.headers,
        body: parseJson(text) ?? text,
      },
    );
  }

  private fetch(
    spec: RequestSpec,
    options: RequestOptions,
    controls: AttemptControls,
    idempotencyKey: string | undefined,
    accept: string,
  ): Promise<Response> {
    const config = this.#config;
    const headers = new Headers({ accept, authorization: `Bearer ${config.apiKey}` });
    // A form sets its own multipart content type, with its boundary.
    const form = typeof FormData !== "undefined" && spec.body instanceof FormData;
    if (spec.body !== undefined && !form) headers.set("content-type", "application/json");
    if (idempotencyKey !== undefined) headers.set("idempotency-key", idempotencyKey);
    // Browsers refuse to let scripts set User-Agent.
    if (isNode()) headers.set("user-agent", `agentry-typescript/${VERSION}`);
    for (const [name, value] of Object.entries(config.defaultHeaders)) headers.set(name, value);
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    const init: RequestInit = { method: spec.method, headers, signal: controls.signal };
    if (spec.body !== undefined) init.body = form ? (spec.body as FormData) : JSON.stringify(spec.body);
    return config.fetch(buildURL(config.baseURL, spec), init);
  }

  private recordRateLimit(headers: Headers): void {
    const limit = Number(headers.get("x-ratelimit-limit") ?? Number.NaN);
    const remaining = Number(headers.get("x-ratelimit-remaining") ?? Number.NaN);
    const reset = Number(headers.get("x-ratelimit-reset") ?? Number.NaN);
    if (Number.isFinite(limit) && Number.isFinite(remaining) && Number.isFinite(reset)) {
      this.lastRateLimit = { limit, remaining, resetAt: new Date(reset * 1000) };
    }
  }
}

/** The abort signal and timer of one attempt. */
interface AttemptControls {
  signal: AbortSignal;
  /** The caller's signal, when it has fired. */
  callerAborted(): boolean;
  timedOut(): boolean;
  timeoutMs: number;
  /** Stops the attempt's timer but keeps the caller's signal connected (for a stream's body). */
  stopTimer(): void;
  /** Stops the timer and disconnects the caller's signal. */
  release(): void;
}

function startAttempt(caller: AbortSignal | undefined, timeoutMs: number): AttemptControls {
  if (caller?.aborted) throw new APIUserAbortError();
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort();
  caller?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  return {
    signal: controller.signal,
    callerAborted: () => caller?.aborted === true,
    timedOut: () => timedOut,
    timeoutMs,
    stopTimer: () => clearTimeout(timer),
    release: () => {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onAbort);
    },
  };
}

/** A fetch or body read that failed: the caller's abort, the attempt's timeout, or the connection. */
function connectionFailure(cause: unknown, controls: AttemptControls): Attempt<never> {
  controls.release();
  if (controls.callerAborted()) throw new APIUserAbortError();
  if (controls.timedOut()) {
    return {
      ok: false,
      error: new APITimeoutError(`Request timed out after ${controls.timeoutMs} ms.`, cause),
      failure: { kind: "timeout" },
    };
  }
  return {
    ok: false,
    error: new APIConnectionError(`Connection error: ${describe(cause)}`, cause),
    failure: { kind: "connection" },
  };
}

function statusFailure(response: Response, text: string): Attempt<never> {
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  const error = errorFromResponse(response.status, response.headers, parseJson(text) ?? text, retryAfter);
  return {
    ok: false,
    error,
    failure: { kind: "status", status: response.status, code: error.code },
    retryAfter,
  };
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause;
  return inner instanceof Error && inner.message ? `${cause.message} (${inner.message})` : cause.message;
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function hasMediaType(response: Response, mediaType: string): boolean {
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  return type === mediaType;
}

function buildURL(baseURL: string, spec: RequestSpec): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(spec.query ?? {})) {
    if (value !== undefined) query.set(name, String(value));
  }
  const search = query.toString();
  return `${baseURL}${spec.path}${search ? `?${search}` : ""}`;
}

/** Waits, unless the caller aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new APIUserAbortError());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

interface MaybeProcess {
  process?: {
    env?: Record<string, string | undefined>;
    versions?: { node?: string };
    getBuiltinModule?: (id: string) => unknown;
  };
}

interface NodeFs {
  readFile(path: string, encoding: "utf8"): Promise<string>;
}

function isNode(): boolean {
  return typeof (globalThis as MaybeProcess).process?.versions?.node === "string";
}

/** An environment variable, where there is an environment (Node, Deno, Bun); never in a browser. */
export function readEnv(name: string): string | undefined {
  const value = (globalThis as MaybeProcess).process?.env?.[name]?.trim();
  return value ? value : undefined;
}

/**
 * The text of a file, where there is a file system: Node's, reached through `process.getBuiltinModule` (Node
 * 20.16 and later) so that nothing here imports Node and the SDK still loads in a browser.
 */
export async function readTextFile(path: string): Promise<string> {
  const fs = (globalThis as MaybeProcess).process?.getBuiltinModule?.("node:fs/promises") as
    | NodeFs
    | undefined;
  if (!fs) {
    throw new AgentryError(
      `Cannot read ${path}: reading files needs Node 20.16 or later; pass the file's contents as an object instead.`,
    );
  }
  try {
    return await fs.readFile(path, "utf8");
  } catch (cause) {
    throw new AgentryError(`Cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}

/** Rejects a setting that would make the client misbehave later, at construction. */
export function checkNumber(name: string, value: number, min: number, integer: boolean): number {
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new AgentryError(
      `${name} must be ${integer ? "an integer" : "a number"} of at least ${min}; got ${value}.`,
    );
  }
  return value;
}
