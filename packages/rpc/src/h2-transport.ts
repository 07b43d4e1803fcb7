import http2 from "node:http2";
import { create, type DescMessage, type DescMethod, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  appendHeaders,
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type Interceptor,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { getAbortSignalReason } from "@connectrpc/connect/protocol";
import {
  errorFromJsonBytes,
  trailerDemux,
  validateResponseWithCompression,
} from "@connectrpc/connect/protocol-connect";
import { createConnectTransport } from "@connectrpc/connect-node";

export interface H2TransportOptions {
  /** The service's base URL: `http://` for HTTP/2 without TLS (h2c), `https://` for HTTP/2 over TLS. */
  baseUrl: string;
  /** Run on every call, outermost first, as a connect-node transport's interceptors. */
  interceptors?: Interceptor[];
  /** Passed to `http2.connect`, e.g. TLS options (none by default, as connect-node's transport). */
  nodeOptions?: http2.ClientSessionOptions | http2.SecureClientSessionOptions;
  /** How long a connection with no call in flight stays open (15 minutes, connect-node's default). */
  idleTimeoutMs?: number;
}

/** A Transport that can also let go of its connection (tests, and processes that stop calling a service). */
export interface H2Transport extends Transport {
  close(): void;
}

/** What a caller passes as a call's headers (the DOM's HeadersInit, which this project's lib does not name). */
type HeadersInit = ConstructorParameters<typeof Headers>[0];

const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR, NGHTTP2_NO_ERROR } = http2.constants;
const CONTENT_TYPE = "application/proto";
const IDLE_TIMEOUT_MS = 15 * 60 * 1000;

/**
 * The Connect protocol's unary calls over one long-lived `node:http2` session per service, speaking exactly what
 * connect-node's transport speaks (binary proto, `connect-protocol-version: 1`, `connect-timeout-ms` for a
 * deadline, errors as JSON with their code, message, details and metadata) and failing with the same
 * ConnectErrors. What it leaves out is what connect-node 2.1.2 builds for every call whether or not anyone looks:
 * two AbortControllers aborted at the end of each call (a DOMException each), request and response Headers, and a
 * "sentinel completed early" ConnectError with its stack. Here a call makes a timer only with a deadline, listens
 * to the caller's signal only if there is one, builds Headers and an AbortSignal only when an interceptor or the
 * caller reads them, and an error object only when it fails. Streams go through connect-node's transport on the
 * same session.
 */
export function createH2Transport(options: H2TransportOptions): H2Transport {
  const connection = new Http2Connection(options.baseUrl, options.nodeOptions, options.idleTimeoutMs);
  const base = options.baseUrl.replace(/\/?$/, "/");
  const basePath = new URL(base).pathname;
  const interceptors = options.interceptors ?? [];
  const send = (request: UnaryRequest) => exchange(connection, request);
  // Chained once: the innermost step takes everything it needs from the request.
  const run = interceptors.reduceRight(
    (next, interceptor) => interceptor(next as never) as typeof send,
    send,
  );
  let streams: Transport | undefined;

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethod & { input: I; output: O },
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit | undefined,
      input: unknown,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      // As connect-node: no deadline for a timeout of zero or less.
      const deadline = timeoutMs === undefined || timeoutMs <= 0 ? undefined : timeoutMs;
      const call = new UnaryCall(
        method,
        `${basePath}${method.parent.typeName}/${method.name}`,
        header,
        deadline,
      );
      call.begin(signal, contextValues);
      const request = new H2UnaryRequest(
        call,
        method,
        `${base}${method.parent.typeName}/${method.name}`,
        create(method.input, input as never),
      );
      try {
        const response = await run(request as unknown as UnaryRequest);
        call.end(undefined);
        return response as unknown as UnaryResponse<I, O>;
      } catch (error) {
        // A call that was cut short fails with why (its deadline, the caller's reason), whatever the
        // interceptors made of it on the way out: connect-node's runUnaryCall does the same.
        const failure = call.failure ?? ConnectError.from(error);
        call.end(failure);
        throw failure;
      }
    },

    stream<I extends DescMessage, O extends DescMessage>(
      ...args: Parameters<Transport["stream"]>
    ): Promise<StreamResponse<I, O>> {
      streams ??= createConnectTransport({
        baseUrl: options.baseUrl,
        httpVersion: "2",
        acceptCompression: [],
        interceptors,
        sessionManager: connection,
      });
      return streams.stream(...args) as Promise<StreamResponse<I, O>>;
    },

    close() {
      connection.close();
    },
  } as H2Transport;
}

/**
 * One unary call: its deadline, the caller's signal, and what an interceptor may ask for (its headers, its
 * signal, its context values), each made only when asked.
 */
class UnaryCall {
  /** Set when the call was cut short (its deadline passed, its caller gave up): the error it fails with. */
  failure: ConnectError | undefined;
  /** The headers as an interceptor sees them, once one has read them; else `init` is sent as it is. */
  built: Headers | undefined;
  /** Rejects the exchange under way when the call is cut short. */
  interrupt: ((failure: ConnectError) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private signal: AbortSignal | undefined;
  private controller: AbortController | undefined;
  private values: ContextValues | undefined;
  private ended = false;

  constructor(
    readonly method: DescMethod,
    readonly path: string,
    readonly init: HeadersInit | undefined,
    readonly timeoutMs: number | undefined,
  ) {}

  begin(signal: AbortSignal | undefined, values: ContextValues | undefined): void {
    this.values = values;
    if (this.timeoutMs !== undefined) {
      this.timer = setTimeout(
        () => this.cut(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
        this.timeoutMs,
      );
    }
    if (signal) {
      this.signal = signal;
      if (signal.aborted) this.onAbort();
      else signal.addEventListener("abort", this.onAbort);
    }
  }

  /** The caller gave up: the call fails with its reason, as connect-node's linked signal does. */
  private readonly onAbort = () => {
    this.cut(ConnectError.from(getAbortSignalReason(this.signal!), Code.Canceled));
  };

  private cut(failure: ConnectError): void {
    if (this.failure || this.ended) return;
    this.failure = failure;
    this.controller?.abort(failure);
    this.interrupt?.(failure);
  }

  /** Releases the timer and the listener; a signal handed out fires, as connect-node's does at every call's end. */
  end(failure: ConnectError | undefined): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.onAbort);
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(failure);
  }

  get abortSignal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.failure) this.controller.abort(this.failure);
      else if (this.ended) this.controller.abort();
    }
    return this.controller.signal;
  }

  get header(): Headers {
    if (!this.built) {
      // What connect-node's interceptors see: the caller's headers with the protocol's own set over them.
      const headers = new Headers(this.init);
      if (this.timeoutMs !== undefined) headers.set("connect-timeout-ms", String(this.timeoutMs));
      headers.set("content-type", CONTENT_TYPE);
      headers.set("connect-protocol-version", "1");
      this.built = headers;
    }
    return this.built;
  }

  get contextValues(): ContextValues {
    this.values ??= createContextValues();
    return this.values;
  }

  /** The HTTP/2 headers of the request: from the Headers if an interceptor has read them, else straight from init. */
  outgoing(built: Headers | undefined): http2.OutgoingHttpHeaders {
    const out: http2.OutgoingHttpHeaders = { ":method": "POST", ":path": this.path };
    if (built) {
      built.forEach((value, key) => {
        out[key] = value;
      });
      return out;
    }
    const init = this.init;
    if (init) {
      if (Array.isArray(init)) {
        for (const [key, value] of init)
          if (key !== undefined && value !== undefined) appendHeader(out, key, value);
      } else if (init instanceof Headers) {
        init.forEach((value, key) => {
          out[key] = value;
        });
      } else {
        const record = init as Record<string, string | readonly string[]>;
        for (const key in record) {
          const value = record[key]!;
          if (typeof value === "string") appendHeader(out, key, value);
          else for (const v of value) appendHeader(out, key, v);
        }
      }
    }
    if (this.timeoutMs !== undefined) out["connect-timeout-ms"] = String(this.timeoutMs);
    out["content-type"] = CONTENT_TYPE;
    out["connect-protocol-version"] = "1";
    return out;
  }
}

function appendHeader(out: http2.OutgoingHttpHeaders, name: string, value: string): void {
  const key = name.toLowerCase();
  const existing = out[key];
  if (existing === undefined) out[key] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else out[key] = [String(existing), value];
}

/**
 * The request interceptors see. Its headers, signal and context values are getters on the class (built when
 * read); `call` is a field, so a copy an interceptor makes (`{ ...request, header }`) still reaches the call.
 */
class H2UnaryRequest {
  readonly stream = false;
  readonly requestMethod = "POST";
  readonly service: DescMethod["parent"];

  constructor(
    readonly call: UnaryCall,
    readonly method: DescMethod,
    readonly url: string,
    readonly message: unknown,
  ) {
    this.service = method.parent;
  }

  get header(): Headers {
    return this.call.header;
  }

  get signal(): AbortSignal {
    return this.call.abortSignal;
  }

  get contextValues(): ContextValues {
    return this.call.contextValues;
  }
}

/** A unary answer. Its headers and trailers are built only if someone reads them: most calls never do. */
class H2UnaryResponse {
  readonly stream = false;
  readonly service: DescMethod["parent"];
  private demuxed: [Headers, Headers] | undefined;

  constructor(
    readonly method: DescMethod,
    readonly message: unknown,
    private readonly raw: http2.IncomingHttpHeaders,
  ) {
    this.service = method.parent;
  }

  get header(): Headers {
    this.demuxed ??= trailerDemux(webHeaders(this.raw));
    return this.demuxed[0];
  }

  get trailer(): Headers {
    this.demuxed ??= trailerDemux(webHeaders(this.raw));
    return this.demuxed[1];
  }
}

/** The innermost step of a call: one HTTP/2 exchange of the request's bytes for the answer's. */
function exchange(connection: Http2Connection, request: UnaryRequest): Promise<UnaryResponse> {
  const call = (request as unknown as H2UnaryRequest).call;
  if (call.failure) return Promise.reject(call.failure);
  const { method } = call;
  let body: Uint8Array;
  try {
    body = toBinary(method.input, request.message as never);
  } catch (e) {
    return Promise.reject(new ConnectError(`serialize binary: ${messageOf(e)}`, Code.Internal));
  }
  // An interceptor that read the headers may have changed them (tracing adds its `traceparent`); one that
  // replaced the request passes its own.
  const built = request instanceof H2UnaryRequest ? call.built : (request.header ?? call.built);
  const headers = call.outgoing(built);

  return new Promise<UnaryResponse>((resolve, reject) => {
    let settled = false;
    let retried = false;
    let stream: http2.ClientHttp2Stream | undefined;
    const fail = (reason: unknown) => {
      if (settled) return;
      settled = true;
      call.interrupt = undefined;
      const failure = reason instanceof ConnectError ? reason : connectErrorFromNodeReason(reason);
      // As connect-node: a cancelled call resets its stream with CANCEL, any other failure with INTERNAL_ERROR.
      if (stream && !stream.closed) {
        stream.close(failure.code === Code.Canceled ? NGHTTP2_CANCEL : NGHTTP2_INTERNAL_ERROR);
      }
      reject(failure);
    };
    call.interrupt = fail;

    const start = (session: http2.ClientHttp2Session) => {
      if (settled) return;
      try {
        stream = connection.open(session, headers);
      } catch (e) {
        // The session closed between the look and the request (a GOAWAY just in): once more on a new one.
        if (!retried && (session.closed || session.destroyed)) {
          retried = true;
          connection.connect().then(start, fail);
        } else fail(e);
        return;
      }
      let status = 0;
      let raw: http2.IncomingHttpHeaders | undefined;
      let slow = false;
      const chunks: Buffer[] = [];
      stream.on("response", (answer) => {
        raw = answer;
        status = answer[":status"] ?? 0;
        const encoding = answer["content-encoding"];
        slow =
          status !== 200 ||
          answer["content-type"] !== CONTENT_TYPE ||
          (encoding !== undefined && encoding.toLowerCase() !== "identity");
        if (slow) {
          // Anything but a plain binary answer is judged by connect's own checks, so it fails alike.
          try {
            validateResponseWithCompression("unary", [], true, status, webHeaders(answer));
          } catch (e) {
            fail(e);
          }
        }
      });
      stream.on("data", (chunk: Buffer) => {
        if (!settled) chunks.push(chunk);
      });
      stream.on("end", () => {
        if (settled || !raw) return;
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        if (slow) {
          const { unaryError } = validateResponseWithCompression("unary", [], true, status, webHeaders(raw));
          if (unaryError) {
            const [header, trailer] = trailerDemux(webHeaders(raw));
            try {
              throw errorFromJsonBytes(bytes, appendHeaders(header, trailer), unaryError);
            } catch (e) {
              fail(e);
            }
            return;
          }
        }
        let message: unknown;
        try {
          message = fromBinary(method.output, bytes);
        } catch (e) {
          fail(new ConnectError(`parse binary: ${messageOf(e)}`, Code.Internal));
          return;
        }
        settled = true;
        call.interrupt = undefined;
        resolve(new H2UnaryResponse(method, message, raw) as unknown as UnaryResponse);
      });
      stream.on("error", (error) => fail(error));
      stream.on("close", () => {
        if (settled) return;
        // Closed by the peer or the connection without an answer: as connect-node, by its reset code; a close
        // that names no error (where connect-node would wait for the deadline) is a call lost on the way.
        fail(
          connectErrorFromH2ResetCode(stream!.rstCode) ??
            new ConnectError("the connection closed before the answer", Code.Unavailable),
        );
      });
      stream.end(body);
    };

    const session = connection.ready();
    if (session) start(session);
    else connection.connect().then(start, fail);
  });
}

/**
 * One HTTP/2 session to a service, opened when first needed and reopened after a GOAWAY, a close or an error;
 * closed after `idleTimeoutMs` without a call in flight. It does not keep the process alive while idle. It is
 * also the session manager of connect-node's transport for streams, so both share the one connection.
 */
class Http2Connection {
  readonly authority: string;
  private current: http2.ClientHttp2Session | undefined;
  private connecting: Promise<http2.ClientHttp2Session> | undefined;
  /** Streams in flight on each open session (an old one draining after a GOAWAY included). */
  private readonly active = new Map<http2.ClientHttp2Session, number>();
  private idleSince = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    baseUrl: string,
    private readonly nodeOptions: http2.ClientSessionOptions | http2.SecureClientSessionOptions | undefined,
    private readonly idleTimeoutMs = IDLE_TIMEOUT_MS,
  ) {
    this.authority = new URL(baseUrl).origin;
  }

  /** The open session, without a promise when there is one (every call but the first and those after a loss). */
  ready(): http2.ClientHttp2Session | undefined {
    const session = this.current;
    if (session && !session.closed && !session.destroyed) return session;
    return undefined;
  }

  connect(): Promise<http2.ClientHttp2Session> {
    this.connecting ??= new Promise<http2.ClientHttp2Session>((resolve, reject) => {
      const session = http2.connect(this.authority, this.nodeOptions);
      const onError = (error: Error) => {
        this.connecting = undefined;
        session.destroy();
        reject(connectErrorFromNodeReason(error));
      };
      session.on("error", onError);
      session.once("connect", () => {
        session.off("error", onError);
        this.connecting = undefined;
        this.adopt(session);
        resolve(session);
      });
    });
    return this.connecting;
  }

  private adopt(session: http2.ClientHttp2Session): void {
    this.current = session;
    this.active.set(session, 0);
    // An idle connection does not keep the process alive; one with a call in flight does (see `open`).
    session.unref();
    const retire = () => {
      if (this.current === session) this.current = undefined;
    };
    // Its calls report their own failures; the next call opens a new session.
    session.on("error", retire);
    session.once("close", () => {
      retire();
      this.active.delete(session);
    });
    session.once("goaway", () => {
      retire();
      // Calls in flight finish on it; with none, nothing will close it.
      if (this.active.get(session) === 0) session.destroy();
    });
  }

  /** A request stream on `session`, counted while it is open; on a session that closed meanwhile, on a new one. */
  open(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders): http2.ClientHttp2Stream {
    const stream = session.request(headers);
    const count = this.active.get(session) ?? 0;
    this.active.set(session, count + 1);
    if (count === 0) session.ref();
    stream.once("close", () => {
      const count = this.active.get(session);
      if (count === undefined) return;
      const left = count - 1;
      this.active.set(session, left);
      if (left > 0) return;
      session.unref();
      if (session !== this.current) {
        session.close();
        return;
      }
      this.idleSince = Date.now();
      this.idleTimer ??= setTimeout(this.checkIdle, this.idleTimeoutMs).unref();
    });
    return stream;
  }

  private readonly checkIdle = () => {
    this.idleTimer = undefined;
    const session = this.current;
    if (!session || (this.active.get(session) ?? 0) > 0) return;
    const idleMs = Date.now() - this.idleSince;
    if (idleMs >= this.idleTimeoutMs) {
      this.current = undefined;
      session.close();
    } else {
      this.idleTimer = setTimeout(this.checkIdle, this.idleTimeoutMs - idleMs).unref();
    }
  };

  /** For connect-node's transport (streams): a request on the open session, or on a new one. */
  async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    _options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    const session = this.ready() ?? (await this.connect());
    return this.open(session, { ...headers, ":method": method, ":path": path });
  }

  /** connect-node tells its session manager of every read, for keep-alive pings; none are sent here. */
  notifyResponseByteRead(): void {}

  /** Closes the session once its calls in flight are done; a later call opens a new one. */
  close(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const session = this.current;
    this.current = undefined;
    if (session && !session.closed) session.close();
  }
}

function webHeaders(raw: http2.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const key in raw) {
    if (key.startsWith(":")) continue;
    const value = raw[key];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else headers.append(key, String(value));
  }
  return headers;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The errors of Node's HTTP/2 and sockets as Connect codes, as connect-node maps them. */
function connectErrorFromNodeReason(reason: unknown): ConnectError {
  const codes = new Set<string>();
  for (let e: unknown = reason, depth = 0; e instanceof Error && depth < 16; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.add(code);
    if (!("cause" in e) || e.cause === e) break;
    e = e.cause;
  }
  let code = Code.Internal;
  if (codes.has("ERR_STREAM_WRITE_AFTER_END")) code = Code.Aborted;
  else if (
    codes.has("ERR_STREAM_DESTROYED") ||
    codes.has("ERR_HTTP2_INVALID_STREAM") ||
    codes.has("ECONNRESET")
  )
    code = Code.Aborted;
  else if (
    codes.has("ETIMEDOUT") ||
    codes.has("ENOTFOUND") ||
    codes.has("EAI_AGAIN") ||
    codes.has("ECONNREFUSED")
  )
    code = Code.Unavailable;
  const error = ConnectError.from(reason, code);
  if (error !== reason) error.cause = reason;
  return error;
}

const H2_CODE_NAMES: Record<number, [string, Code]> = {
  1: ["PROTOCOL_ERROR", Code.Internal],
  2: ["INTERNAL_ERROR", Code.Internal],
  3: ["FLOW_CONTROL_ERROR", Code.Internal],
  4: ["SETTINGS_TIMEOUT", Code.Internal],
  6: ["FRAME_SIZE_ERROR", Code.Internal],
  7: ["REFUSED_STREAM", Code.Unavailable],
  8: ["CANCEL", Code.Canceled],
  9: ["COMPRESSION_ERROR", Code.Internal],
  10: ["CONNECT_ERROR", Code.Internal],
  11: ["ENHANCE_YOUR_CALM", Code.ResourceExhausted],
  12: ["INADEQUATE_SECURITY", Code.PermissionDenied],
  13: ["HTTP_1_1_REQUIRED", Code.PermissionDenied],
};

/** A stream reset by its HTTP/2 code, as connect-node maps it (NO_ERROR and STREAM_CLOSED name no error). */
function connectErrorFromH2ResetCode(rstCode: number | undefined): ConnectError | undefined {
  if (rstCode === undefined || rstCode === NGHTTP2_NO_ERROR) return undefined;
  const known = H2_CODE_NAMES[rstCode];
  if (!known) return undefined;
  return new ConnectError(
    `http/2 stream closed with error code ${known[0]} (0x${rstCode.toString(16)})`,
    known[1],
  );
}
