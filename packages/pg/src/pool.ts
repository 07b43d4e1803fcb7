import pg from "pg";

/** Schema names are put into SQL text, so only plain lower-case identifiers are accepted. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name ${JSON.stringify(schema)}`);
}

export interface PoolOptions {
  connectionString: string;
  /** Shown in pg_stat_activity, e.g. agentry-registry. */
  applicationName: string;
  poolSize?: number;
  statementTimeoutMs?: number;
  /** Where errors of idle connections go; without a listener they would crash the process. */
  onConnectionError?: (error: Error) => void;
}

/** A pool with the settings every store connection needs. */
export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    // A client that died mid-transaction must not hold its row locks for long.
    idle_in_transaction_session_timeout: 60_000,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName,
  });
  pool.on("error", (error) => options.onConnectionError?.(error));
  // pg-pool takes its own error listener off a client as it hands the client out, and a caller awaiting
  // `pool.connect()` attaches one only a microtask later. An error message read in between (a restarting server's
  // 57P01 in the same packet as the previous holder's last answer) would find no listener and end the process.
  // This one covers every client from the moment it leaves the pool until it is back.
  pool.on("acquire", (client) => client.on("error", noteHeldClientError));
  pool.on("release", (_error, client) => client.off("error", noteHeldClientError));
  return pool;
}

/** The error each client out of the pool has met, if any: such a client is released with it, and so discarded. */
const heldClientErrors = new WeakMap<pg.PoolClient, Error>();

function noteHeldClientError(this: pg.PoolClient, error: Error): void {
  if (!heldClientErrors.has(this)) heldClientErrors.set(this, error);
}

/** Serialization failure and deadlock: the transaction may simply be run again. */
const RETRYABLE = new Set(["40001", "40P01"]);

/**
 * Runs `work` in one transaction on one connection, retried whole (up to three attempts) after a deadlock or a
 * serialization failure. A connection that broke, or cannot even roll back, is discarded rather than returned to the
 * pool. `pool` comes from `createPool`, whose listener notes the errors of the connections it hands out.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = "BEGIN",
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactionOnce(pool, work, begin);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt < 3 && typeof code === "string" && RETRYABLE.has(code)) continue;
      throw error;
    }
  }
}

async function transactionOnce<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin: string,
): Promise<T> {
  const client = await pool.connect();
  // The server ends sessions between statements (57P01 when it restarts) and the socket can close at any moment;
  // the pool's listener (createPool) notes it. A client that broke is released with its error, which makes the
  // pool discard it.
  const broken = () => heldClientErrors.get(client);
  try {
    const early = broken();
    if (early) throw early;
    await client.query(begin);
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    if (broken() === undefined) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        heldClientErrors.set(client, rollbackError);
      });
    }
    throw error;
  } finally {
    const error = broken();
    heldClientErrors.delete(client);
    client.release(error);
  }
}
