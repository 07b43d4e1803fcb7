/**
 * The registry on Postgres, for deployments that run several instances on one database. It passes the same
 * contract suite as the SQLite store and keeps its semantics exactly.
 *
 * Schema choices:
 * - Every table lives in one schema (`registry` by default), so the registry and the conversation service can
 *   share a database; `<schema>.schema_migrations` records the applied migrations (postgres-migrations.ts).
 * - Identifiers, names and statuses use `COLLATE "C"`: lists sort names by code point and break ties by id in
 *   byte order, whatever the database's default collation.
 * - Times are `timestamptz`; they are written from and read back as ISO 8601 strings with milliseconds in
 *   UTC, the form the SQLite store keeps as text, so both return identical records.
 * - Agent fields, limit overrides, scopes and event payloads are `jsonb`. Postgres cannot store U+0000 in
 *   text or jsonb; such a value is refused with INVALID_REQUEST instead of failing as an internal error.
 * - The outbox orders events by `seq bigserial`. Sequence numbers are handed out before commit, so a reader
 *   may see a later event before an earlier one commits; the relay reads "not yet published" rather than
 *   "after the last seq", so a late commit is delivered on a following round. Several registry instances may
 *   read the same events at once and deliver them twice: delivery is at least once and handlers are
 *   idempotent.
 *
 * Concurrency: a create locks its account's row (`FOR NO KEY UPDATE`) and only then counts the account's
 * agents, in a new statement and so a new snapshot, which makes the `maxAgents` check exact across every
 * connection and process. Updates lock the agent's row (`FOR UPDATE`) for their read-modify-write.
 * Transactions run at READ COMMITTED; a deadlock or serialization failure is retried twice.
 */
import { openStoreDatabase, type PgDatabase, type PgStoreOptions, pgAuditLog } from "@agentry/pg";
import { postgresAccounts } from "./postgres/accounts.js";
import { postgresAgents } from "./postgres/agents.js";
import { postgresBudgets } from "./postgres/budgets.js";
import { postgresConsoleSessions } from "./postgres/console-sessions.js";
import { postgresIdempotency } from "./postgres/idempotency.js";
import { postgresMembers } from "./postgres/members.js";
import { postgresOutbox } from "./postgres/outbox.js";
import { migrationTarget } from "./postgres-migrations.js";
import type { RegistryStore } from "./types.js";

/** What the registry store opens with (`openStoreDatabase`). */
export type PostgresRegistryStoreOptions = PgStoreOptions;

export const DEFAULT_REGISTRY_SCHEMA = "registry";

/** The registry's store on Postgres: the operations of every aggregate (postgres/*.ts) on one pool. */
export interface PostgresRegistryStore extends RegistryStore {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every operation of RegistryStore
export class PostgresRegistryStore {
  private closed = false;

  /** Use `openPostgresRegistryStore`, which also migrates the schema. */
  constructor(
    private readonly db: PgDatabase,
    schema: string,
  ) {
    const outbox = postgresOutbox(db, schema);
    const audit = pgAuditLog(db, schema);
    const idempotency = postgresIdempotency(db, schema);
    const accounts = postgresAccounts(db, schema, idempotency, audit);
    const operations: Omit<RegistryStore, "close"> = {
      ...postgresAgents(db, schema, accounts, outbox, idempotency, audit),
      ...accounts.store,
      ...postgresMembers(db, schema, audit),
      ...postgresConsoleSessions(db, schema, accounts),
      ...outbox.store,
      ...idempotency.store,
      ...postgresBudgets(db, schema, audit),
      listAuditEvents: (accountId, query) => audit.list(accountId, query),
      pruneAuditEvents: (before, limit) => audit.prune(before, limit),
    };
    Object.assign(this, operations);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }
}

/**
 * Opens a pool on the database and brings the service's schema up to date (safe when instances start at once).
 * While the database cannot be reached it waits for it, reporting the outage.
 */
export async function openPostgresRegistryStore(
  options: PostgresRegistryStoreOptions,
): Promise<PostgresRegistryStore> {
  const { db, schema } = await openStoreDatabase(options, {
    defaultSchema: DEFAULT_REGISTRY_SCHEMA,
    applicationName: "agentry-registry",
    description: "The registry's database",
    migrations: migrationTarget,
  });
  return new PostgresRegistryStore(db, schema);
}
