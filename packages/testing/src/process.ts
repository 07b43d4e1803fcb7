import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** A deployable's folder in this repository: an application or a service run on its own. */
export type Deployable =
  | "apps/server"
  | "services/gateway"
  | "services/registry"
  | "services/conversation"
  | "services/webhooks"
  | "services/connectors";

export interface DeployableProcess {
  readonly name: string;
  child: ChildProcess;
  /** The URL the process printed when it started listening. */
  url: string;
  /** Every JSON log line the process wrote so far. */
  lines: Record<string, unknown>[];
  /** Whether the process is still running. */
  readonly alive: boolean;
  /** What the process wrote to stderr so far (a crash's stack trace). */
  readonly stderr: string;
  /** Sends the signal and waits for the exit; resolves to the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts a deployable's entry point (`<dir>/src/main.ts`, or with `bundle` its `dist/main.mjs` as `pnpm build`
 * makes it) as a child process with JSON logs, and waits for its "listening" line to learn its URL. A process,
 * not an import: it runs as an operator runs it, and a test may kill it.
 */
export async function startDeployable(
  dir: Deployable,
  env: Record<string, string>,
  options: { bundle?: boolean } = {},
): Promise<DeployableProcess> {
  const name = dir.slice(dir.indexOf("/") + 1);
  const entry = options.bundle
    ? [join(root, dir, "dist", "main.mjs")]
    : ["--import", "tsx", join(root, dir, "src", "main.ts")];
  // One process, no wrapper: signals reach the process itself, and SIGKILL leaves nothing running.
  const child = spawn(process.execPath, entry, {
    cwd: join(root, dir),
    env: { ...process.env, LOG_FORMAT: "json", LOG_LEVEL: "info", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in time: ${stderr}`)), 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line);
      } catch {
        return;
      }
      lines.push(parsed);
      if (/listening/.test(String(parsed.msg))) {
        clearTimeout(timer);
        resolve(typeof parsed.url === "string" ? parsed.url : `http://127.0.0.1:${String(parsed.port)}`);
      }
    });
  });
  return {
    name,
    child,
    url,
    lines,
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    get stderr() {
      return stderr;
    },
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, "exit");
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}
