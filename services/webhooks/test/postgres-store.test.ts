import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresWebhookStore } from "../src/store/postgres.js";
import { webhookStoreContract } from "../src/testing/index.js";
import { expectExclusiveClaims } from "./fixtures.js";

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

describe("two pools on one database", () => {
  it("never hand one endpoint to two workers", async () => {
    const url = await db.createDatabase();
    const [a, b] = await Promise.all([
      openPostgresWebhookStore({ connectionString: url }),
      openPostgresWebhookStore({ connectionString: url }),
    ]);
    try {
      await expectExclusiveClaims(a, b);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("fails to open an unreachable database with AGENT_UNAVAILABLE, never showing its password", async () => {
    const unreachable = await openPostgresWebhookStore({
      connectionString: "postgres://nobody:s3cret@127.0.0.1:1/none",
      waitForDatabase: false,
    }).catch((error: unknown) => error);
    expect(unreachable).toMatchObject({ code: "AGENT_UNAVAILABLE" });
    expect(String((unreachable as Error).message)).not.toContain("s3cret");
  });
});
