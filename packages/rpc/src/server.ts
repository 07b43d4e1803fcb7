import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { auditStampIn, withAuditStamp } from "@agentry/core";
import type { Logger } from "@agentry/logging";
import { requestScopeInterceptor } from "@agentry/observability";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { errorInterceptor } from "./errors.js";

/** A dependency's state as `/readyz` reports it. */
export type DependencyState = "up" | "down";

export interface RpcServerOptions {
  routes: (router: ConnectRouter) => void;
  logger: Logger;
  /** Run after the request scope is set, e.g. the metrics and tracing of `@agentry/observability`. */
  interceptors?: Interceptor[];
  /**
   * What `/readyz` reports besides the service itself, e.g. `{ database: () => store.ping() }`. They are
   * reported, not required: every instance shares them, and callers are better served by the service's own
   * 503 (with its error code and `Retry-After`) than by having every instance taken out of rotation at once.
   */
  dependencies?: Record<string, () => Promise<boolean>>;
  /** How long calls in flight may run after `shutdown` begins before their connections are cut (10 s). */
  shutdownGraceMs?: number;
}

export interface RpcServer {
  server: http2.Http2Server;
  /** Starts accepting connections; port 0 picks a free port, reported in the address. */
  listen(port: number, host: string): Promise<AddressInfo>;
  /** From now on `/readyz` answers 503, so load balancers stop sending new calls; nothing else changes. */
  drain(): void;
  /**
   * Drains, stops accepting connections, asks every client to go away once its calls in flight are done
   * (HTTP/2 GOAWAY: callers such as the gateway reconnect elsewhere), cuts what is still open after the grace
   * period, and resolves once every connection has closed.
   */
  shutdown(): Promise<void>;
}

/**
 * A service's HTTP/2 server without TLS (h2c): its Connect, gRPC and gRPC-web RPCs, each run in the request
 * scope of the public request it serves, plus `/healthz` (the process is up) and `/readyz` (it takes calls: 200
 * with the state of each dependency, 503 once it is shutting down).
 */
export function createRpcServer(options: RpcServerOptions): RpcServer {
  const { logger } = options;
  const graceMs = options.shutdownGraceMs ?? 10_000;
  const dependencies = Object.entries(options.dependencies ?? {});
  let draining = false;

  async function readiness(): Promise<[number, object]> {
    if (draining) return [503, { status: "draining" }];
    const states = await Promise.all(
      dependencies.map(async ([name, check]): Promise<[string, DependencyState]> => {
        const up = await check().catch(() => false);
        return [name, up ? "up" : "down"];
      }),
    );
    return [200, { status: "ready", dependencies: Object.fromEntries(states) }];
  }

  const handler = connectNodeAdapter({
    routes: options.routes,
    interceptors: servedInterceptors(logger, options.interceptors),
    fallback(request, response) {
      const path = (request.url ?? "").split("?")[0];
      const answer = (status: number, body: object) => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify(body));
      };
      if (request.method === "GET" && path === "/healthz") return answer(200, { status: "ok" });
      if (request.method === "GET" && path === "/readyz") {
        readiness().then(([status, body]) => answer(status, body));
        return;
      }
      answer(404, { status: "not found" });
    },
  });

  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    // A client that vanishes mid-call surfaces here; the session closes itself, so it is only reported.
    session.on("error", (error) => logger.debug({ err: error }, "connection error"));
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
    drain() {
      draining = true;
    },
    shutdown() {
      stopped ??= new Promise<void>((resolve) => {
        draining = true;
        if (!server.listening) return resolve();
        server.close(() => resolve());
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

/**
 * What every served call passes through, over h2c or in process: the request scope of the public request, then
 * `extra` (metrics, tracing), then the error translation, nearest the handler so the others see the final code.
 */
export function servedInterceptors(logger: Logger, extra: Interceptor[] = []): Interceptor[] {
  return [requestScopeInterceptor, auditScopeInterceptor, ...extra, errorInterceptor(logger)];
}

/**
 * Runs each served call as the change of the actor its headers name (docs/api/audit.md), so the stores record who
 * made it. A call that names none (one service calling another on its own) keeps the stamp it was made under. A
 * method declared without side effects (`idempotency_level = NO_SIDE_EFFECTS`: the reads) changes nothing to
 * record, so it runs without a scope of its own, which every read would otherwise pay for.
 */
export const auditScopeInterceptor: Interceptor = (next) => async (request) => {
  if (request.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) return next(request);
  const stamp = auditStampIn(request.header);
  return stamp ? withAuditStamp(stamp, () => next(request)) : next(request);
};
