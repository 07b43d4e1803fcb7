import { AppError } from "@agentry/errors";

export type AbortCause = "cancelled" | "timeout" | "first-token-timeout";

export interface DeadlineLimits {
  /** The whole provider call. */
  totalMs: number;
  /** Until the first text of a streamed reply; unset for calls that answer all at once. */
  firstTokenMs?: number;
}

/**
 * The one signal a provider call runs under. It aborts when the caller goes away, when the call takes longer
 * than its limit, or when a stream shows no text in time, and remembers which, because an aborted provider
 * call cannot tell: it throws a generic abort or, mid-stream, just ends.
 */
export class CallDeadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private cause: AbortCause | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private firstTokenTimer: NodeJS.Timeout | undefined;
  private readonly onCallerAbort = () => this.abort("cancelled");

  constructor(
    private readonly caller: AbortSignal,
    private readonly limits: DeadlineLimits,
  ) {
    this.signal = this.controller.signal;
    if (caller.aborted) this.abort("cancelled");
    else caller.addEventListener("abort", this.onCallerAbort, { once: true });
    this.timers.push(setTimeout(() => this.abort("timeout"), limits.totalMs));
    if (limits.firstTokenMs !== undefined) {
      this.firstTokenTimer = setTimeout(() => this.abort("first-token-timeout"), limits.firstTokenMs);
    }
  }

  /** The reply has started: the first-token limit no longer applies. */
  firstToken(): void {
    clearTimeout(this.firstTokenTimer);
  }

  get abortCause(): AbortCause | undefined {
    return this.cause;
  }

  /** The public error for an aborted call; undefined while it has not aborted. */
  abortError(provider: string): AppError | undefined {
    switch (this.cause) {
      case undefined:
        return undefined;
      case "cancelled":
        return new AppError("AGENT_UNAVAILABLE", "The request was cancelled before the reply was complete.");
      case "timeout":
        return new AppError(
          "AGENT_UNAVAILABLE",
          `The ${provider} provider did not complete the reply within ${seconds(this.limits.totalMs)}. Retry shortly.`,
        );
      case "first-token-timeout":
        return new AppError(
          "AGENT_UNAVAILABLE",
          `The ${provider} provider did not start answering within ${seconds(this.limits.firstTokenMs ?? 0)}. Retry shortly.`,
        );
    }
  }

  /** Abandons the call: the caller stopped waiting for it. */
  cancel(): void {
    this.abort("cancelled");
  }

  /** Stops the timers; call once the provider call is over, whatever its outcome. */
  dispose(): void {
    for (const timer of this.timers) clearTimeout(timer);
    clearTimeout(this.firstTokenTimer);
    this.caller.removeEventListener("abort", this.onCallerAbort);
  }

  private abort(cause: AbortCause): void {
    if (this.cause !== undefined) return;
    this.cause = cause;
    this.dispose();
    // No custom reason: providers see the standard AbortError, and `abortCause` says why.
    this.controller.abort();
  }
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${ms / 1000} s`;
}
