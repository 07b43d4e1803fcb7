import { AppError, httpStatusOf } from "@agentry/errors";
import { describe, expect, it } from "vitest";
import { LimiterUnavailableError } from "./errors.js";
import { rateLimitHeaders } from "./headers.js";

describe("rateLimitHeaders", () => {
  it("reports limit, remaining and reset in epoch seconds, rounded up", () => {
    expect(
      rateLimitHeaders({
        allowed: true,
        key: "k",
        limit: 60,
        remaining: 59,
        resetAtMs: 1_700_000_000_001,
        retryAfterMs: 0,
      }),
    ).toEqual({
      "X-RateLimit-Limit": "60",
      "X-RateLimit-Remaining": "59",
      "X-RateLimit-Reset": "1700000001",
    });
  });

  it("adds Retry-After in whole seconds, at least 1, when refused", () => {
    const refused = { allowed: false, key: "k", limit: 10, remaining: 0, resetAtMs: 1_700_000_000_000 };
    expect(rateLimitHeaders({ ...refused, retryAfterMs: 1 })["Retry-After"]).toBe("1");
    expect(rateLimitHeaders({ ...refused, retryAfterMs: 1001 })["Retry-After"]).toBe("2");
    expect(rateLimitHeaders({ ...refused, retryAfterMs: 1001 })["X-RateLimit-Reset"]).toBe("1700000000");
  });
});

describe("LimiterUnavailableError", () => {
  it("is an AppError answered as 503 AGENT_UNAVAILABLE with Retry-After", () => {
    const error = new LimiterUnavailableError(1500, new Error("ECONNREFUSED"));
    expect(error).toBeInstanceOf(AppError);
    expect(httpStatusOf(error.code)).toBe(503);
    expect(error.code).toBe("AGENT_UNAVAILABLE");
    expect(error.retryAfterSeconds).toBe(2);
    expect(error.message).not.toContain("ECONNREFUSED");
  });
});
