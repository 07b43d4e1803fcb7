import { join } from "node:path";
import { openSqliteDatabase } from "@agentry/sqlite";
import { MIGRATION_TARGET } from "./sqlite-migrations.js";
import type { Clock, ConnectorStore } from "./types.js";

export const CONNECTORS_DB_FILE = "connectors.db";

/** The connectors store in `<dataDir>/connectors.db`; several processes on one file share its leases. */
export function openSqliteConnectorStore(options: { dataDir: string; clock?: Clock }): ConnectorStore {
  const db = openSqliteDatabase(join(options.dataDir, CONNECTORS_DB_FILE), MIGRATION_TARGET);
  const clock = options.clock ?? Date.now;
  const takeLease = db.prepare(
    `INSERT INTO leases (key, holder, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
     WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`,
  );
  const leaseHolder = db.prepare<[string], { holder: string }>("SELECT holder FROM leases WHERE key = ?");
  const dropLease = db.prepare("DELETE FROM leases WHERE key = ? AND holder = ?");
  const readCursor = db.prepare<[string], { value: string }>("SELECT value FROM cursors WHERE key = ?");
  const writeCursor = db.prepare(
    `INSERT INTO cursors (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  const insertAnswered = db.prepare(
    "INSERT INTO answered (message_key, agent_id, answered_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
  );
  const readAnswered = db.prepare<[string], { one: number }>(
    "SELECT 1 AS one FROM answered WHERE message_key = ?",
  );
  const deleteAnswered = db.prepare<[string]>("DELETE FROM answered WHERE message_key = ?");
  // Taking and reading back in one transaction: the upsert's WHERE leaves another's live lease as it is.
  const acquire = db.transaction((key: string, holder: string, ttlMs: number) => {
    const now = clock();
    takeLease.run(key, holder, now + ttlMs, now);
    return leaseHolder.get(key)?.holder === holder;
  });
  let closed = false;
  return {
    acquireLease: async (key, holder, ttlMs) => acquire.immediate(key, holder, ttlMs),
    releaseLease: async (key, holder) => {
      dropLease.run(key, holder);
    },
    cursor: async (key) => readCursor.get(key)?.value,
    setCursor: async (key, value) => {
      writeCursor.run(key, value, new Date(clock()).toISOString());
    },
    markAnswered: async (messageKey, agentId) =>
      insertAnswered.run(messageKey, agentId, new Date(clock()).toISOString()).changes === 1,
    releaseAnswered: async (messageKey) => {
      deleteAnswered.run(messageKey);
    },
    answered: async (messageKey) => readAnswered.get(messageKey) !== undefined,
    ping: async () => {
      try {
        db.prepare("SELECT 1").get();
        return true;
      } catch {
        return false;
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}
