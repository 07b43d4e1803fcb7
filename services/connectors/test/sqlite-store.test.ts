import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteConnectorStore } from "../src/store/sqlite.js";
import { connectorStoreContract } from "../src/testing/index.js";

connectorStoreContract("sqlite", async (clock) => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentry-connectors-"));
  const store = openSqliteConnectorStore({ dataDir, clock });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describe("two connections on one file", () => {
  it("never hand one lease to both", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-connectors-"));
    const a = openSqliteConnectorStore({ dataDir });
    const b = openSqliteConnectorStore({ dataDir });
    try {
      const taken = await Promise.all([a.acquireLease("k", "a", 10_000), b.acquireLease("k", "b", 10_000)]);
      expect(taken.filter(Boolean)).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
