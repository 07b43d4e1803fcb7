/**
 * When deliveries are retried, and what an attempt's outcome does to its endpoint (docs/api/webhooks.md, "Retries").
 * The stores apply these rules inside the transaction that records an outcome; nothing else decides them.
 */

/** Delays before the 2nd to 8th attempts of an event at an endpoint. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** An endpoint whose every attempt has failed for this long is disabled. */
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 3_600_000;

/** Each delay is drawn from ±20 % around its value, so endpoints that failed together do not retry together. */
export const RETRY_JITTER = 0.2;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses WEBHOOK_RETRY_SCHEDULE: delays separated by commas, each a number and a unit (`ms`, `s`, `m`, `h`,
 * `d`), e.g. `1s,2s,4s`. An empty schedule means no retries. Throws a RangeError naming the bad item.
 */
export function parseRetrySchedule(text: string): number[] {
  const items = text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  return items.map((item) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(item);
    if (!match)
      throw new RangeError(`${JSON.stringify(item)} is not a delay such as 500ms, 5s, 30m, 2h or 1d`);
    return Math.round(Number(match[1]) * (UNIT_MS[match[2]!] ?? 1));
  });
}

/** A delay with jitter; `random` is in [0, 1). */
export function jittered(delayMs: number, random: () => number = Math.random): number {
  return Math.max(0, Math.round(delayMs * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random())));
}

/** What an attempt came to, as the worker saw it. */
export type AttemptOutcome =
  | { kind: "answered"; status: number; durationMs: number; body: Uint8Array }
  /** No answer: refused by the outbound guard, unreachable, timed out, reset. `error` is safe to show. */
  | { kind: "unanswered"; error: string; durationMs: number };

/** The endpoint's state that the rules read. */
export interface EndpointHealth {
  enabled: boolean;
  /** When its current run of failures began (ISO 8601); null after a success. */
  failingSince: string | null;
}

/** The attempt's place in its chain of retries. */
export interface AttemptPlace {
  /**
   * The index in the retry schedule of the retry that follows a failure of this attempt; null when a failure
   * is not retried (a redelivery).
   */
  retryStep: number | null;
}

export interface Settlement {
  status: "succeeded" | "failed";
  responseStatus: number | null;
  error: string | null;
  /** The next attempt of the event at this endpoint, if any: its place and when it is due. */
  retry: { retryStep: number | null; dueAt: string } | null;
  /** The endpoint's run of failures after this outcome. */
  failingSince: string | null;
  /** When set, the endpoint is disabled for this reason (its pending attempts fail with it). */
  disable: string | null;
}

export interface SettleOptions {
  now: number;
  schedule: readonly number[];
  random?: () => number;
}

/**
 * The consequences of an attempt's outcome: 2xx succeeds and ends the endpoint's run of failures; 410 Gone
 * disables the endpoint; anything else fails and is retried per the schedule while the endpoint is enabled,
 * and an endpoint failing for 5 days straight is disabled.
 */
export function settleAttempt(
  endpoint: EndpointHealth,
  place: AttemptPlace,
  outcome: AttemptOutcome,
  options: SettleOptions,
): Settlement {
  const nowIso = new Date(options.now).toISOString();
  const responseStatus = outcome.kind === "answered" ? outcome.status : null;
  if (responseStatus !== null && responseStatus >= 200 && responseStatus < 300) {
    return {
      status: "succeeded",
      responseStatus,
      error: null,
      retry: null,
      failingSince: null,
      disable: null,
    };
  }
  const error = outcome.kind === "answered" ? `the endpoint answered HTTP ${outcome.status}` : outcome.error;
  const failingSince = endpoint.failingSince ?? nowIso;
  let disable: string | null = null;
  if (responseStatus === 410) {
    disable = "The endpoint answered 410 Gone.";
  } else if (options.now - Date.parse(failingSince) >= FAILING_DISABLES_AFTER_MS) {
    disable = `Every delivery has failed since ${failingSince} (5 days).`;
  }
  const step = place.retryStep;
  const retry =
    endpoint.enabled && disable === null && step !== null && step < options.schedule.length
      ? {
          retryStep: step + 1,
          dueAt: new Date(options.now + jittered(options.schedule[step]!, options.random)).toISOString(),
        }
      : null;
  return { status: "failed", responseStatus, error, retry, failingSince, disable };
}

/** Why an attempt whose worker stopped before recording its outcome is failed; it is attempted again at once. */
export const INTERRUPTED_ERROR =
  "the delivery worker stopped before recording the outcome; the event is attempted again";

/** Why pending attempts fail when their endpoint is disabled. */
export const ENDPOINT_DISABLED_ERROR = "the endpoint was disabled before this attempt";
