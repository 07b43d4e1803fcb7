import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresConnectorStore } from "../src/store/postgres.js";
import { connectorStoreContract } from "../src/testing/index.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
}, 60_000);
afterAll(() => db?.close());

// Each test gets an empty store of its own: a fresh schema, migrated from nothing, in this file's database.
let schemas = 0;
connectorStoreContract("postgres", async (clock) => {
  const store = await openPostgresConnectorStore({
    connectionString: db.url,
    schema: `connectors_${++schemas}`,
    clock,
  });
  return { store, cleanup: () => store.close() };
});

describe("two pools on one database", () => {
  it("never hand one lease to both", async () => {
    const url = await db.createDatabase();
    const [a, b] = await Promise.all([
      openPostgresConnectorStore({ connectionString: url }),
      openPostgresConnectorStore({ connectionString: url }),
    ]);
    try {
      const taken = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).acquireLease("k", `h${i}`, 10_000)),
      );
      expect(taken.filter(Boolean)).toHaveLength(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
