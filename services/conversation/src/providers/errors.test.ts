import { describe, expect, it } from "vitest";
import { isLastingFailure, refusalError, retryAfterSeconds, sanitise } from "./errors.js";

describe("retryAfterSeconds", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("reads retry-after-ms, retry-after seconds and retry-after dates, rounding up", () => {
    expect(retryAfterSeconds({ "retry-after-ms": "250" }, now)).toBe(1);
    expect(retryAfterSeconds({ "retry-after": "7" }, now)).toBe(7);
    expect(retryAfterSeconds({ "retry-after": "1.2" }, now)).toBe(2);
    expect(retryAfterSeconds({ "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" }, now)).toBe(30);
    expect(retryAfterSeconds({ "retry-after": "Thu, 01 Jan 2025 00:00:30 GMT" }, now)).toBe(0);
  });
  it("ignores missing and malformed values", () => {
    expect(retryAfterSeconds({}, now)).toBeUndefined();
    expect(retryAfterSeconds({ "retry-after": "soon" }, now)).toBeUndefined();
    expect(retryAfterSeconds({ "retry-after": "-3" }, now)).toBeUndefined();
  });
});

describe("refusalError", () => {
  const refusal = (status: number | undefined, type?: string) =>
    refusalError("anthropic", "m", { status, headers: undefined, type, message: undefined });
  it("treats errors inside a started stream by their type", () => {
    expect(refusal(undefined, "overloaded_error").code).toBe("AGENT_UNAVAILABLE");
    expect(refusal(undefined, undefined).code).toBe("AGENT_UNAVAILABLE");
    expect(refusal(undefined, "invalid_request_error").code).toBe("MODEL_ERROR");
  });
  it("treats other 4xx as lasting and 408/409 as transient", () => {
    expect(refusal(402).code).toBe("MODEL_ERROR");
    expect(refusal(413).code).toBe("MODEL_ERROR");
    expect(refusal(408).code).toBe("AGENT_UNAVAILABLE");
    expect(refusal(409).code).toBe("AGENT_UNAVAILABLE");
    expect(refusal(502).code).toBe("AGENT_UNAVAILABLE");
  });
});

describe("isLastingFailure", () => {
  it("is true for MODEL_ERROR only", () => {
    expect(isLastingFailure("MODEL_ERROR")).toBe(true);
    expect(isLastingFailure("AGENT_UNAVAILABLE")).toBe(false);
    expect(isLastingFailure("INVALID_REQUEST")).toBe(false);
  });
});

describe("sanitise", () => {
  it("masks configured secrets and anything shaped like a key or token, and bounds the length", () => {
    const text = sanitise(`key my-secret-value, sk-ant-api03-abcdefgh, Bearer xyz, tok ${"A".repeat(48)}`, [
      "my-secret-value",
    ]);
    expect(text).not.toMatch(/my-secret-value|sk-ant|xyz|AAAA/);
    expect(sanitise("x".repeat(1000)).length).toBeLessThanOrEqual(301);
  });
});
