import type { Logger } from "pino";

/** Told, call by call, whether a dependency answers. `OutageLog` is the one that logs it. */
export interface Availability {
  failed(cause: unknown): void;
  recovered(): void;
}

export interface OutageLogOptions {
  /** How often a summary line is written while the outage lasts (default 30 s). */
  summaryEveryMs?: number;
  /**
   * How long after its last failure an outage must stay without failures to be over (default 1 s). A restart
   * breaks connections one by one, so successes and failures mix for a moment; that is one outage, not several.
   */
  settleMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

/**
 * The log of one dependency's outages: a line when it starts (error level, with the first cause), a line with the
 * count of failures at most every `summaryEveryMs` while it lasts (warn), and a line when it ends (info), instead
 * of one line per failed request. It ends at the first success `settleMs` after the last failure, or, when a
 * success came sooner, once `settleMs` has passed without another failure. Callers report every failure and
 * every success; both are cheap when nothing changes, so they can be called on every request.
 */
export class OutageLog implements Availability {
  private readonly summaryEveryMs: number;
  private readonly settleMs: number;
  private readonly now: () => number;
  private startedAt: number | undefined;
  private lastFailureAt = 0;
  private settling: NodeJS.Timeout | undefined;
  private lastSummaryAt = 0;
  private failures = 0;
  private failuresSinceSummary = 0;

  constructor(
    private readonly logger: Logger,
    /** What is out, as operators name it: `postgres`, `redis`, `registry`, `provider openai`. */
    readonly dependency: string,
    options: OutageLogOptions = {},
  ) {
    this.summaryEveryMs = options.summaryEveryMs ?? 30_000;
    this.settleMs = options.settleMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** Whether the last report was a failure. */
  get down(): boolean {
    return this.startedAt !== undefined;
  }

  failed(cause?: unknown): void {
    const at = this.now();
    this.lastFailureAt = at;
    clearTimeout(this.settling);
    this.settling = undefined;
    this.failures += 1;
    this.failuresSinceSummary += 1;
    if (this.startedAt === undefined) {
      this.startedAt = at;
      this.lastSummaryAt = at;
      this.failuresSinceSummary = 0;
      this.logger.error(
        { dependency: this.dependency, err: cause },
        `${this.dependency} unavailable: failing requests that need it until it returns`,
      );
      return;
    }
    if (at - this.lastSummaryAt >= this.summaryEveryMs) {
      this.logger.warn(
        {
          dependency: this.dependency,
          failures: this.failures,
          failuresSinceLastLine: this.failuresSinceSummary,
          downForMs: at - this.startedAt,
          ...(cause instanceof Error ? { lastError: cause.message } : {}),
        },
        `${this.dependency} still unavailable`,
      );
      this.lastSummaryAt = at;
      this.failuresSinceSummary = 0;
    }
  }

  recovered(): void {
    if (this.startedAt === undefined) return;
    const quietFor = this.now() - this.lastFailureAt;
    if (quietFor < this.settleMs) {
      // Ended unless another failure comes first; checked again then.
      this.settling ??= setTimeout(
        () => {
          this.settling = undefined;
          this.recovered();
        },
        this.settleMs - quietFor + 1,
      );
      this.settling.unref();
      return;
    }
    this.end();
  }

  private end(): void {
    if (this.startedAt === undefined) return;
    clearTimeout(this.settling);
    this.settling = undefined;
    this.logger.info(
      { dependency: this.dependency, failures: this.failures, downForMs: this.now() - this.startedAt },
      `${this.dependency} available again`,
    );
    this.startedAt = undefined;
    this.failures = 0;
    this.failuresSinceSummary = 0;
  }
}
