import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics.js";

export interface MetricsServer {
  server: Server;
  /** e.g. http://127.0.0.1:9464; scrape `${url}/metrics`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` over plain HTTP/1.1 on its own port. Prometheus scrapes HTTP/1.1 and cannot speak h2c
 * to the services' RPC ports, and the gateway's public port stays the public API alone: operators expose this
 * port to their scraper only, so no authentication is needed on it.
 */
export function startMetricsServer(metrics: Metrics, port: number, host: string): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
      return;
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { "content-type": metrics.contentType });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => {
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`${String(error)}\n`);
      },
    );
  });
  // A scraper keeps its connection open between scrapes; shutdown must not wait for it.
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address() as AddressInfo;
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({
        server,
        url: `http://${shown === "0.0.0.0" ? "127.0.0.1" : shown}:${address.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
