/**
 * Starts a live Agentry service for an SDK's conformance run and prints ONE JSON line to stdout (see
 * `LauncherInfo` and README.md). Runs until its standard input closes or it receives SIGTERM/SIGINT, so a test
 * suite that spawns it with a piped stdin cannot leak it even when the suite dies.
 *
 *   node --import tsx tools/conformance/serve.ts [--providers openai,anthropic,local]
 */
import { parseArgs } from "node:util";
import { type LauncherProvider, startLauncher } from "./launcher.js";

const PROVIDERS: readonly LauncherProvider[] = ["openai", "anthropic", "local"];

let launcher: Awaited<ReturnType<typeof startLauncher>>;
try {
  const { values } = parseArgs({ options: { providers: { type: "string" } }, strict: true });
  const providers = values.providers?.split(",").map((name) => {
    if (!(PROVIDERS as readonly string[]).includes(name)) throw new Error(`unknown provider ${name}`);
    return name as LauncherProvider;
  });
  launcher = await startLauncher(providers ? { providers } : {});
} catch (error) {
  process.stderr.write(`conformance launcher failed to start: ${String(error)}\n`);
  process.exit(1);
}

process.stdout.write(`${JSON.stringify(launcher.info)}\n`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await launcher.close();
    process.exit(0);
  } catch (error) {
    process.stderr.write(`conformance launcher failed to stop cleanly: ${String(error)}\n`);
    process.exit(1);
  }
}

process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
