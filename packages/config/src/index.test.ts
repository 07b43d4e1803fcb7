import { isAbsolute } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, env, gatewayAddress, parseEnv, publicOrigin, z } from "./index.js";

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

describe("shared variables", () => {
  const shared = z.object({
    PUBLIC_BASE_URL: env.publicBaseUrl(),
    WEBHOOKS_URL: env.webhooksUrl(),
    ALLOW_PRIVATE_NETWORKS: env.allowPrivateNetworks(),
  });

  it("leaves them unset, and private networks refused, by default; an empty value is unset", () => {
    expect(parseEnv(shared, { WEBHOOKS_URL: "" })).toEqual({
      PUBLIC_BASE_URL: undefined,
      WEBHOOKS_URL: undefined,
      ALLOW_PRIVATE_NETWORKS: false,
    });
  });

  it("drops a trailing slash from the public base URL and reads the flag", () => {
    expect(
      parseEnv(shared, {
        PUBLIC_BASE_URL: "https://api.example.com/",
        WEBHOOKS_URL: "http://webhooks:8083",
        ALLOW_PRIVATE_NETWORKS: "1",
      }),
    ).toEqual({
      PUBLIC_BASE_URL: "https://api.example.com",
      WEBHOOKS_URL: "http://webhooks:8083",
      ALLOW_PRIVATE_NETWORKS: true,
    });
    expect(() => parseEnv(shared, { WEBHOOKS_URL: "not a url", ALLOW_PRIVATE_NETWORKS: "yes" })).toThrow(
      /WEBHOOKS_URL.*ALLOW_PRIVATE_NETWORKS/,
    );
  });
});

describe("the gateway's address", () => {
  const schema = z.object(gatewayAddress());

  it("is PUBLIC_BASE_URL when set, else http://localhost:PORT, with PORT 8080 by default", () => {
    expect(publicOrigin(parseEnv(schema, {}))).toBe("http://localhost:8080");
    expect(publicOrigin(parseEnv(schema, { PORT: "3000" }))).toBe("http://localhost:3000");
    expect(
      publicOrigin(parseEnv(schema, { PORT: "3000", PUBLIC_BASE_URL: "https://agents.example.com/" })),
    ).toBe("https://agents.example.com");
    expect(() => parseEnv(schema, { PORT: "eighty" })).toThrow(/PORT/);
  });
});
