import { Agentry, type ClientOptions, type Fetch } from "../src/index.js";

/** A request as the mock fetch saw it. */
export interface SeenRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: unknown;
  signal: AbortSignal;
}

export type Handler = (request: SeenRequest) => Response | Promise<Response>;

/**
 * A fetch that answers each request with the next handler (the last one repeats) and records what it saw.
 * It honours the request's signal the way real fetch does, so timeouts and aborts behave.
 */
export function mockFetch(...handlers: Handler[]) {
  const requests: SeenRequest[] = [];
  const fetch: Fetch = async (url, init) => {
    const signal = init.signal as AbortSignal;
    const request: SeenRequest = {
      url: new URL(url),
      method: init.method ?? "GET",
      headers: new Headers(init.headers),
      body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
      signal,
    };
    requests.push(request);
    const handler = handlers[Math.min(requests.length - 1, handlers.length - 1)]!;
    if (signal.aborted) throw abortError();
    return await new Promise<Response>((resolve, reject) => {
      signal.addEventListener("abort", () => reject(abortError()), { once: true });
      Promise.resolve(handler(request)).then(resolve, reject);
    });
  };
  return { fetch, requests };
}

export function abortError(): Error {
  return new DOMException("This operation was aborted", "AbortError");
}

/** A handler that never answers (until the request is aborted). */
export const hang: Handler = () => new Promise<Response>(() => {});

/** A JSON response with the API's headers. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": "req_header", ...headers },
  });
}

/** The API's error envelope. */
export function apiError(
  status: number,
  code: string,
  extra: { details?: unknown; headers?: Record<string, string>; message?: string } = {},
): Response {
  return json(
    status,
    {
      success: false,
      error: {
        code,
        message: extra.message ?? `${code} happened.`,
        ...(extra.details ? { details: extra.details } : {}),
        requestId: "req_body",
      },
    },
    extra.headers,
  );
}

/** A connection failure as Node's fetch reports it: TypeError("fetch failed") with the socket error as cause. */
export function connectionFailure(code: string): Handler {
  return () => {
    const cause = Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
    throw new TypeError("fetch failed", { cause });
  };
}

/** A `text/event-stream` response whose body is sent in exactly these chunks (strings or bytes). */
export function sse(
  chunks: (string | Uint8Array)[],
  options: { end?: boolean; onCancel?: () => void; headers?: Record<string, string> } = {},
): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      if (options.end !== false) controller.close();
    },
    cancel() {
      options.onCancel?.();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "x-request-id": "req_stream",
      ...options.headers,
    },
  });
}

/** One SSE frame as the gateway writes it. */
export function frame(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const AGENT_ID = "agt_01JAAAAAAAAAAAAAAAAAAAAAAA";

export function agent(overrides: Record<string, unknown> = {}) {
  return {
    id: AGENT_ID,
    name: "Ada",
    bio: [],
    personality: {},
    knowledge: [],
    goals: [],
    clients: [],
    settings: {},
    modelProvider: null,
    model: null,
    plugins: [],
    status: "active",
    statusReason: null,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    apiEndpoint: `http://localhost:8080/v1/agents/${AGENT_ID}/messages`,
    ...overrides,
  };
}

export function reply(overrides: Record<string, unknown> = {}) {
  return {
    id: "msg_01JAAAAAAAAAAAAAAAAAAAAAAA",
    agentId: AGENT_ID,
    userId: null,
    roomId: null,
    text: "Hello there.",
    model: "gpt-4o-mini",
    modelProvider: "openai",
    finishReason: "stop",
    usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 },
    latencyMs: 42,
    createdAt: "2026-01-01T00:00:00.000Z",
    ...overrides,
  };
}

/** A client on the mock fetch, with retries that do not wait unless a test says otherwise. */
export function clientWith(fetch: Fetch, options: ClientOptions = {}): Agentry {
  return new Agentry({
    apiKey: "agentry_sk_test",
    baseURL: "http://api.test/v1",
    fetch,
    maxRetryDelay: 0,
    ...options,
  });
}
