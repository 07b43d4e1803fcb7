import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll } from "vitest";
import { openPostgresWebhookStore } from "../src/store/postgres.js";
import { webhookStoreContract } from "../src/testing/index.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
}, 60_000);
afterAll(() => db?.close());

// Each test gets an empty store of its own: a fresh schema, migrated from nothing, in this file's database.
let schemas = 0;
webhookStoreContract("postgres", async (clock) => {
  const store = await openPostgresWebhookStore({
    connectionString: db.url,
    schema: `webhooks_${++schemas}`,
    clock,
  });
  return { store, cleanup: () => store.close() };
});
