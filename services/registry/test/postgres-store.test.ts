import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll } from "vitest";
import { registryStoreContract } from "../src/store/contract-suite.js";
import { openPostgresRegistryStore } from "../src/store/postgres.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
}, 60_000);
afterAll(() => db?.close());

// Each test gets an empty store of its own: a fresh schema, migrated from nothing, in this file's database.
let schemas = 0;
registryStoreContract("postgres", async () => {
  const store = await openPostgresRegistryStore({
    connectionString: db.url,
    schema: `registry_${++schemas}`,
  });
  return { store, cleanup: () => store.close() };
});
