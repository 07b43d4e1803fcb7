#!/usr/bin/env node
/**
 * Bundles a service for fast start-up: `src/main.ts` of the service directory (the current one, or the one given)
 * and everything it imports become `dist/main.mjs` (plus chunks for what is loaded on demand, such as the tracing
 * SDK), so the process starts without transpiling TypeScript or resolving thousands of module files.
 *
 * A few packages stay outside: native addons and packages that find their own files at run time. They are
 * imported by their location in this checkout, so the bundle works from `dist/` whichever service owns them.
 * `dist/build.json` records the sources the bundle came from; `scripts/start.mjs` runs the bundle only while none
 * of them is newer.
 */
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { build } from "esbuild";

const EXTERNAL = [
  "better-sqlite3",
  "node-llama-cpp",
  // Finds its platform's loadable extension from its own location (import.meta.resolve), which a bundle moves.
  "sqlite-vec",
  "pino",
  "pino-pretty",
  "thread-stream",
  "swagger-ui-dist",
  "pg-native",
  // Required by @datadog/sketches-js only to (de)serialise its protobuf, which nothing here calls, and not one of
  // its declared dependencies: left out, as an optional dependency that is not installed.
  "protobufjs",
];

const serviceDir = resolve(process.argv[2] ?? process.cwd());
const outdir = join(serviceDir, "dist");
const started = Date.now();

/** Keeps EXTERNAL packages out of the bundle, imported by their path relative to `dist/`. */
const externals = {
  name: "externals-by-location",
  setup(esbuild) {
    const names = EXTERNAL.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|");
    esbuild.onResolve({ filter: new RegExp(`^(${names})(/.*)?$`) }, async (args) => {
      if (args.pluginData === "own") return undefined;
      const found = await esbuild.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        pluginData: "own",
      });
      // Optional dependencies that are not installed (pg-native) stay bare: their importers handle the absence.
      if (found.errors.length > 0) return { path: args.path, external: true };
      const path = relative(outdir, found.path).split(sep).join("/");
      return { path: path.startsWith(".") ? path : `./${path}`, external: true };
    });
  },
};

/**
 * abort-controller's AbortSignal keeps its name, which the bundle would change to AbortSignal2 (it clashes with the
 * global): node-fetch, under grammY, tells a signal by its constructor's name, and refused every Telegram request
 * of the bundled server. esbuild's `keepNames` would do it too, but for every function of the bundle: each closure
 * made at run time then carries a `name` property of its own, some 300 bytes, which a request or an open stream
 * holds dozens of.
 */
const namedAbortSignal = {
  name: "named-abort-signal",
  setup(esbuild) {
    esbuild.onLoad(
      { filter: /[\\/]abort-controller[\\/]dist[\\/]abort-controller\.m?js$/ },
      async (args) => ({
        contents: `${await readFile(args.path, "utf8")}\nObject.defineProperty(AbortSignal, "name", { value: "AbortSignal" });\n`,
        loader: "js",
      }),
    );
  },
};

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
const result = await build({
  entryPoints: { main: join(serviceDir, "src", "main.ts") },
  outdir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  // Comments and indentation left out: V8 keeps a module's whole source in memory, as two bytes per character
  // once a single character of it is not Latin-1 (a dash in a comment is enough). Names stay, for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  charset: "ascii",
  metafile: true,
  logLevel: "warning",
  plugins: [externals, namedAbortSignal],
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
});

const root = resolve(serviceDir, "..", "..");
const sources = Object.keys(result.metafile.inputs)
  .map((input) => resolve(process.cwd(), input))
  .filter((file) => !file.split(sep).includes("node_modules"));
await writeFile(
  join(outdir, "build.json"),
  `${JSON.stringify({ builtAtMs: started, sources: sources.map((file) => relative(root, file)) }, null, 2)}\n`,
);
const size = (await stat(join(outdir, "main.mjs"))).size;
process.stdout.write(
  `bundled ${relative(root, serviceDir)}: dist/main.mjs ${(size / 1e6).toFixed(1)} MB from ${sources.length} sources in ${Date.now() - started} ms\n`,
);
