import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type Koa from "koa";

export interface RunningServer {
  server: Server;
  /** e.g. http://127.0.0.1:43121 */
  url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish, and closes every connection as soon as it has
   * no request left: idle keep-alive connections at once, busy ones right after their response (which says
   * `Connection: close` when its headers have not left yet). After `timeoutMs` it closes whatever is still open.
   */
  close(timeoutMs: number): Promise<void>;
}

export function listen<S>(app: Koa<S>, port: number, host: string): Promise<RunningServer> {
  const handle = app.callback();
  // Responses in flight, so a drain can close their connections once they end.
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const server = createServer((req, res) => {
    if (draining) res.setHeader("Connection", "close");
    inFlight.add(res);
    res.once("close", () => inFlight.delete(res));
    return handle(req, res);
  });
  // Slow or idle clients must not hold sockets forever; long streams set their own timeouts.
  server.headersTimeout = 20_000;
  server.requestTimeout = 0;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({
        server,
        url: `http://${shownHost === "0.0.0.0" ? "127.0.0.1" : shownHost}:${address.port}`,
        close: (timeoutMs) =>
          new Promise<void>((done) => {
            draining = true;
            const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
            force.unref();
            server.close(() => {
              clearTimeout(force);
              done();
            });
            server.closeIdleConnections();
            for (const res of inFlight) closeAfter(res);
          }),
      });
    });
  });
}

/** Ends the response's connection once the response is complete, instead of keeping it alive for another. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) {
    res.setHeader("Connection", "close");
    return;
  }
  // Node detaches the socket from the response as it finishes, before later listeners run: keep it now.
  const socket = res.socket;
  res.once("finish", () => socket?.end());
}
