import { defineConfig } from "vitest/config";

export const config = defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Each file starts its own servers and processes; two files at once would only compete for the CPU.
    fileParallelism: false,
  },
});
export { config as default };
