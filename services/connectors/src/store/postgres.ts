/**
 * The connectors store on Postgres, for deployments that run several connector processes on one database. It
 * passes the same contract suite as the SQLite store. Leases are taken by one conditional upsert, so two
 * processes never both hold one; times are the processes' clocks (kept in step by NTP, well within a lease).
 */
import { openStoreDatabase, type PgDatabase, type PgStoreOptions } from "@agentry/pg";
import { migrationTarget } from "./postgres-migrations.js";
import type { Clock, ConnectorStore } from "./types.js";

export const DEFAULT_CONNECTORS_SCHEMA = "connectors";

export interface PostgresConnectorStoreOptions extends PgStoreOptions {
  clock?: Clock;
}

class PostgresConnectorStore implements ConnectorStore {
  private closed = false;

  constructor(
    private readonly db: PgDatabase,
    private readonly schema: string,
    private readonly clock: Clock,
  ) {}

  async acquireLease(key: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = this.clock();
    const rows = await this.db.query<{ holder: string }>(
      `INSERT INTO ${this.schema}.leases AS l (key, holder, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE l.holder = excluded.holder OR l.expires_at <= $4
       RETURNING holder`,
      [key, holder, new Date(now + ttlMs), new Date(now)],
    );
    return rows[0]?.holder === holder;
  }

  async releaseLease(key: string, holder: string): Promise<void> {
    await this.db.query(`DELETE FROM ${this.schema}.leases WHERE key = $1 AND holder = $2`, [key, holder]);
  }

  async cursor(key: string): Promise<string | undefined> {
    const rows = await this.db.query<{ value: string }>(
      `SELECT value FROM ${this.schema}.cursors WHERE key = $1`,
      [key],
    );
    return rows[0]?.value;
  }

  async setCursor(key: string, value: string): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.schema}.cursors (key, value, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [key, value, new Date(this.clock())],
    );
  }

  async markAnswered(messageKey: string, agentId: string): Promise<boolean> {
    const rows = await this.db.query<{ message_key: string }>(
      `INSERT INTO ${this.schema}.answered (message_key, agent_id, answered_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING message_key`,
      [messageKey, agentId, new Date(this.clock())],
    );
    return rows.length === 1;
  }

  async releaseAnswered(messageKey: string): Promise<void> {
    await this.db.query(`DELETE FROM ${this.schema}.answered WHERE message_key = $1`, [messageKey]);
  }

  async answered(messageKey: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM ${this.schema}.answered WHERE message_key = $1`, [
      messageKey,
    ]);
    return rows.length > 0;
  }

  async ping(): Promise<boolean> {
    try {
      await this.db.query("SELECT 1", []);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }
}

/** Opens the store on Postgres and brings its schema up to date. */
export async function openPostgresConnectorStore(
  options: PostgresConnectorStoreOptions,
): Promise<ConnectorStore> {
  const { db, schema } = await openStoreDatabase(options, {
    defaultSchema: DEFAULT_CONNECTORS_SCHEMA,
    applicationName: "agentry-connectors",
    description: "The connectors service's database",
    migrations: migrationTarget,
  });
  return new PostgresConnectorStore(db, schema, options.clock ?? Date.now);
}
