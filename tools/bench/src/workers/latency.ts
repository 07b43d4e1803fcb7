import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";

/**
 * Round trips one at a time, each target over its own keep-alive connection: the full response (`json`), or the
 * time until the stream's first text (`first-text`: the first SSE event whose data carries text), reading the
 * rest before the next request. With several targets the requests alternate between them, in an order that
 * rotates, so that every series meets the same conditions of a noisy machine. Reports every sample in milliseconds, per target.
 */
export interface Target {
  url: string;
  /** POST by default (with `body`); GET sends no body. */
  method?: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  mode: "json" | "first-text";
  /** What marks the first text event in the stream. */
  marker?: string;
  /** Sends a new `Idempotency-Key` with each request. */
  idempotencyKeys?: boolean;
}

interface Input {
  targets: Target[];
  /** Round trips to each target before the measured ones. */
  warmup: number;
  /** Measured round trips to each target. */
  count: number;
}

const input = JSON.parse(process.argv[2]!) as Input;

const run = randomBytes(6).toString("hex");
let sent = 0;

function once(target: Target, url: URL, keepAlive: Agent): Promise<number> {
  const method = target.method ?? "POST";
  const body = method === "POST" ? (target.body ?? "") : undefined;
  const headers: Record<string, string | number> = { ...target.headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(body);
  }
  sent += 1;
  if (target.idempotencyKeys) headers["idempotency-key"] = `bench-${run}-${sent}`;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstAt: number | undefined;
    let seen = "";
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent: keepAlive,
        headers,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) reject(new Error(`${target.url}: status ${status}`));
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (firstAt === undefined && target.mode === "first-text") {
            seen += chunk;
            if (seen.includes(target.marker!)) firstAt = performance.now();
          }
        });
        res.on("end", () => {
          const ended = performance.now();
          if (target.mode === "first-text" && firstAt === undefined) reject(new Error("no text event"));
          else resolve((target.mode === "json" ? ended : firstAt!) - started);
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const clients = input.targets.map((target) => ({
  target,
  url: new URL(target.url),
  keepAlive: new Agent({ keepAlive: true, maxSockets: 1 }),
}));
const samples: number[][] = clients.map(() => []);
// Each round starts with the next target, so that no series always follows the same other one.
for (let i = 0; i < input.warmup + input.count; i++) {
  for (let k = 0; k < clients.length; k++) {
    const index = (i + k) % clients.length;
    const client = clients[index]!;
    const sample = await once(client.target, client.url, client.keepAlive);
    if (i >= input.warmup) samples[index]!.push(sample);
  }
}
for (const client of clients) client.keepAlive.destroy();
process.stdout.write(`${JSON.stringify({ samples })}\n`);
