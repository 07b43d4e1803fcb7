import { describe, expect, it } from "vitest";
import {
  type AttemptFailure,
  isUnsentConnectionError,
  parseRetryAfter,
  type RetrySafety,
  retryDelayMs,
  shouldRetry,
} from "../src/retry.js";

const status = (code: number, errorCode?: string): AttemptFailure => ({
  kind: "status",
  status: code,
  code: errorCode,
});

describe("shouldRetry", () => {
  const cases: [string, AttemptFailure, Record<RetrySafety, boolean>][] = [
    ["429", status(429, "RATE_LIMIT_EXCEEDED"), { idempotent: true, unsafe: true, message: true }],
    ["408", status(408), { idempotent: true, unsafe: true, message: true }],
    [
      "409 AGENT_INACTIVE",
      status(409, "AGENT_INACTIVE"),
      { idempotent: false, unsafe: false, message: false },
    ],
    ["409 other", status(409, "SOMETHING"), { idempotent: true, unsafe: false, message: false }],
    ["500", status(500, "INTERNAL_ERROR"), { idempotent: true, unsafe: false, message: false }],
    ["502 MODEL_ERROR", status(502, "MODEL_ERROR"), { idempotent: true, unsafe: false, message: false }],
    ["503", status(503, "AGENT_UNAVAILABLE"), { idempotent: true, unsafe: false, message: true }],
    ["400", status(400, "INVALID_REQUEST"), { idempotent: false, unsafe: false, message: false }],
    ["401", status(401, "UNAUTHORIZED"), { idempotent: false, unsafe: false, message: false }],
    ["403 quota", status(403, "INSUFFICIENT_QUOTA"), { idempotent: false, unsafe: false, message: false }],
    ["404", status(404, "AGENT_NOT_FOUND"), { idempotent: false, unsafe: false, message: false }],
    ["timeout", { kind: "timeout" }, { idempotent: true, unsafe: false, message: false }],
    [
      "connection unsent",
      { kind: "connection", unsent: true },
      { idempotent: true, unsafe: true, message: true },
    ],
    [
      "connection broken",
      { kind: "connection", unsent: false },
      { idempotent: true, unsafe: false, message: false },
    ],
  ];
  for (const [name, failure, expected] of cases) {
    it(`${name}: ${JSON.stringify(expected)}`, () => {
      for (const safety of ["idempotent", "unsafe", "message"] as const)
        expect(shouldRetry(failure, safety), safety).toBe(expected[safety]);
    });
  }
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

describe("isUnsentConnectionError", () => {
  const nodeError = (code: string) =>
    new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });

  it("recognises a connection that was never made", () => {
    for (const code of ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"])
      expect(isUnsentConnectionError(nodeError(code)), code).toBe(true);
    const bothAddresses = Object.assign(
      new AggregateError([nodeError("ECONNREFUSED").cause, nodeError("ECONNREFUSED").cause]),
      {
        code: "ECONNREFUSED",
      },
    );
    expect(isUnsentConnectionError(new TypeError("fetch failed", { cause: bothAddresses }))).toBe(true);
  });

  it("does not claim more than it knows", () => {
    for (const code of ["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"])
      expect(isUnsentConnectionError(nodeError(code)), code).toBe(false);
    // A browser's fetch says only "Failed to fetch".
    expect(isUnsentConnectionError(new TypeError("Failed to fetch"))).toBe(false);
    const mixed = new AggregateError([
      Object.assign(new Error("a"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("b"), { code: "ECONNRESET" }),
    ]);
    expect(isUnsentConnectionError(new TypeError("fetch failed", { cause: mixed }))).toBe(false);
  });
});
