import { AppError } from "@agentry/errors";

interface Waiter {
  resolve(release: () => void): void;
  reject(error: unknown): void;
}

/** Until a turn has been measured, the wait a full queue announces per request ahead. */
const INITIAL_TURN_MS = 2_000;

/**
 * Turns on the one model context: one generation at a time, up to `maxWaiting` more waiting in order. A
 * request that finds the queue full is refused at once with AGENT_UNAVAILABLE and a Retry-After estimated
 * from how long recent turns took, rather than waiting without bound.
 */
export class TurnQueue {
  private busy = false;
  private readonly waiting: Waiter[] = [];
  /** Moving average of how long a turn holds the context, for Retry-After. */
  private turnMs = INITIAL_TURN_MS;

  constructor(private readonly maxWaiting: number) {}

  /** Requests generating (0 or 1) and waiting. */
  get size(): { active: number; waiting: number } {
    return { active: this.busy ? 1 : 0, waiting: this.waiting.length };
  }

  /**
   * Resolves when it is the caller's turn, to the function that ends the turn (call it exactly once). Rejects
   * with AGENT_UNAVAILABLE when the queue is full, and with the signal's reason when it aborts while waiting.
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(this.release());
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(this.fullError());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (release) => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
        reject,
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(): () => void {
    const startedAt = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.turnMs = 0.7 * this.turnMs + 0.3 * (performance.now() - startedAt);
      const next = this.waiting.shift();
      if (next) next.resolve(this.release());
      else this.busy = false;
    };
  }

  private fullError(): AppError {
    const retryAfterSeconds = Math.max(1, Math.ceil(((this.waiting.length + 1) * this.turnMs) / 1000));
    return new AppError(
      "AGENT_UNAVAILABLE",
      `The local model is busy: ${this.waiting.length} requests are already waiting. Retry shortly.`,
      { retryAfterSeconds },
    );
  }
}
