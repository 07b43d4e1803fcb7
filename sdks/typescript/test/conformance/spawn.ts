import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { LauncherInfo } from "./runner.js";

const CONFORMANCE_DIR = fileURLToPath(new URL("../../../../tools/conformance/", import.meta.url));

export interface SpawnedLauncher {
  info: LauncherInfo;
  stop(): Promise<void>;
}

/**
 * Spawns tools/conformance/serve.ts as every SDK's suite does and reads its one JSON line. Closing its stdin
 * stops it; if this process dies first, the pipe closes and it stops anyway.
 */
export async function spawnLauncher(timeoutMs = 90_000): Promise<SpawnedLauncher> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "serve.ts"], {
    cwd: CONFORMANCE_DIR,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const info = await new Promise<LauncherInfo>((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(
      () => reject(new Error(`the launcher printed nothing in ${timeoutMs} ms: ${stderr}`)),
      timeoutMs,
    );
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const newline = stdout.indexOf("\n");
      if (newline === -1) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout.slice(0, newline)) as LauncherInfo);
      } catch (error) {
        reject(error);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the launcher exited (${code}) before it was ready: ${stderr}`));
    });
  });
  return {
    info,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      child.stdin!.end();
      const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(force);
    },
  };
}
