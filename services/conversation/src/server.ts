import http2 from "node:http2";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

export interface ConversationServer {
  server: http2.Http2Server;
  /** From now on /readyz answers 503, so load balancers stop sending new calls. */
  drain(): void;
  /**
   * Stops accepting connections and asks every client to go away (GOAWAY) once its calls in flight are done;
   * resolves when the last connection has closed. Clients such as the gateway keep their HTTP/2 connection
   * open between calls, so without this a plain `server.close()` would wait for them forever.
   */
  close(): Promise<void>;
  /** Ends every connection now, calls in flight included. */
  destroy(): void;
}

/**
 * The service over HTTP/2 without TLS (h2c), which the gateway's Connect client speaks, plus `/healthz`
 * (the process is up) and `/readyz` (it takes calls). Not listening yet: the caller chooses the port.
 */
export function createConversationServer(
  routes: (router: ConnectRouter) => void,
  options: { interceptors?: Interceptor[] } = {},
): ConversationServer {
  let draining = false;
  const handler = connectNodeAdapter({
    routes,
    interceptors: options.interceptors ?? [],
    // The adapter serves an HTTP/2 server here, so the response is always an Http2ServerResponse.
    fallback(req, res) {
      const reply = res as http2.Http2ServerResponse;
      const path = (req.url ?? "").split("?")[0];
      if (req.method === "GET" && path === "/healthz") return plain(reply, 200, "ok");
      if (req.method === "GET" && path === "/readyz") {
        return plain(reply, draining ? 503 : 200, draining ? "draining" : "ok");
      }
      plain(reply, 404, "not found");
    },
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return {
    server,
    drain: () => {
      draining = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        draining = true;
        server.close(() => resolve());
        for (const session of sessions) session.close();
      }),
    destroy: () => {
      for (const session of sessions) session.destroy();
    },
  };
}

function plain(res: http2.Http2ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(body);
}
