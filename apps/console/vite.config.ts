import { readdir, readFile, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

const gzipped = promisify(gzip);
const brotlied = promisify(brotliCompress);
const COMPRESSIBLE = new Set([".js", ".css", ".svg", ".html", ".json", ".txt"]);

/**
 * Writes a `.br` and a `.gz` beside each text file of the build, at the strongest settings: compressed once here,
 * the gateway only picks the file the browser accepts. A variant that saves nothing is not written.
 */
function precompress(): Plugin {
  return {
    name: "agentry-precompress",
    apply: "build",
    async writeBundle(options) {
      const dir = options.dir ?? "dist";
      const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter(
        (entry) => entry.isFile() && COMPRESSIBLE.has(extname(entry.name)),
      );
      await Promise.all(
        files.map(async (entry) => {
          const path = join(entry.parentPath, entry.name);
          const plain = await readFile(path);
          const variants: [string, Buffer][] = [
            [".gz", await gzipped(plain, { level: constants.Z_BEST_COMPRESSION })],
            [
              ".br",
              await brotlied(plain, {
                params: {
                  [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
                  [constants.BROTLI_PARAM_SIZE_HINT]: plain.length,
                },
              }),
            ],
          ];
          for (const [suffix, body] of variants) {
            if (body.length < plain.length) await writeFile(`${path}${suffix}`, body);
          }
        }),
      );
    },
  };
}

/**
 * The console is served by the gateway at /console/ (apps/server and services/gateway pass the gateway this
 * package's `dist`). `pnpm dev` proxies the API to a server on :8080.
 */
export const config = defineConfig({
  base: "/console/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  plugins: [precompress()],
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: false },
  server: {
    proxy: {
      "/v1": "http://localhost:8080",
      "/console/session": "http://localhost:8080",
      "/console/oidc": "http://localhost:8080",
    },
  },
  test: {
    include: ["src/**/*.test.ts", "src/**/*.test.tsx", "test/**/*.test.ts", "e2e/**/*.e2e.test.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
export { config as default };
