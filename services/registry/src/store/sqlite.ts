import { join } from "node:path";
import { GroupCommit, openSqliteDatabase, sqliteAuditLog } from "@agentry/sqlite";
import type Database from "better-sqlite3";
import { sqliteAccounts } from "./sqlite/accounts.js";
import { sqliteAgents } from "./sqlite/agents.js";
import { sqliteBudgets } from "./sqlite/budgets.js";
import { sqliteConsoleSessions } from "./sqlite/console-sessions.js";
import { sqliteIdempotency } from "./sqlite/idempotency.js";
import { sqliteMembers } from "./sqlite/members.js";
import { sqliteOutbox } from "./sqlite/outbox.js";
import { MIGRATION_TARGET } from "./sqlite-migrations.js";
import type { RegistryStore } from "./types.js";

export const REGISTRY_DB_FILE = "registry.db";

/**
 * The registry in one SQLite file. better-sqlite3 is synchronous, so every method runs to completion inside one
 * call; transactions that read before they write take the write lock first (BEGIN IMMEDIATE), which makes them
 * serial across every connection and process sharing the file.
 */
function sqliteRegistryStore(db: Database.Database): RegistryStore {
  // The writes of concurrent requests share a commit (and its wait for the disk); each is answered after it.
  const group = new GroupCommit(db);
  const outbox = sqliteOutbox(db);
  const audit = sqliteAuditLog(db);
  const idempotency = sqliteIdempotency(db, group);
  const accounts = sqliteAccounts(db, group, idempotency, audit);
  return {
    ...sqliteAgents(db, group, accounts, outbox, idempotency, audit),
    ...accounts.store,
    ...sqliteMembers(db, group, accounts, audit),
    ...sqliteConsoleSessions(db, accounts),
    ...outbox.store,
    ...idempotency.store,
    ...sqliteBudgets(db, audit),
    async listAuditEvents(accountId, query) {
      return audit.list(accountId, query);
    },
    async pruneAuditEvents(before, limit) {
      return group.run(() => audit.prune(before, limit));
    },
    async close() {
      group.flushNow();
      if (db.open) db.close();
    },
  };
}

/** Opens (creating if needed) the registry database at `<dataDir>/registry.db`. */
export function openSqliteRegistryStore(options: { dataDir: string }): RegistryStore {
  return sqliteRegistryStore(openSqliteDatabase(join(options.dataDir, REGISTRY_DB_FILE), MIGRATION_TARGET));
}
