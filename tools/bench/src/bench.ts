import { join } from "node:path";
import {
  BENCH_DIR,
  cpuSecondsOf,
  freePort,
  ROOT,
  type Running,
  runWorker,
  type Seed,
  start,
  waitUntilOk,
} from "./harness.js";
import type { Target } from "./workers/latency.js";

/** What a run is told on its command line (see main.ts). */
export interface Settings {
  seconds: number;
  rounds: number;
  connections: number;
  streams: number;
  messages: number;
  coldStarts: number;
  /** Messages in the conversation whose newest page is listed. */
  historyMessages: number;
  /** Sends recorded in the usage rollups the usage query reads. */
  usageSends: number;
  /** Usage queries timed, one at a time. */
  usageQueries: number;
  /** Exchanges stored with and without usage, each. */
  recordings: number;
  /** Events published to five endpoints for the delivery rate. */
  webhookEvents: number;
}

export const log = (line: string) => process.stdout.write(`${line}\n`);

export const median = (values: number[]) => percentile(values, 50);

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export const auth = (tenant: Seed) => ({ authorization: `Bearer ${tenant.apiKey}` });

/** The environment every service of the benchmark runs with: production logging, no time limits in the way. */
export const serviceEnv = (dataDir: string) => ({
  DATA_DIR: dataDir,
  HOST: "127.0.0.1",
  LOG_FORMAT: "json",
  LOG_LEVEL: "info",
  PROVIDER_TIMEOUT_MS: "600000",
  MESSAGE_TIMEOUT_MS: "600000",
  PROVIDER_FIRST_TOKEN_TIMEOUT_MS: "600000",
});

export interface LoadResult {
  /** CPU time the server spent per answered request, in microseconds: far less sensitive to other load. */
  cpuMicros: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  answered: number;
  non2xx: number;
  errors: number;
}

/** A run's processes and directory, and the ways of measuring them that every scenario shares. */
export class Bench {
  private readonly running: Running[] = [];

  constructor(
    /** The run's directory: logs, data, files the baselines read. */
    readonly dir: string,
    readonly settings: Settings,
  ) {}

  /** Starts a process whose output goes to `<dir>/<name>.log`; every one is stopped when the run ends. */
  launch(name: string, command: string, args: string[], env: Record<string, string>): Running {
    // BENCH_PROFILE=<dir>: every service writes a V8 CPU profile there when it stops, named after it.
    const profile = process.env.BENCH_PROFILE;
    const profiled =
      profile && command === "node" && args[0]?.endsWith("main.mjs")
        ? ["--cpu-prof", `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${name}.cpuprofile`, ...args]
        : args;
    const running = start(command, profiled, env, join(this.dir, `${name}.log`));
    this.running.push(running);
    return running;
  }

  /** Runs a small node:http script of src/servers (the baselines) and waits for its "listening <port>" line. */
  async launchScript(name: string, script: string, args: string[]) {
    const process = this.launch(name, "node", [join(BENCH_DIR, "src", "servers", script), ...args], {});
    const port = await new Promise<number>((resolve, reject) => {
      process.child.stdout!.on("data", (chunk) => {
        const match = /listening (\d+)/.exec(String(chunk));
        if (match) resolve(Number(match[1]));
      });
      process.child.once("exit", () => reject(new Error(`${name} exited`)));
    });
    return { process, url: `http://127.0.0.1:${port}` };
  }

  /**
   * The all-in-one server from its bundle, or with REGISTRY_URL, CONVERSATION_URL and WEBHOOKS_URL the gateway
   * alone; ready once the tenant's agent answers.
   */
  async startGateway(name: string, env: Record<string, string>, tenant: Seed) {
    const port = await freePort();
    const deployable = env.REGISTRY_URL ? ["services", "gateway"] : ["apps", "server"];
    const gateway = this.launch(name, "node", [join(ROOT, ...deployable, "dist", "main.mjs")], {
      ...env,
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
    });
    const url = `http://127.0.0.1:${port}`;
    await waitUntilOk(`${url}/v1/agents/${tenant.agentId}`, gateway, { headers: auth(tenant) });
    return { process: gateway, url };
  }

  /**
   * Autocannon against `url` from its own process; the CPU time of `servers` is charged to it. With `post`, each
   * request is a POST of that JSON body (`[<id>]` in it replaced by a new id per request), from `connections`
   * connections when given.
   */
  async load(
    url: string,
    headers: Record<string, string>,
    servers: Running[],
    post?: { body: string; connections?: number },
  ): Promise<LoadResult> {
    const cpu = () => Promise.all(servers.map((s) => cpuSecondsOf(s.pid)));
    const before = await cpu();
    const result = await runWorker<Omit<LoadResult, "cpuMicros">>("load", {
      url,
      headers,
      ...(post ? { method: "POST", body: post.body } : {}),
      connections: post?.connections ?? this.settings.connections,
      seconds: this.settings.seconds,
      warmupSeconds: 2,
    });
    const after = await cpu();
    const each = after.map((seconds, i) => ((seconds - before[i]!) * 1e6) / result.answered);
    const cpuMicros = each.reduce((a, b) => a + b, 0);
    // Several processes (the split services): what each of them spent, in the order given.
    if (each.length > 1)
      log(`  CPU per request, process by process: ${each.map((m) => m.toFixed(0)).join(" / ")} µs`);
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
    }
    return { ...result, cpuMicros };
  }

  /** Round trips to each target in turn (see workers/latency.ts): the samples of each, in milliseconds. */
  async latency(targets: Target[], warmup: number, count: number): Promise<number[][]> {
    const { samples } = await runWorker<{ samples: number[][] }>("latency", { targets, warmup, count });
    return samples;
  }

  /** Stops the processes started so far (all of them by default). */
  async stop(processes: Running[] = this.running): Promise<void> {
    for (const process of processes) await process.stop();
  }
}
