import { randomBytes } from "node:crypto";
import pg from "pg";
import { log } from "./bench.js";
import { sleep } from "./harness.js";

/**
 * A database of the benchmark's own on the Postgres server at `serverUrl` (its role needs CREATEDB): created
 * empty, dropped by `drop`. Dropping waits while the server's own sessions (autovacuum, after a million updates)
 * are still in it: the role cannot end those.
 */
export async function createBenchDatabase(
  serverUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `agentry_bench_${randomBytes(6).toString("hex")}`;
  await admin(serverUrl, (client) =>
    client.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`),
  );
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      for (let attempt = 1; ; attempt++) {
        try {
          await admin(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
          return;
        } catch (error) {
          // 42501: a session the role may not end is still there.
          if ((error as { code?: string }).code !== "42501" || attempt >= 300) {
            log(`could not drop the database ${name}: ${String(error)}; drop it by hand`);
            return;
          }
          await sleep(1000);
        }
      }
    },
  };
}

async function admin<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** VACUUM ANALYZE of a table, as autovacuum would do after the seeding's updates. */
export async function vacuum(url: string, table: string): Promise<void> {
  await admin(url, (client) => client.query(`VACUUM (ANALYZE) ${table}`));
}
