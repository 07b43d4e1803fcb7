import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import { Agentry, type ClientOptions } from "../src/index.js";

/** A request as the local server received it. */
export interface ReceivedRequest {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  /** The body parsed as JSON; `undefined` when there was none. */
  body: unknown;
  /** The socket's response, to tell when the client went away. */
  res: ServerResponse;
}

export type ServerHandler = (request: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

export interface LocalServer {
  /** The API's base URL on this server, ending in `/v1`. */
  baseURL: string;
  requests: ReceivedRequest[];
  /** A client of this server, with retries that do not wait unless a test says otherwise. */
  client(options?: ClientOptions): Agentry;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

/**
 * Starts an HTTP server on 127.0.0.1 port 0 that answers each request with the next handler (the last one
 * repeats), so the SDK talks to it through the real `fetch`: real sockets, chunked bodies and broken connections.
 * Servers are closed after each test.
 */
export async function localServer(...handlers: ServerHandler[]): Promise<LocalServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      const request: ReceivedRequest = {
        method: req.method ?? "GET",
        url: new URL(req.url ?? "/", "http://127.0.0.1"),
        headers: req.headers,
        body: text === "" ? undefined : (JSON.parse(text) as unknown),
        res,
      };
      requests.push(request);
      const handler = handlers[Math.min(requests.length - 1, handlers.length - 1)]!;
      Promise.resolve(handler(request, res)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    baseURL,
    requests,
    client: (options = {}) =>
      new Agentry({ apiKey: "agentry_sk_test", baseURL, maxRetryDelay: 0, ...options }),
  };
}

/** Answers JSON with the API's headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
    "x-request-id": "req_local",
    ...headers,
  });
  res.end(payload);
}

/** A handler answering `{success: true, data}` (and any other top-level fields) with this status. */
export function ok(data: unknown, status = 200, extra: Record<string, unknown> = {}): ServerHandler {
  return (_request, res) => sendJson(res, status, { success: true, data, ...extra });
}

/** A handler answering the API's error envelope. */
export function fail(
  status: number,
  code: string,
  extra: { details?: unknown; headers?: Record<string, string> } = {},
): ServerHandler {
  return (_request, res) =>
    sendJson(
      res,
      status,
      {
        success: false,
        error: {
          code,
          message: `${code} happened.`,
          ...(extra.details ? { details: extra.details } : {}),
          requestId: "req_local",
        },
      },
      extra.headers,
    );
}

/** A handler that closes the connection without answering. */
export const hangUp: ServerHandler = (request) => {
  request.res.socket?.destroy();
};

/**
 * A handler serving `items` (newest last, ids increasing) as the API pages a cursor list: `limit` (default
 * 20), `before`/`after` an item's id, `order` (default `desc`), an unknown cursor 400.
 */
export function cursorList(items: readonly { id: string }[]): ServerHandler {
  return ({ url }, res) => {
    const query = url.searchParams;
    const limit = Number(query.get("limit") ?? 20);
    const before = query.get("before");
    const after = query.get("after");
    const order = query.get("order") ?? "desc";
    const cursor = before ?? after;
    const at = cursor === null ? -1 : items.findIndex((item) => item.id === cursor);
    if (cursor !== null && at === -1) {
      const field = before !== null ? "before" : "after";
      sendJson(res, 400, {
        success: false,
        error: {
          code: "INVALID_REQUEST",
          message: "Unknown cursor.",
          details: [{ field, issue: "unknown" }],
        },
      });
      return;
    }
    // Read away from the cursor (or from the end the order starts at), then shown in the order asked.
    const readNewestFirst = before !== null || (after === null && order === "desc");
    const candidates =
      before !== null ? items.slice(0, at) : after !== null ? items.slice(at + 1) : items.slice();
    const read = readNewestFirst ? candidates.reverse() : candidates;
    const page = read.slice(0, limit);
    if (readNewestFirst !== (order === "desc")) page.reverse();
    sendJson(res, 200, { success: true, data: page, pagination: { limit, hasMore: read.length > limit } });
  };
}
