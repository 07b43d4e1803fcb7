import { defineConfig } from "vitest/config";

export const config = defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Some tests run the real CLI several times as child processes; a loaded machine makes each start slow.
    testTimeout: 120_000,
    hookTimeout: 30_000,
  },
});
export { config as default };
