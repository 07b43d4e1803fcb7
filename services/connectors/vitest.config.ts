import { defineConfig } from "vitest/config";

export const config = defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Some tests run the service as child processes and kill them; a loaded machine makes each start slow.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
export { config as default };
