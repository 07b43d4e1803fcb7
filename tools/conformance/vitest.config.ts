import { defineConfig } from "vitest/config";

export const config = defineConfig({
  test: {
    include: ["*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
export { config as default };
