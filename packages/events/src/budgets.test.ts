import { isId, timeOfId } from "@agentry/core";
import { describe, expect, it } from "vitest";
import { budgetThresholdEventId } from "./budgets.js";

describe("budgetThresholdEventId", () => {
  it("is one event id per budget, period and threshold, dated at the period's start", () => {
    const start = Date.parse("2026-11-01T00:00:00Z");
    const id = budgetThresholdEventId("bdg_01", start, 80);
    expect(isId("event", id)).toBe(true);
    expect(budgetThresholdEventId("bdg_01", start, 80)).toBe(id);
    expect(budgetThresholdEventId("bdg_01", start, 100)).not.toBe(id);
    expect(budgetThresholdEventId("bdg_02", start, 80)).not.toBe(id);
    expect(budgetThresholdEventId("bdg_01", Date.parse("2026-12-01T00:00:00Z"), 80)).not.toBe(id);
    expect(timeOfId(id)).toBe(start);
  });
});
