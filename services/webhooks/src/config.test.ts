import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";
import { DEFAULT_RETRY_SCHEDULE_MS } from "./domain/schedule.js";

describe("configuration", () => {
  it("has the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      WEBHOOKS_PORT: 8083,
      HOST: "127.0.0.1",
      WEBHOOK_RETRY_SCHEDULE: DEFAULT_RETRY_SCHEDULE_MS,
      ALLOW_PRIVATE_NETWORKS: false,
      WEBHOOK_LEASE_MS: 60_000,
      SHUTDOWN_TIMEOUT_MS: 10_000,
    });
    expect(config.WEBHOOK_SECRETS_KEY).toBeUndefined();
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it("reads the retry schedule, the private networks flag and the secrets key", () => {
    const key = Buffer.alloc(32, 3).toString("base64");
    const config = loadConfig({
      WEBHOOK_RETRY_SCHEDULE: "1s,2s,4s",
      ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_SECRETS_KEY: key,
    });
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([1000, 2000, 4000]);
    expect(config.ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(config.WEBHOOK_SECRETS_KEY).toBe(key);
  });

  it("stops with one line naming a bad variable", () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: "1s,later" })).toThrow(
      /WEBHOOK_RETRY_SCHEDULE: "later"/,
    );
    expect(() => loadConfig({ WEBHOOK_SECRETS_KEY: "short" })).toThrow(/WEBHOOK_SECRETS_KEY/);
    expect(() => loadConfig({ ALLOW_PRIVATE_NETWORKS: "yes" })).toThrow(/ALLOW_PRIVATE_NETWORKS/);
    expect(() => loadConfig({ WEBHOOK_LEASE_MS: "1000" })).toThrow(/WEBHOOK_LEASE_MS/);
  });
});
