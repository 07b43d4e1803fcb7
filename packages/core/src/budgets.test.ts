import { describe, expect, it } from "vitest";
import { type Budget, budgetApplies, budgetWindow, thresholdsCrossed } from "./budgets.js";

describe("budgets", () => {
  it("keeps UTC days and months, a period ending where the next starts", () => {
    const at = Date.parse("2026-02-28T23:59:59.999Z");
    expect(budgetWindow("day", at)).toEqual({
      startMs: Date.parse("2026-02-28T00:00:00Z"),
      resetsAtMs: Date.parse("2026-03-01T00:00:00Z"),
    });
    expect(budgetWindow("month", at)).toEqual({
      startMs: Date.parse("2026-02-01T00:00:00Z"),
      resetsAtMs: Date.parse("2026-03-01T00:00:00Z"),
    });
    expect(budgetWindow("month", Date.parse("2026-12-31T12:00:00Z")).resetsAtMs).toBe(
      Date.parse("2027-01-01T00:00:00Z"),
    );
    expect(budgetWindow("day", Date.parse("2026-03-01T00:00:00Z")).startMs).toBe(
      Date.parse("2026-03-01T00:00:00Z"),
    );
  });

  it("applies to the account's, the agent's or the key's sends", () => {
    const budget = (agentId: string | null, apiKeyId: string | null): Budget => ({
      id: "bdg_1",
      accountId: "acct_1",
      agentId,
      apiKeyId,
      unit: "tokens",
      period: "day",
      limit: 1,
      createdAt: "",
      updatedAt: "",
    });
    const send = { agentId: "agt_a", apiKeyId: "key_a" };
    expect(budgetApplies(budget(null, null), send)).toBe(true);
    expect(budgetApplies(budget("agt_a", null), send)).toBe(true);
    expect(budgetApplies(budget("agt_b", null), send)).toBe(false);
    expect(budgetApplies(budget(null, "key_b"), send)).toBe(false);
  });

  it("crosses each threshold once", () => {
    expect(thresholdsCrossed(100, 0, 49)).toEqual([]);
    expect(thresholdsCrossed(100, 49, 50)).toEqual([50]);
    expect(thresholdsCrossed(100, 50, 100)).toEqual([80, 100]);
    expect(thresholdsCrossed(100, 100, 150)).toEqual([]);
    expect(thresholdsCrossed(100, 0, 300)).toEqual([50, 80, 100]);
  });
});
