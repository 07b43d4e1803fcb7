import autocannon from "autocannon";

/** Load from its own process: `connections` keep-alive connections for `seconds`, after a warm-up. */
interface Input {
  url: string;
  /** GET by default; a POST sends `body` as JSON, with `[<id>]` in it replaced by a new id per request. */
  method?: "GET" | "POST";
  body?: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

const input = JSON.parse(process.argv[2]!) as Input;
const run = (seconds: number) =>
  autocannon({
    url: input.url,
    ...(input.method === "POST"
      ? {
          method: "POST" as const,
          body: input.body ?? "",
          idReplacement: true,
          headers: { ...input.headers, "content-type": "application/json" },
        }
      : { headers: input.headers }),
    connections: input.connections,
    duration: seconds,
    pipelining: 1,
  });

const warmup = await run(input.warmupSeconds);
const result = await run(input.seconds);
process.stdout.write(
  `${JSON.stringify({
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    // Answered in the warm-up and the run together: what the server's CPU time over both is divided by.
    answered: warmup.requests.total + result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  })}\n`,
);
