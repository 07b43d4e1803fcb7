import http2 from "node:http2";
import { type Logger, OutageLog } from "@agentry/logging";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { availabilityInterceptor } from "./availability.js";
import { createH2Transport } from "./h2-transport.js";

export interface RemoteService {
  /**
   * Calls the service over HTTP/2 without TLS (h2c), on one connection kept open and reopened as needed: unary
   * calls through `createH2Transport`, streams through connect-node's transport on the same connection.
   */
  transport: Transport;
  /** Whether the service answers its `/readyz` now: what the caller's own readiness reports. */
  ready(): Promise<boolean>;
}

/**
 * A service in another process, as its callers reach it: the Connect protocol over h2c, its outages logged as
 * they start and end (under `name`), and a probe of its readiness.
 */
export function remoteService(options: {
  url: string;
  /** How operators name it in the logs, e.g. `registry`. */
  name: string;
  logger: Logger;
  /** Run on every call after the outage log, e.g. metrics and tracing. */
  interceptors?: Interceptor[];
}): RemoteService {
  return {
    // Answers come uncompressed (neither transport asks for gzip): the services talk over a local network, where
    // gzipping each answer above 1 KiB (an agent, a page of agents) cost the registry 3 % of its CPU and the
    // gateway 2 % to undo, for no gain.
    transport: createH2Transport({
      baseUrl: options.url,
      interceptors: [
        availabilityInterceptor(new OutageLog(options.logger, options.name)),
        ...(options.interceptors ?? []),
      ],
    }),
    ready: () => probeReadiness(options.url),
  };
}

/** Whether a service answers its `/readyz` with 200 over HTTP/2 without TLS, the protocol the services serve. */
export function probeReadiness(baseUrl: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const session = http2.connect(baseUrl);
    const done = (ready: boolean) => {
      session.close();
      resolve(ready);
    };
    session.on("error", () => done(false));
    session.setTimeout(timeoutMs, () => {
      session.destroy();
      resolve(false);
    });
    const request = session.request({ ":path": "/readyz" });
    request.on("response", (headers) => {
      request.resume();
      done(headers[":status"] === 200);
    });
    request.on("error", () => done(false));
    request.end();
  });
}
