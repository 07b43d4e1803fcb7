import { Agent, type ClientRequest, request } from "node:http";

/**
 * Opens `count` streamed messages and holds them: each counts as open once its first text event arrived (the
 * whole path, provider included, is then established). Reports over IPC when all are open, closes them all
 * when told to, then exits.
 */
interface Input {
  url: string;
  headers: Record<string, string>;
  /** JSON; `[<id>]` in it is replaced by the stream's own number, so each stream can be its own conversation. */
  body: string;
  marker: string;
  count: number;
  /** Streams being opened at once. */
  concurrency: number;
}

const input = JSON.parse(process.argv[2]!) as Input;
const url = new URL(input.url);
const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
const open: ClientRequest[] = [];
let failed = 0;

function openOne(index: number): Promise<void> {
  const body = input.body.replaceAll("[<id>]", String(index));
  return new Promise((resolve) => {
    let seen = "";
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      if (!ok) failed += 1;
      resolve();
    };
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent,
        headers: {
          ...input.headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          finish(false);
          return;
        }
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (done) return;
          seen += chunk;
          if (seen.includes(input.marker)) finish(true);
        });
        res.on("end", () => finish(false));
      },
    );
    req.on("error", () => finish(false));
    req.end(body);
    open.push(req);
  });
}

const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: input.concurrency }, async () => {
    while (next < input.count) {
      next += 1;
      await openOne(next);
    }
  }),
);
process.send!({
  type: "open",
  open: input.count - failed,
  failed,
  seconds: (performance.now() - started) / 1000,
});
process.on("message", (message: { type: string }) => {
  if (message.type !== "close") return;
  for (const req of open) req.destroy();
  agent.destroy();
  process.send!({ type: "closed" }, () => process.exit(0));
});
