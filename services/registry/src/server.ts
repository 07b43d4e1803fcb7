import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { Logger } from "@agentry/logging";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { requestScopeInterceptor } from "./rpc/request-scope.js";

export interface RegistryServer {
  server: http2.Http2Server;
  /** Starts accepting connections; port 0 picks a free port, reported in the address. */
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * Stops accepting connections and calls, lets the calls in flight finish (cutting connections still open after
   * the grace period) and resolves once every connection is closed. `/readyz` answers 503 from the start.
   */
  shutdown(): Promise<void>;
}

export interface RegistryServerOptions {
  routes: (router: ConnectRouter) => void;
  /** Whether the store answers; `/readyz` reports it. */
  ready: () => Promise<boolean>;
  logger: Logger;
  shutdownGraceMs?: number;
  /** Run after the request scope is set, e.g. the metrics and tracing of `@agentry/observability`. */
  interceptors?: Interceptor[];
}

/** The registry's HTTP/2 server without TLS (h2c): the Connect, gRPC and gRPC-web RPCs plus the health probes. */
export function buildServer(options: RegistryServerOptions): RegistryServer {
  const { logger, ready } = options;
  const graceMs = options.shutdownGraceMs ?? 10_000;
  let shuttingDown = false;

  const handler = connectNodeAdapter({
    routes: options.routes,
    interceptors: [requestScopeInterceptor, ...(options.interceptors ?? [])],
    fallback(request, response) {
      const path = (request.url ?? "").split("?")[0];
      const answer = (status: number, body: string) => {
        response.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
        response.end(`${body}\n`);
      };
      if (path === "/healthz" && request.method === "GET") return answer(200, "ok");
      if (path === "/readyz" && request.method === "GET") {
        if (shuttingDown) return answer(503, "shutting down");
        ready().then(
          (isReady) => answer(isReady ? 200 : 503, isReady ? "ready" : "store unavailable"),
          () => answer(503, "store unavailable"),
        );
        return;
      }
      answer(404, "not found");
    },
  });

  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });

  let stopped: Promise<void> | undefined;

  return {
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    shutdown() {
      stopped ??= new Promise<void>((resolve) => {
        shuttingDown = true;
        if (!server.listening) return resolve();
        server.close(() => resolve());
        // GOAWAY: clients open no new streams on these connections; the streams in flight run to completion.
        for (const session of sessions) session.close();
        const cut = setTimeout(() => {
          if (sessions.size > 0)
            logger.warn({ connections: sessions.size }, "cutting connections after grace");
          for (const session of sessions) session.destroy();
        }, graceMs);
        cut.unref();
      });
      return stopped;
    },
  };
}
