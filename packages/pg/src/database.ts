import { AppError } from "@agentry/errors";
import type { Availability } from "@agentry/logging";
import type pg from "pg";
import { isDatabaseUnavailable } from "./errors.js";
import { type MigrationTarget, runPgMigrations } from "./migrate.js";
import { assertSchemaName, createPool, inTransaction, type PoolOptions } from "./pool.js";

/** A statement prepared once per connection (`name`), or plain text. */
export type Statement = string | { name: string; text: string };

export interface OpenDatabaseOptions extends Omit<PoolOptions, "onConnectionError"> {
  /** The schema to bring up to date before the store is used. */
  migrations: MigrationTarget;
  /** What the caller is told when the database cannot be reached, e.g. "The registry's database". */
  description: string;
  availability?: Availability;
  /**
   * Whether to wait while the database cannot be reached at start (default true), trying again at growing
   * intervals up to `maxStartDelayMs` (5 s). A job that runs once (migrations) fails at once instead.
   */
  waitForDatabase?: boolean;
  maxStartDelayMs?: number;
}

/**
 * A service's Postgres database: its pool, the error translation every store shares (an outage becomes
 * AGENT_UNAVAILABLE, a NUL character INVALID_REQUEST), and reports of whether the database answers. Stores keep
 * only their statements and their mapping between records and rows.
 */
export class PgDatabase {
  constructor(
    readonly pool: pg.Pool,
    private readonly description: string,
    private readonly availability?: Availability,
  ) {}

  async query<R extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<R[]> {
    try {
      const result = await run<R>(this.pool, statement, values);
      this.availability?.recovered();
      return result.rows;
    } catch (error) {
      throw this.translateError(error);
    }
  }

  /** Runs `work` in one transaction on one connection; retried whole after a deadlock or serialization failure. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, begin = "BEGIN"): Promise<T> {
    try {
      const result = await inTransaction(this.pool, work, begin);
      this.availability?.recovered();
      return result;
    } catch (error) {
      throw this.translateError(error);
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private translateError(error: unknown): unknown {
    if (isDatabaseUnavailable(error)) this.availability?.failed(error);
    return translatePgError(error, this.description);
  }
}

/**
 * What callers are told of a driver error: an outage becomes AGENT_UNAVAILABLE naming `description` (never the
 * URL), a NUL character INVALID_REQUEST; anything else stays as it is.
 */
export function translatePgError(error: unknown, description: string): unknown {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  // 22021: a NUL byte in text; 22P05: \u0000 in jsonb. Postgres stores neither.
  if (code === "22021" || code === "22P05") {
    return new AppError("INVALID_REQUEST", "Text must not contain the character U+0000.", { cause: error });
  }
  if (isDatabaseUnavailable(error)) {
    return new AppError("AGENT_UNAVAILABLE", `${description} is unavailable; retry shortly.`, {
      retryAfterSeconds: 1,
      cause: error,
    });
  }
  return error;
}

/** Runs one statement on a pool or on a transaction's connection. */
export function run<R extends pg.QueryResultRow>(
  on: pg.Pool | pg.PoolClient,
  statement: Statement,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  return typeof statement === "string"
    ? on.query<R>(statement, values)
    : on.query<R>({ name: statement.name, text: statement.text, values });
}

/**
 * Opens the pool and brings the schema up to date. While the database cannot be reached (it is starting, or
 * restarting) it waits and tries again, reporting the outage, rather than giving up: a service started before
 * its database comes up once the database does. Any other failure (a wrong password, a schema newer than this
 * build) is thrown at once.
 */
export async function openPgDatabase(options: OpenDatabaseOptions): Promise<PgDatabase> {
  const { availability } = options;
  const pool = createPool({
    ...options,
    onConnectionError: (error) => {
      if (isDatabaseUnavailable(error)) availability?.failed(error);
    },
  });
  const maxDelayMs = options.maxStartDelayMs ?? 5_000;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await runPgMigrations(pool, options.migrations);
        availability?.recovered();
        break;
      } catch (error) {
        if (options.waitForDatabase === false || !isDatabaseUnavailable(error)) throw error;
        availability?.failed(error);
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, maxDelayMs)));
      }
    }
  } catch (error) {
    await pool.end();
    throw translatePgError(error, options.description);
  }
  return new PgDatabase(pool, options.description, availability);
}

/** What a service opens its Postgres store with. */
export interface PgStoreOptions {
  /** `postgres://user:password@host:port/database`, as in DATABASE_URL. */
  connectionString: string;
  /** The schema holding the service's tables, created when missing; the service's own name by default. */
  schema?: string;
  /** Connections in the pool; 10 by default. */
  poolSize?: number;
  /** The longest a statement may run, waiting for locks included, before it fails; 10 s by default. */
  statementTimeoutMs?: number;
  /** Told whether the database answers (an outage log); each outage is reported as it starts and ends. */
  availability?: Availability;
  /** Whether opening waits while the database cannot be reached (default true); the migrations job does not. */
  waitForDatabase?: boolean;
}

/** Which service's store is opened: its default schema, its name in pg_stat_activity, and its migrations. */
export interface PgStoreKind {
  defaultSchema: string;
  applicationName: string;
  /** What callers are told when the database cannot be reached, e.g. "The registry's database". */
  description: string;
  migrations(schema: string): MigrationTarget;
}

/**
 * Opens a service's store database: a pool on it, its schema (checked, then brought up to date, safely when
 * instances start at once), waiting while the database cannot be reached unless told not to.
 */
export async function openStoreDatabase(
  options: PgStoreOptions,
  kind: PgStoreKind,
): Promise<{ db: PgDatabase; schema: string }> {
  const schema = options.schema ?? kind.defaultSchema;
  assertSchemaName(schema);
  const db = await openPgDatabase({
    connectionString: options.connectionString,
    applicationName: kind.applicationName,
    description: kind.description,
    migrations: kind.migrations(schema),
    ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
    ...(options.statementTimeoutMs !== undefined ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
    ...(options.availability ? { availability: options.availability } : {}),
    ...(options.waitForDatabase !== undefined ? { waitForDatabase: options.waitForDatabase } : {}),
  });
  return { db, schema };
}
