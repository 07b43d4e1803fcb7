#!/usr/bin/env node
/**
 * Starts a service (the directory given, or the current one): its bundle `dist/main.mjs` when `pnpm build` made
 * one and no source it came from has changed since, else its TypeScript sources through tsx. Either way the
 * service runs in this process, so signals reach it directly.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const serviceDir = resolve(process.argv[2] ?? process.cwd());
const root = resolve(serviceDir, "..", "..");
const bundle = join(serviceDir, "dist", "main.mjs");

/** Whether the bundle exists and is newer than every source it was built from and the installed packages. */
function bundleIsCurrent() {
  const manifest = join(serviceDir, "dist", "build.json");
  if (!existsSync(bundle) || !existsSync(manifest)) return false;
  const { builtAtMs, sources } = JSON.parse(readFileSync(manifest, "utf8"));
  for (const source of [...sources, "pnpm-lock.yaml"]) {
    const stats = statSync(join(root, source), { throwIfNoEntry: false });
    if (!stats || stats.mtimeMs > builtAtMs) return false;
  }
  return true;
}

if (bundleIsCurrent()) {
  await import(pathToFileURL(bundle).href);
} else {
  if (existsSync(bundle)) {
    process.stderr.write(
      "dist/ is older than the sources: running them with tsx (pnpm build bundles them again)\n",
    );
  }
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(join(serviceDir, "src", "main.ts")).href);
}
