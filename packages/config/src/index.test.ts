import { isAbsolute } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, env, parseEnv, z } from "./index.js";

const schema = z.object({ PORT: env.port(8080), DATA_DIR: env.dataDir(), LOG_LEVEL: env.logLevel() });

describe("parseEnv", () => {
  it("applies defaults and coerces", () => {
    const config = parseEnv(schema, { PORT: "9000" });
    expect(config.PORT).toBe(9000);
    expect(config.LOG_LEVEL).toBe("info");
    expect(isAbsolute(config.DATA_DIR)).toBe(true);
    expect(config.DATA_DIR.endsWith("/data")).toBe(true);
  });

  it("reports every bad variable in one line", () => {
    expect(() => parseEnv(schema, { PORT: "http", LOG_LEVEL: "loud" })).toThrow(ConfigError);
    try {
      parseEnv(schema, { PORT: "70000", LOG_LEVEL: "loud" });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      expect(message).toMatch(/PORT/);
      expect(message).toMatch(/LOG_LEVEL/);
    }
  });
});
