#!/usr/bin/env node
/**
 * Starts a service (the directory given, or the current one) from its bundle `dist/main.mjs`, in this process so
 * that signals reach it directly. When the bundle is missing, or a source it came from, a contract in proto/ or
 * the lockfile is newer, or the web console's build is missing or older than its sources, the generated code and
 * the console are brought up to date and the bundle made again first (a few seconds, once).
 * `AGENTRY_FROM_SOURCES=1` runs the TypeScript sources through tsx instead, for a debugger.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const serviceDir = resolve(process.argv[2] ?? process.cwd());
const root = resolve(serviceDir, "..", "..");
const bundle = join(serviceDir, "dist", "main.mjs");

/** Every file under a directory, recursively. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Whether the console's build exists and is newer than every file it is built from. */
function consoleIsCurrent() {
  const app = join(root, "apps", "console");
  const built = statSync(join(app, "dist", "index.html"), { throwIfNoEntry: false });
  if (!built) return false;
  const sources = [...filesUnder(join(app, "src")), join(app, "index.html"), join(app, "vite.config.ts")];
  return sources.every((file) => (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) <= built.mtimeMs);
}

/** Whether the bundle exists and is newer than every source it was built from, the contracts and the lockfile. */
function bundleIsCurrent() {
  const manifest = join(serviceDir, "dist", "build.json");
  if (!existsSync(bundle) || !existsSync(manifest)) return false;
  const { builtAtMs, sources } = JSON.parse(readFileSync(manifest, "utf8"));
  const inputs = [...sources.map((source) => join(root, source)), join(root, "pnpm-lock.yaml")];
  for (const file of [...inputs, ...filesUnder(join(root, "proto"))]) {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (!stats || stats.mtimeMs > builtAtMs) return false;
  }
  return true;
}

// biome-ignore lint/suspicious/noUndeclaredEnvVars: read when a service starts, never by a turbo task
if (process.env.AGENTRY_FROM_SOURCES === "1") {
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(join(serviceDir, "src", "main.ts")).href);
} else {
  const bundled = bundleIsCurrent();
  if (!bundled || !consoleIsCurrent()) {
    process.stderr.write("building (sources changed since the last build) ...\n");
    const turbo = join(root, "node_modules", ".bin", "turbo");
    const tasks = ["generate", "@agentry/console#build"];
    execFileSync(turbo, ["run", ...tasks, "--output-logs=errors-only"], { cwd: root, stdio: "inherit" });
    if (!bundled) {
      execFileSync(process.execPath, [join(root, "scripts", "bundle.mjs"), serviceDir], { stdio: "inherit" });
    }
  }
  await import(pathToFileURL(bundle).href);
}
