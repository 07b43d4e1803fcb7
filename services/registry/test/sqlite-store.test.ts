import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRegistryStore } from "../src/index.js";
import { registryStoreContract } from "../src/store/contract-suite.js";

registryStoreContract("sqlite", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-"));
  const store = await openRegistryStore({ dataDir });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
