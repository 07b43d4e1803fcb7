import { describe, expect, it } from "vitest";
import {
  type AttemptOutcome,
  DEFAULT_RETRY_SCHEDULE_MS,
  FAILING_DISABLES_AFTER_MS,
  jittered,
  parseRetrySchedule,
  settleAttempt,
} from "./schedule.js";

const answered = (status: number): AttemptOutcome => ({
  kind: "answered",
  status,
  durationMs: 1,
  body: new Uint8Array(),
});
const NOW = Date.parse("2026-01-01T00:00:00.000Z");
const settle = (
  outcome: AttemptOutcome,
  { retryStep = 0 as number | null, failingSince = null as string | null, enabled = true } = {},
) =>
  settleAttempt({ enabled, failingSince }, { retryStep }, outcome, {
    now: NOW,
    schedule: [1000, 2000],
    random: () => 0.5,
  });

describe("the retry schedule", () => {
  it("defaults to 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
    expect(parseRetrySchedule("5s,5m,30m,2h,5h,10h,10h")).toEqual(DEFAULT_RETRY_SCHEDULE_MS);
  });

  it("parses WEBHOOK_RETRY_SCHEDULE and names a bad item", () => {
    expect(parseRetrySchedule("1s, 2s,4s")).toEqual([1000, 2000, 4000]);
    expect(parseRetrySchedule("250ms,1.5s,1d")).toEqual([250, 1500, 86_400_000]);
    expect(parseRetrySchedule("")).toEqual([]);
    expect(() => parseRetrySchedule("1s,soon")).toThrow('"soon" is not a delay');
    expect(() => parseRetrySchedule("-1s")).toThrow(RangeError);
  });

  it("jitters each delay within ±20 %", () => {
    expect(jittered(1000, () => 0)).toBe(800);
    expect(jittered(1000, () => 0.5)).toBe(1000);
    expect(jittered(1000, () => 0.999999)).toBe(1200);
  });
});

describe("settleAttempt", () => {
  it("counts 2xx as success and ends a run of failures", () => {
    for (const status of [200, 201, 204, 299]) {
      expect(settle(answered(status), { failingSince: "2025-12-31T00:00:00.000Z" })).toEqual({
        status: "succeeded",
        responseStatus: status,
        error: null,
        retry: null,
        failingSince: null,
        disable: null,
      });
    }
  });

  it("fails anything else, redirects included, and schedules the next step of the schedule", () => {
    for (const status of [301, 302, 400, 404, 429, 500, 503]) {
      const settled = settle(answered(status));
      expect(settled).toMatchObject({ status: "failed", responseStatus: status, disable: null });
      expect(settled.error).toBe(`the endpoint answered HTTP ${status}`);
      expect(settled.retry).toEqual({ retryStep: 1, dueAt: new Date(NOW + 1000).toISOString() });
      expect(settled.failingSince).toBe(new Date(NOW).toISOString());
    }
    const unanswered = settle(
      { kind: "unanswered", error: "no answer within 10 s", durationMs: 10_000 },
      { retryStep: 1 },
    );
    expect(unanswered).toMatchObject({ responseStatus: null, error: "no answer within 10 s" });
    expect(unanswered.retry).toEqual({ retryStep: 2, dueAt: new Date(NOW + 2000).toISOString() });
  });

  it("stops retrying at the end of the schedule, for a redelivery, and for a disabled endpoint", () => {
    expect(settle(answered(500), { retryStep: 2 }).retry).toBeNull();
    expect(settle(answered(500), { retryStep: null }).retry).toBeNull();
    expect(settle(answered(500), { enabled: false }).retry).toBeNull();
  });

  it("disables at 410 Gone, and after 5 days of failures", () => {
    expect(settle(answered(410))).toMatchObject({ disable: "The endpoint answered 410 Gone.", retry: null });
    const since = (ms: number) => new Date(NOW - ms).toISOString();
    expect(settle(answered(500), { failingSince: since(FAILING_DISABLES_AFTER_MS - 1) }).disable).toBeNull();
    const disabled = settle(answered(500), { failingSince: since(FAILING_DISABLES_AFTER_MS) });
    expect(disabled.disable).toMatch(/since .* \(5 days\)/);
    expect(disabled.retry).toBeNull();
  });
});
