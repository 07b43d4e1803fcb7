import { type ChildProcess, fork, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateApiKey } from "@agentry/core";
import { openRegistryStore } from "@agentry/registry";

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
export const ROOT = join(BENCH_DIR, "..", "..");

/** A port free at the time of asking (another process could take it before it is used; on loopback, rare). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process, in bytes, from /proc. */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** CPU time a process has used so far (user and system), in seconds, from /proc. */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, in clock ticks of 1/100 s on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Running {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts a process with its output appended to `logFile`; it is killed (SIGKILL) by `stop`, or, when the run
 * profiles (BENCH_PROFILE), stopped by SIGTERM so that it writes its profile as it exits (SIGKILL after 15 s).
 */
export function start(
  command: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
): Running {
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return {
    child,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      if (process.env.BENCH_PROFILE) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
        await exited;
        clearTimeout(timer);
        return;
      }
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Polls `url` until it answers 200 (with `headers`), failing if the process exits or `timeoutMs` passes. */
export async function waitUntilOk(
  url: string,
  process: Running,
  options: { headers?: Record<string, string>; timeoutMs?: number; intervalMs?: number } = {},
): Promise<number> {
  const started = performance.now();
  const deadline = started + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (process.child.exitCode !== null || process.child.signalCode !== null) {
      throw new Error(`${url}: the process exited (${process.child.exitCode ?? process.child.signalCode})`);
    }
    try {
      const response = await fetch(url, { headers: options.headers ?? {} });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - started;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) throw new Error(`${url} did not answer 200 in time`);
    await sleep(options.intervalMs ?? 20);
  }
}

/** A worker script run with tsx in its own process: its last stdout line is its JSON result. */
export async function runWorker<T>(name: string, input: unknown): Promise<T> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(BENCH_DIR, "src", "workers", `${name}.ts`), JSON.stringify(input)],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += String(chunk);
  });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`worker ${name} exited with ${code}`);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "null") as T;
}

/** A worker that talks over IPC: it sends messages, and is told what to do next. */
export function forkWorker(name: string, input: unknown): ChildProcess {
  return fork(join(BENCH_DIR, "src", "workers", `${name}.ts`), [JSON.stringify(input)], {
    cwd: ROOT,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

export interface Seed {
  apiKey: string;
  accountId: string;
  /** The id of the key `apiKey` is the secret of. */
  apiKeyId: string;
  /** An agent to read (GET /v1/agents/{id}) and to message. */
  agentId: string;
  /** An agent whose replies the fake provider holds open after the first text. */
  holdAgentId: string;
  /** Every agent of the tenant, `agentId` and `holdAgentId` among them. */
  agentIds: string[];
}

/**
 * Writes the benchmark's tenant straight into the registry's store (SQLite in `dataDir`, or Postgres at
 * `databaseUrl`): an enterprise account whose limits are too high to refuse anything the benchmark sends (limits
 * are enforced), a key, and twenty agents for the list.
 */
export async function seed(dataDir: string, databaseUrl?: string): Promise<Seed> {
  const store = await openRegistryStore({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
  try {
    const high = 100_000_000;
    const account = await store.createAccount({
      name: "bench",
      tier: "enterprise",
      limitOverrides: {
        requestsPerMinute: high,
        createPerMinute: high,
        listPerMinute: high,
        getPerMinute: high,
        updatePerMinute: high,
        deletePerMinute: high,
        messagesPerMinute: high,
        concurrentMessages: 100_000,
        maxAgents: 1_000_000,
      },
    });
    const key = generateApiKey();
    const created = await store.createApiKey({
      accountId: account.id,
      name: "bench",
      scopes: [
        "agents:read",
        "agents:write",
        "agents:delete",
        "messages:send",
        "history:read",
        "usage:read",
        "webhooks:manage",
      ],
      expiresAt: null,
      sha256: key.sha256,
      prefix: key.prefix,
    });
    const agent = (name: string, model: string) =>
      store.createAgent(account.id, {
        name,
        bio: ["A benchmark agent."],
        personality: { tone: "brief" },
        knowledge: [],
        goals: [],
        clients: [],
        settings: { maxTokens: 64 },
        modelProvider: "openai",
        model,
        plugins: [],
      });
    const holdAgent = await agent("Holder", "hold");
    const agentIds = [holdAgent.id];
    for (let i = 0; i < 19; i++) agentIds.push((await agent(`Reader ${i}`, "bench-model")).id);
    return {
      apiKey: key.secret,
      accountId: account.id,
      apiKeyId: created.id,
      agentId: agentIds.at(-1)!,
      holdAgentId: holdAgent.id,
      agentIds,
    };
  } finally {
    await store.close();
  }
}

/** Every process whose command line `matches`, from /proc. */
export async function findProcesses(matches: (commandLine: string) => boolean): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (matches(commandLine.replaceAll("\0", " "))) pids.push(Number(entry));
  }
  return pids;
}

/** A process and all its descendants (a Postgres server's backends, say), from /proc. */
export async function processTree(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (stat) parents.set(Number(entry), parent);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  }
  return tree;
}

/** The CPU time of some processes together, in seconds; one that has exited counts for nothing. */
export async function cpuSecondsOfAll(pids: number[]): Promise<number> {
  const each = await Promise.all(pids.map((pid) => cpuSecondsOf(pid).catch(() => 0)));
  return each.reduce((a, b) => a + b, 0);
}
