import { EventEmitter, once } from "node:events";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { EXTRACTION_PROMPT } from "../memories.js";

/**
 * The answer to one request. Everything is optional: an empty answer is the fake's default reply, "Echo: " and
 * the last user message, sent at once.
 */
export interface FakeAnswer {
  /** The reply text. */
  text?: string;
  /** The pieces a streamed reply is sent in; by default the text split after each space. */
  chunks?: string[];
  /** Milliseconds before anything is sent (status line included): a slow provider. */
  delayMs?: number;
  /** Milliseconds between the events of a streamed reply. */
  chunkDelayMs?: number;
  /**
   * Destroys the connection after this many text chunks of a streamed reply (0: before the first), or,
   * for a JSON answer, after the headers and half the body: a connection cut in the middle.
   */
  cutAfter?: number;
  /** The provider's own finish reason, e.g. "length" (OpenAI) or "max_tokens" (Anthropic). */
  finishReason?: string;
  /**
   * Tools the model calls, in this order, after the text (which is empty by default then): the answer is a tool
   * round, with the provider's own finish reason for it ("tool_calls", "tool_use") unless `finishReason` says
   * otherwise. `arguments` is sent as given when it is a string (so tests can send broken JSON), else as JSON.
   */
  toolCalls?: FakeToolCall[];
  /** Reported usage; by default input is about a token per four characters of the prompt, output one per chunk. */
  usage?: { input: number; output: number };
  /** Fail with this HTTP status instead, with the provider's real error body. */
  status?: number;
  /** Extra response headers, e.g. `{ "retry-after": "7" }`. */
  headers?: Record<string, string>;
  /** The error body's message; a realistic one by default. */
  errorMessage?: string;
  /** The error body's type (OpenAI: also its code); the provider's usual one for the status by default. */
  errorType?: string;
}

/** One tool call of a scripted answer; its id is made up when not given. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments?: unknown;
}

/** A request the fake received. */
export interface RecordedRequest<Body> {
  method: string;
  path: string;
  /** Lower-cased names. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Body;
  /**
   * How the exchange ended: `finished` (the whole answer was sent), `aborted` (the client closed the connection
   * first) or `cut` (the fake destroyed it, see `cutAfter`).
   */
  outcome: Promise<"finished" | "aborted" | "cut">;
}

export interface FakeProviderOptions {
  /** When set, requests without this key are answered 401, as the real API does. */
  apiKey?: string;
  /** When set, requests for another model are answered 404, as the real API does. */
  models?: string[];
}

/** What a wire format must provide; the common server does scripting, recording, delays and cuts. */
export interface WireFormat<Body> {
  readonly path: string;
  /** The base URL to hand the provider client, from the server's origin. */
  baseURL(origin: string): string;
  authorized(headers: IncomingHttpHeaders, apiKey: string): boolean;
  model(body: Body): string;
  streamed(body: Body): boolean;
  lastUserText(body: Body): string;
  /** The system prompt's text; empty when there is none. */
  system(body: Body): string;
  promptChars(body: Body): number;
  errorBody(
    status: number,
    message: string | undefined,
    type: string | undefined,
    body: Body | undefined,
  ): unknown;
  json(body: Body, reply: Reply): unknown;
  /** The raw SSE text of each event; `textFrames` marks which of them carry text, for `cutAfter`. */
  events(body: Body, reply: Reply): { frames: string[]; textFrames: Set<number> };
}

export interface Reply {
  id: string;
  text: string;
  chunks: string[];
  finishReason: string | undefined;
  usage: { input: number; output: number };
  /** Arguments as JSON text; empty when the answer calls no tool. */
  toolCalls: { id: string; name: string; arguments: string }[];
}

/**
 * A local HTTP server on port 0 that speaks a provider's real wire format, for tests through the real provider
 * clients.
 *
 * Scripting: each `reply`, `failWith`, `delay`, `cutAfter` or `answer` call queues the answer to one request,
 * first queued first used; when the queue is empty the default answer (`Echo: <last user message>`) is sent.
 */
export class FakeProviderServer<Body> {
  /**
   * Every request received, oldest first, recorded as soon as its body has arrived; memory extractions apart
   * (`extractions`), so that the requests of turns are what they were before memories.
   */
  readonly requests: RecordedRequest<Body>[] = [];
  /** Every memory extraction received (its system prompt is the service's EXTRACTION_PROMPT), oldest first. */
  readonly extractions: RecordedRequest<Body>[] = [];
  private readonly queue: FakeAnswer[] = [];
  private readonly extractionQueue: FakeAnswer[] = [];
  private readonly events = new EventEmitter();
  private server: Server | undefined;
  private origin = "";
  private counter = 0;

  constructor(
    private readonly format: WireFormat<Body>,
    private readonly options: FakeProviderOptions = {},
  ) {}

  /** Starts listening on 127.0.0.1, on a free port. */
  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(error));
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    this.server = server;
    this.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** The base URL to give the provider client (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`). */
  get baseURL(): string {
    return this.format.baseURL(this.origin);
  }

  /** The most recent request; throws when there is none. */
  get lastRequest(): RecordedRequest<Body> {
    const last = this.requests[this.requests.length - 1];
    if (!last) throw new Error("the fake provider has received no request");
    return last;
  }

  /** Queues a reply with this text (and options such as delays or a cut). */
  reply(text: string, options: Omit<FakeAnswer, "text" | "status"> = {}): this {
    return this.answer({ ...options, text });
  }

  /** Queues a failure: the status with the provider's real error body, and these headers. */
  failWith(
    status: number,
    options: { headers?: Record<string, string>; message?: string; type?: string; delayMs?: number } = {},
  ): this {
    return this.answer({
      status,
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.message ? { errorMessage: options.message } : {}),
      ...(options.type ? { errorType: options.type } : {}),
      ...(options.delayMs ? { delayMs: options.delayMs } : {}),
    });
  }

  /** Queues the default reply, sent after `ms`. */
  delay(ms: number): this {
    return this.answer({ delayMs: ms });
  }

  /** Queues the default reply, its connection destroyed after `chunks` text chunks. */
  cutAfter(chunks: number): this {
    return this.answer({ cutAfter: chunks });
  }

  /** Queues an answer that calls these tools (in parallel when there are several), with `text` before them. */
  callTools(toolCalls: FakeToolCall[], options: Omit<FakeAnswer, "toolCalls" | "status"> = {}): this {
    return this.answer({ text: "", ...options, toolCalls });
  }

  /** Queues any answer. */
  answer(answer: FakeAnswer): this {
    this.queue.push(answer);
    return this;
  }

  /**
   * Queues the answer to one memory extraction, apart from the answers to turns. Unscripted, an extraction is
   * answered `{"facts": []}` with no usage, so that turns' usage stays theirs alone.
   */
  answerExtraction(answer: FakeAnswer | string[]): this {
    this.extractionQueue.push(
      Array.isArray(answer)
        ? { text: JSON.stringify({ facts: answer }), usage: { input: 0, output: 0 } }
        : answer,
    );
    return this;
  }

  /** Resolves once `count` memory extractions in all have arrived. */
  async waitForExtractions(count = 1): Promise<RecordedRequest<Body>> {
    while (this.extractions.length < count) await once(this.events, "extraction");
    return this.extractions[count - 1]!;
  }

  /** Resolves once `count` requests in all have arrived. */
  async waitForRequests(count = 1): Promise<RecordedRequest<Body>> {
    while (this.requests.length < count) await once(this.events, "request");
    return this.requests[count - 1]!;
  }

  /** Resolves with the next request to arrive after this call. */
  nextRequest(): Promise<RecordedRequest<Body>> {
    return this.waitForRequests(this.requests.length + 1);
  }

  /** Forgets queued answers and recorded requests. */
  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
    this.extractionQueue.length = 0;
    this.extractions.length = 0;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let settle: (outcome: "finished" | "aborted" | "cut") => void = () => {};
    const outcome = new Promise<"finished" | "aborted" | "cut">((resolve) => {
      settle = resolve;
    });
    let cut = false;
    res.on("close", () => settle(cut ? "cut" : res.writableFinished ? "finished" : "aborted"));

    const raw = await readBody(req);
    let body: Body | undefined;
    try {
      body = JSON.parse(raw) as Body;
    } catch {
      body = undefined;
    }
    const extraction = body !== undefined && this.format.system(body) === EXTRACTION_PROMPT;
    if (body !== undefined) {
      (extraction ? this.extractions : this.requests).push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body,
        outcome,
      });
      this.events.emit(extraction ? "extraction" : "request");
    }

    const format = this.format;
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "POST" || path !== format.path) {
      return sendJson(
        res,
        404,
        format.errorBody(404, `Unknown request URL: ${req.method} ${path}`, undefined, body),
      );
    }
    if (body === undefined) {
      return sendJson(
        res,
        400,
        format.errorBody(400, "We could not parse the JSON body of your request.", undefined, body),
      );
    }
    const answer = extraction
      ? (this.extractionQueue.shift() ?? { text: '{"facts": []}', usage: { input: 0, output: 0 } })
      : (this.queue.shift() ?? {});
    if (answer.delayMs && !(await pause(answer.delayMs, res))) return;

    if (this.options.apiKey !== undefined && !format.authorized(req.headers, this.options.apiKey)) {
      return sendJson(res, 401, format.errorBody(401, undefined, undefined, body), answer.headers);
    }
    if (this.options.models && !this.options.models.includes(format.model(body))) {
      return sendJson(res, 404, format.errorBody(404, undefined, undefined, body), answer.headers);
    }
    if (answer.status !== undefined) {
      const error = format.errorBody(answer.status, answer.errorMessage, answer.errorType, body);
      return sendJson(res, answer.status, error, answer.headers);
    }

    const text = answer.text ?? (answer.toolCalls ? "" : `Echo: ${format.lastUserText(body)}`);
    const chunks = answer.chunks ?? text.split(/(?<= )/).filter(Boolean);
    this.counter += 1;
    const id = String(this.counter).padStart(6, "0");
    const toolCalls = (answer.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_fake${id}_${i}`,
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    }));
    const reply: Reply = {
      id,
      text: answer.chunks ? answer.chunks.join("") : text,
      chunks,
      finishReason: answer.finishReason,
      usage: answer.usage ?? {
        input: Math.ceil(format.promptChars(body) / 4),
        output: chunks.length + toolCalls.length,
      },
      toolCalls,
    };

    if (!format.streamed(body)) {
      const payload = JSON.stringify(format.json(body, reply));
      if (answer.cutAfter !== undefined) {
        res.writeHead(200, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
          ...answer.headers,
        });
        res.write(payload.slice(0, Math.floor(payload.length / 2)));
        cut = true;
        hangUp(res);
        return;
      }
      return sendJson(res, 200, JSON.parse(payload), answer.headers);
    }

    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      ...answer.headers,
    });
    res.flushHeaders();
    const { frames, textFrames } = format.events(body, reply);
    let sentText = 0;
    for (const [index, frame] of frames.entries()) {
      if (answer.cutAfter !== undefined && sentText >= answer.cutAfter && textFrames.has(index)) {
        cut = true;
        hangUp(res);
        return;
      }
      if (index > 0 && answer.chunkDelayMs && !(await pause(answer.chunkDelayMs, res))) return;
      if (res.destroyed) return;
      res.write(frame);
      if (textFrames.has(index)) sentText += 1;
    }
    res.end();
  }
}

/**
 * Closes the connection in the middle of the response body. What was written is delivered first (FIN, not
 * RST, which could make the client drop bytes it has received but not read), so tests see exactly the text
 * sent before the cut and then the broken body.
 */
function hangUp(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  socket.end(() => socket.destroy());
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

/** Waits, unless the client goes away first; false then. */
function pause(ms: number, res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      res.off("close", onClose);
      resolve(true);
    }, ms);
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    res.once("close", onClose);
  });
}
