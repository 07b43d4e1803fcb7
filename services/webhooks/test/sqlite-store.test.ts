import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteWebhookStore } from "../src/store/sqlite.js";
import { webhookStoreContract } from "../src/testing/index.js";

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
