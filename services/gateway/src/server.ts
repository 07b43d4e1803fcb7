import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type Koa from "koa";

export interface RunningServer {
  server: Server;
  /** e.g. http://127.0.0.1:43121 */
  url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish (idle keep-alive connections close at once),
   * and after `timeoutMs` closes whatever is still open.
   */
  close(timeoutMs: number): Promise<void>;
}

export function listen<S>(app: Koa<S>, port: number, host: string): Promise<RunningServer> {
  const server = createServer(app.callback());
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
            const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
            force.unref();
            server.close(() => {
              clearTimeout(force);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}
