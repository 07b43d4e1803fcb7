import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase, withDatabase } from "../src/index.js";

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("openTestDatabase", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase();
  }, 60_000);
  afterAll(() => db?.close());

  it("hands out fresh UTF-8 databases of their own", async () => {
    const second = await db.createDatabase();
    expect(second).not.toBe(db.url);
    for (const url of [db.url, second]) {
      const [row] = await query<{ name: string; encoding: string; tables: number }>(
        url,
        `SELECT current_database() AS name, pg_encoding_to_char(encoding) AS encoding,
           (SELECT count(*)::int FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')) AS tables
         FROM pg_database WHERE datname = current_database()`,
      );
      expect(row).toEqual({ name: new URL(url).pathname.slice(1), encoding: "UTF8", tables: 0 });
      expect(row!.name).toMatch(/^agentry_test_[0-9a-f]{12}$/);
    }
  });

  it("sorts text linguistically by default, so code point order must be asked for", async () => {
    const rows = await query<{ n: string }>(
      db.url,
      "SELECT n FROM (VALUES ('b'), ('B'), ('a')) v(n) ORDER BY n",
    );
    const provider = await query<{ p: string }>(
      db.url,
      "SELECT datlocprovider AS p FROM pg_database WHERE datname = current_database()",
    );
    // Servers without ICU fall back to their own default collation, which may be C.
    if (provider[0]!.p === "i") expect(rows.map((r) => r.n)).toEqual(["a", "b", "B"]);
    else expect(rows).toHaveLength(3);
  });
});

describe("a configured server that cannot be reached", () => {
  it("fails with the reason and the URL, its password hidden, instead of skipping", async () => {
    const saved = process.env.TEST_DATABASE_URL;
    // Port 1 on loopback: nothing listens there.
    process.env.TEST_DATABASE_URL = "postgres://tests:s3cret@127.0.0.1:1/postgres";
    try {
      const error = await openTestDatabase().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain("cannot reach the Postgres server for tests at");
      expect((error as Error).message).toContain("postgres://tests:***@127.0.0.1:1/postgres");
      expect((error as Error).message).not.toContain("s3cret");
    } finally {
      if (saved === undefined) delete process.env.TEST_DATABASE_URL;
      else process.env.TEST_DATABASE_URL = saved;
    }
  });
});

describe("withDatabase", () => {
  it("replaces only the database of a URL", () => {
    expect(withDatabase("postgres://u:p%40ss@db.example:6543/main?sslmode=require", "other")).toBe(
      "postgres://u:p%40ss@db.example:6543/other?sslmode=require",
    );
  });
});
