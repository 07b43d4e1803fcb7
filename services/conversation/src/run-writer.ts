import type { Logger } from "@agentry/logging";
import type { ConversationStore, RunWrite } from "./store/types.js";

/**
 * How soon a new log is written: a moment after the provider call has started, so that the commit does not sit
 * between a fast provider's first text and the caller, and well before any caller could ask another process for it.
 */
const SOON_MS = 2;

/**
 * Commits the writes of every log of this process together: at most `flushMs` after the first write waiting, in
 * one transaction (one commit, one fsync on SQLite, however many streams are running), never on the path from a
 * provider's text to the caller. A write is a thunk, read when its batch is committed, so that a run's events
 * written meanwhile go with it.
 */
export class GroupWriter {
  private pending: (() => RunWrite | null)[] = [];
  private committed: ((ok: boolean) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<ConversationStore, "writeRuns">,
    private readonly logger: Logger,
    private readonly flushMs: number,
  ) {}

  /**
   * Queues a write; answers whether its batch was committed. `soon`: within `SOON_MS` rather than after `flushMs`
   * (a new log, so that another process can find it at once; its provider call is under way).
   */
  submit(write: () => RunWrite | null, soon = false): Promise<boolean> {
    this.pending.push(write);
    const done = new Promise<boolean>((resolve) => this.committed.push(resolve));
    if (soon && !this.immediate) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.immediate = setTimeout(() => this.flush(), SOON_MS);
    } else if (!this.immediate) {
      this.timer ??= setTimeout(() => this.flush(), this.flushMs);
    }
    return done;
  }

  /** Commits what waits, and resolves once every batch is committed. */
  async drain(): Promise<void> {
    this.flush();
    await this.writing;
  }

  private flush(): void {
    clearTimeout(this.timer);
    clearTimeout(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    const thunks = this.pending;
    const committed = this.committed;
    if (thunks.length === 0) return;
    this.pending = [];
    this.committed = [];
    this.writing = this.writing.then(async () => {
      const writes = thunks.map((thunk) => thunk()).filter((write) => write !== null);
      let ok = true;
      try {
        await this.store.writeRuns(writes);
      } catch (error) {
        ok = false;
        this.logger.warn({ err: error, writes: writes.length }, "could not write message logs");
      }
      for (const resolve of committed) resolve(ok);
    });
  }
}
