import { defineConfig } from "vitest/config";

/**
 * The console is served by the gateway at /console/ (apps/server and services/gateway pass the gateway this
 * package's `dist`). `pnpm dev` proxies the API to a server on :8080.
 */
export const config = defineConfig({
  base: "/console/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: false },
  server: {
    proxy: { "/v1": "http://localhost:8080", "/console/session": "http://localhost:8080" },
  },
  test: {
    include: ["src/**/*.test.ts", "src/**/*.test.tsx", "test/**/*.test.ts", "e2e/**/*.e2e.test.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
export { config as default };
