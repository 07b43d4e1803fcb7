import type Database from "better-sqlite3";

/**
 * Runs a write that commits on its own without waiting for the disk (`synchronous = NORMAL` for its commit, then
 * the connection's FULL again): bookkeeping that a power loss may take back. In WAL mode such a commit survives
 * the process being killed, and the connection's next durable commit takes it to disk with its own.
 */
export type RelaxedWrite = <T>(write: () => T) => T;

export function relaxedWrites(db: Database.Database): RelaxedWrite {
  const normal = db.prepare("PRAGMA synchronous = NORMAL");
  // The setting of every connection (openSqliteDatabase).
  const full = db.prepare("PRAGMA synchronous = FULL");
  return (write) => {
    normal.run();
    try {
      return write();
    } finally {
      full.run();
    }
  };
}
