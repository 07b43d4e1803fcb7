import { describe, expect, it } from "vitest";
import {
  type AttemptFailure,
  newIdempotencyKey,
  parseRetryAfter,
  retryDelayMs,
  shouldRetry,
  takesIdempotencyKey,
} from "../src/retry.js";

const status = (code: number, errorCode?: string): AttemptFailure => ({
  kind: "status",
  status: code,
  code: errorCode,
});

describe("shouldRetry", () => {
  const cases: [string, AttemptFailure, boolean][] = [
    ["429", status(429, "RATE_LIMIT_EXCEEDED"), true],
    ["408", status(408), true],
    ["409 AGENT_INACTIVE", status(409, "AGENT_INACTIVE"), false],
    ["409 IDEMPOTENCY_KEY_IN_USE", status(409, "IDEMPOTENCY_KEY_IN_USE"), true],
    ["500", status(500, "INTERNAL_ERROR"), true],
    ["502 MODEL_ERROR", status(502, "MODEL_ERROR"), true],
    ["503", status(503, "AGENT_UNAVAILABLE"), true],
    ["400", status(400, "INVALID_REQUEST"), false],
    ["401", status(401, "UNAUTHORIZED"), false],
    ["403 quota", status(403, "INSUFFICIENT_QUOTA"), false],
    ["404", status(404, "AGENT_NOT_FOUND"), false],
    ["422 IDEMPOTENCY_KEY_REUSED", status(422, "IDEMPOTENCY_KEY_REUSED"), false],
    ["timeout", { kind: "timeout" }, true],
    ["connection", { kind: "connection" }, true],
  ];
  for (const [name, failure, expected] of cases) {
    it(`${name}: ${expected ? "retried" : "final"}`, () => {
      expect(shouldRetry(failure)).toBe(expected);
    });
  }
});

describe("idempotency keys", () => {
  it("go with every method but GET", () => {
    expect(["POST", "PATCH", "DELETE", "PUT"].map(takesIdempotencyKey)).toEqual([true, true, true, true]);
    expect(takesIdempotencyKey("GET")).toBe(false);
  });

  it("are random version 4 UUIDs, also where crypto.randomUUID is missing", () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const keys = new Set(Array.from({ length: 50 }, () => newIdempotencyKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(key).toMatch(uuid);
    // A page served over plain HTTP has crypto.getRandomValues but no randomUUID.
    Object.defineProperty(globalThis.crypto, "randomUUID", { value: undefined, configurable: true });
    try {
      const insecure = new Set(Array.from({ length: 50 }, () => newIdempotencyKey()));
      expect(insecure.size).toBe(50);
      for (const key of insecure) expect(key).toMatch(uuid);
    } finally {
      // The own property hid the prototype's method; without it the method shows again.
      delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID;
    }
  });
});

describe("retryDelayMs", () => {
  it("doubles from 0.5 s up to 8 s, less up to 25 % jitter", () => {
    const none = () => 0;
    const most = () => 1;
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, undefined, 60_000, none))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect(retryDelayMs(0, undefined, 60_000, most)).toBe(375);
    expect(retryDelayMs(4, undefined, 60_000, most)).toBe(6000);
    for (let i = 0; i < 100; i++) {
      const delay = retryDelayMs(1, undefined, 60_000);
      expect(delay).toBeGreaterThanOrEqual(750);
      expect(delay).toBeLessThanOrEqual(1000);
    }
  });

  it("takes Retry-After as it is, without jitter, beyond the backoff's 8 s", () => {
    expect(retryDelayMs(0, 3, 60_000, () => 1)).toBe(3000);
    expect(retryDelayMs(5, 30, 60_000)).toBe(30_000);
    expect(retryDelayMs(0, 0, 60_000)).toBe(0);
  });

  it("never waits longer than maxRetryDelay", () => {
    expect(retryDelayMs(0, 58, 100)).toBe(100);
    expect(retryDelayMs(6, undefined, 1000, () => 0)).toBe(1000);
    expect(retryDelayMs(6, undefined, 0)).toBe(0);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfter("7", now)).toBe(7);
    expect(parseRetryAfter(" 1.5 ", now)).toBe(1.5);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
  });
  it("ignores what it cannot read", () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-3", now)).toBeUndefined();
  });
});
