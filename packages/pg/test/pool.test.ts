import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, inTransaction, isDatabaseUnavailable } from "../src/index.js";

let db: TestDatabase;
let admin: pg.Client;

beforeAll(async () => {
  db = await openTestDatabase();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await db?.close();
});

/** Ends the backend as `pg_ctl restart -m fast` does: the server sends 57P01 and closes the connection. */
async function terminate(pid: number): Promise<void> {
  const { rows } = await admin.query<{ done: boolean }>("SELECT pg_terminate_backend($1) AS done", [pid]);
  expect(rows[0]?.done).toBe(true);
}

describe("inTransaction", () => {
  it("survives the connection being ended between two statements, and the pool recovers", async () => {
    const errors: Error[] = [];
    const pool = createPool({
      connectionString: db.url,
      applicationName: "pool-test",
      onConnectionError: (e) => errors.push(e),
    });
    try {
      const failure = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        await terminate(rows[0]!.pid);
        // No statement is running while the server's error arrives: the driver emits it on the client.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await client.query("SELECT 1");
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(isDatabaseUnavailable(failure)).toBe(true);
      // The broken connection was discarded, not handed to the next caller.
      expect(pool.totalCount).toBe(0);
      expect(
        await inTransaction(pool, async (client) => (await client.query("SELECT 2 AS n")).rows[0]),
      ).toEqual({
        n: 2,
      });
    } finally {
      await pool.end();
    }
  });

  it("survives the connection being ended while a statement runs", async () => {
    const pool = createPool({ connectionString: db.url, applicationName: "pool-test" });
    try {
      const failure = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        // Its rejection is taken at once: it may come before the terminating call has returned.
        const sleeping = client.query("SELECT pg_sleep(5)").then(
          () => undefined,
          (error: unknown) => error,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        await terminate(rows[0]!.pid);
        throw await sleeping;
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      expect(await pool.query("SELECT 3 AS n").then((r) => r.rows[0])).toEqual({ n: 3 });
    } finally {
      await pool.end();
    }
  });

  it("reports an idle connection's end to onConnectionError instead of crashing", async () => {
    const errors: Error[] = [];
    const pool = createPool({
      connectionString: db.url,
      applicationName: "pool-test",
      onConnectionError: (e) => errors.push(e),
    });
    try {
      const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await terminate(rows[0]!.pid);
      await expect.poll(() => errors.length).toBe(1);
      expect(isDatabaseUnavailable(errors[0])).toBe(true);
      expect(await pool.query("SELECT 4 AS n").then((r) => r.rows[0])).toEqual({ n: 4 });
    } finally {
      await pool.end();
    }
  });

  it("survives a connection ending while the pool hands it to a waiting transaction", async () => {
    const pool = createPool({ connectionString: db.url, applicationName: "pool-test", poolSize: 1 });
    try {
      const holder = await pool.connect();
      const { rows } = await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      const waiting = inTransaction(pool, (client) => client.query("SELECT 5 AS n"));
      // Releasing hands the one connection to the waiting transaction at once, which can listen for errors only
      // a microtask later. The server's 57P01 can be read in that gap (it came in one packet with the holder's
      // last answer): emitted here, as the driver would, it must not be an unhandled 'error' event.
      holder.release();
      const ended = Object.assign(new Error("terminating connection due to administrator command"), {
        code: "57P01",
      });
      expect(() => holder.emit("error", ended)).not.toThrow();
      const failure = await waiting.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBe(ended);
      expect(isDatabaseUnavailable(failure)).toBe(true);
      // The connection was discarded; the next transaction gets a new one.
      const next = await inTransaction(pool, async (client) => {
        return (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      });
      expect(next).not.toBe(rows[0]!.pid);
    } finally {
      await pool.end();
    }
  });
});
