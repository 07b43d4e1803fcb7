import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";
import { openSqliteWebhookStore } from "../src/store/sqlite.js";
import { webhookStoreContract } from "../src/testing/index.js";
import { expectExclusiveClaims } from "./fixtures.js";

webhookStoreContract("sqlite", async (clock) => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentry-webhooks-"));
  const store = openSqliteWebhookStore({ dataDir, clock });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describe("two connections on one file", () => {
  it("never hand one endpoint to two workers", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-webhooks-"));
    const a = openSqliteWebhookStore({ dataDir });
    const b = openSqliteWebhookStore({ dataDir });
    try {
      await expectExclusiveClaims(a, b);
    } finally {
      await a.close();
      await b.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
