import { defineConfig } from "vitest/config";

export const config = defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Two tests race real child processes; a loaded machine makes each start slow.
    testTimeout: 120_000,
    // Closing a Postgres suite drops every database it made, each with a checkpoint: slow on a loaded machine.
    hookTimeout: 120_000,
  },
});
export { config as default };
