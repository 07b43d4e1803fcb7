import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";

/** A throw-away redis-server on a loopback port, for tests. Stoppable and restartable on the same port. */
export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** Kills the server (as a crash would: no shutdown handshake). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** Freezes / thaws the process, for a server that accepts connections but never answers. */
  pause(): void;
  resume(): void;
}

const NOT_INSTALLED =
  "redis-server is not on PATH. The limiter's Redis tests need it: install it (apt-get install -y redis-server) " +
  "or point REDIS_URL at a Redis server (the outage tests still need redis-server itself).";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  await once(server, "close");
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error(`redis-server did not start on port ${port}:\n${output}`)),
      10_000,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.on("error", (error: NodeJS.ErrnoException) =>
      fail(error.code === "ENOENT" ? new Error(NOT_INSTALLED) : error),
    );
    child.on("exit", (code) => fail(new Error(`redis-server exited (${code}) on port ${port}:\n${output}`)));
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        child.stdout?.off("data", onData);
        // Keep draining so a chatty server never blocks on a full pipe.
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
  });
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Spawns a redis-server on a loopback port (a free one unless given). */
export async function startTestRedis(port?: number): Promise<TestRedis> {
  port ??= await freePort();
  const fixedPort = port;
  let child: ChildProcess | undefined = await launch(fixedPort);
  running.add(child);
  return {
    url: `redis://127.0.0.1:${fixedPort}`,
    port: fixedPort,
    async stop() {
      const current = child;
      child = undefined;
      if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
      running.delete(current);
      const exited = once(current, "exit");
      current.kill("SIGCONT");
      current.kill("SIGKILL");
      await exited;
    },
    async start() {
      if (child !== undefined) throw new Error("redis-server is already running");
      child = await launch(fixedPort);
      running.add(child);
    },
    pause() {
      child?.kill("SIGSTOP");
    },
    resume() {
      child?.kill("SIGCONT");
    },
  };
}

/** REDIS_URL when set (a server the tests must not stop), otherwise a spawned server. */
export async function sharedTestRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const url = process.env.REDIS_URL;
  if (url !== undefined && url !== "") return { url, stop: async () => {} };
  return startTestRedis();
}

/**
 * Starts a server in `beforeAll` without failing the hook: a missing redis-server then fails every test that
 * needs it, each with the reason, instead of leaving them reported as skipped.
 */
export function serverFixture<T extends { stop(): Promise<void> }>(start: () => Promise<T>) {
  let server: T | undefined;
  let failure: unknown;
  return {
    async start(): Promise<void> {
      try {
        server = await start();
      } catch (error) {
        failure = error;
      }
    },
    get(): T {
      if (server === undefined) throw failure ?? new Error("test redis-server not started");
      return server;
    },
    async stop(): Promise<void> {
      await server?.stop();
    },
  };
}
