import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One request a receiver got, as it came. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** performance.now() at arrival. */
  at: number;
}

/** What a path answers: a status, or a function of the request (and how many that path had before). */
export type Answer = number | ((request: Received, before: number) => number | Promise<number>);

/**
 * A real HTTP server on loopback standing in for users' webhook endpoints: each path is one endpoint. It keeps
 * every request and answers as told (200 by default). `verify` checks a request with the `standardwebhooks`
 * package, an implementation of the scheme that is not the service's own.
 */
export class Receiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, Answer>();
  /** Requests being answered now, per path: one worker at a time per endpoint means never more than one. */
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  /** When it returns true for a new connection, the connection is dropped before a byte of it is read. */
  dropConnection: (() => boolean) | undefined;
  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = createServer((request, response) => {
      receiver?.handle(request, response).catch(() => response.destroy());
    });
    server.on("connection", (socket) => {
      if (receiver?.dropConnection?.()) socket.destroy();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    receiver = new Receiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  /** A URL of its own for one endpoint. */
  url(path: string): string {
    return `${this.origin}/${path}`;
  }

  answer(path: string, answer: Answer): void {
    this.answers.set(path, answer);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = (request.url ?? "/").slice(1);
    const received: Received = {
      path,
      headers: Object.fromEntries(
        Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
      ),
      body: Buffer.concat(chunks).toString("utf8"),
      at: performance.now(),
    };
    const before = this.at(path).length;
    this.received.push(received);
    const now = (this.inFlight.get(path) ?? 0) + 1;
    this.inFlight.set(path, now);
    this.maxInFlight.set(path, Math.max(now, this.maxInFlight.get(path) ?? 0));
    try {
      const answer = this.answers.get(path) ?? 200;
      const status = typeof answer === "number" ? answer : await answer(received, before);
      response.writeHead(status, { "content-type": "text/plain" });
      response.end(status < 300 ? "ok" : "not ok");
    } finally {
      this.inFlight.set(path, (this.inFlight.get(path) ?? 1) - 1);
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The event a request carries, once `standardwebhooks` has verified it with `secret` (it throws otherwise). */
export function verify(
  received: Received,
  secret: string,
): { id: string; type: string; createdAt: string; data: unknown } {
  return new Webhook(secret).verify(received.body, received.headers) as {
    id: string;
    type: string;
    createdAt: string;
    data: unknown;
  };
}
