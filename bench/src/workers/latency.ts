import { Agent, request } from "node:http";

/**
 * Round trips one at a time over one keep-alive connection: the full response (`json`), or the time until the
 * stream's first text (`first-text`: the first SSE event whose data carries text), reading the rest before the
 * next request. Reports every sample in milliseconds.
 */
interface Input {
  url: string;
  headers: Record<string, string>;
  body: string;
  mode: "json" | "first-text";
  /** What marks the first text event in the stream. */
  marker?: string;
  warmup: number;
  count: number;
}

const input = JSON.parse(process.argv[2]!) as Input;
const url = new URL(input.url);
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

function once(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstAt: number | undefined;
    let seen = "";
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent: keepAlive,
        headers: {
          ...input.headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(input.body),
        },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (firstAt === undefined && input.mode === "first-text") {
            seen += chunk;
            if (seen.includes(input.marker!)) firstAt = performance.now();
          }
        });
        res.on("end", () => {
          const ended = performance.now();
          if (input.mode === "first-text" && firstAt === undefined) reject(new Error("no text event"));
          else resolve((input.mode === "json" ? ended : firstAt!) - started);
        });
      },
    );
    req.on("error", reject);
    req.end(input.body);
  });
}

for (let i = 0; i < input.warmup; i++) await once();
const samples: number[] = [];
for (let i = 0; i < input.count; i++) samples.push(await once());
keepAlive.destroy();
process.stdout.write(`${JSON.stringify({ samples })}\n`);
