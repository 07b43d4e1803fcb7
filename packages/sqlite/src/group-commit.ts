import type Database from "better-sqlite3";

interface Pending {
  work: () => unknown;
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes committed together: each write given to `run` waits for the end of the current turn of the event loop,
 * then every write gathered by then runs in one transaction (BEGIN IMMEDIATE), each in a savepoint of its own,
 * and is answered only once that transaction has committed. With `synchronous = FULL` a commit waits for the
 * disk; one commit for the writes of many concurrent requests is what lets them through at the rate the CPU
 * allows rather than one disk flush each, and every answered write is still on disk.
 *
 * A write that throws is rolled back to its savepoint and rejects alone; the others commit. A transaction that
 * cannot begin or commit (another process holding the lock past the busy timeout, a full disk) rejects every
 * write of the batch, none of which is then in the file.
 *
 * A write given `durable: false` is bookkeeping a power loss may take back (a lease, a last-used time): when a
 * group holds only such writes it commits without waiting for the disk (`synchronous = NORMAL`, which in WAL mode
 * still survives the process being killed); the next durable commit takes them to disk with it.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private readonly batch: (items: readonly Pending[]) => { value?: unknown; error?: unknown }[];
  private readonly db: Database.Database;

  constructor(db: Database.Database) {
    this.db = db;
    const savepointed = db.transaction((work: () => unknown) => work());
    this.batch = db.transaction((items: readonly Pending[]) =>
      items.map((item) => {
        try {
          return { value: savepointed(item.work) };
        } catch (error) {
          // An error SQLite ends the whole transaction for (it rolled back by itself) fails the batch.
          if (!db.inTransaction) throw error;
          return { error };
        }
      }),
    ).immediate;
  }

  /** Runs `work` (synchronous statements) in the next group's transaction; resolves once that has committed. */
  run<T>(work: () => T, options: { durable?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const durable = options.durable ?? true;
      this.pending.push({ work, durable, resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Commits what is waiting now, before the database is closed. */
  flushNow(): void {
    if (this.pending.length > 0) this.flush();
  }

  private flush(): void {
    const items = this.pending;
    if (items.length === 0) return;
    this.pending = [];
    let outcomes: { value?: unknown; error?: unknown }[];
    const relaxed = !items.some((item) => item.durable);
    try {
      if (relaxed) this.db.pragma("synchronous = NORMAL");
      outcomes = this.batch(items);
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    } finally {
      if (relaxed) this.db.pragma("synchronous = FULL");
    }
    outcomes.forEach((outcome, i) => {
      const item = items[i]!;
      if ("error" in outcome) item.reject(outcome.error);
      else item.resolve(outcome.value);
    });
  }
}
