import { AppError } from "@agentry/errors";
import { describe, expect, it } from "vitest";
import { assertAgentQuota } from "./quota.js";

function refusal(check: () => void): AppError {
  try {
    check();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("the create was allowed");
}

describe("assertAgentQuota", () => {
  it("allows creates below the tier's maxAgents and refuses the one that would pass it", () => {
    expect(() => assertAgentQuota({ tier: "standard", limitOverrides: {} }, 99)).not.toThrow();
    const error = refusal(() => assertAgentQuota({ tier: "standard", limitOverrides: {} }, 100));
    expect(error.code).toBe("INSUFFICIENT_QUOTA");
    expect(error.message).toBe(
      "The account already holds its maximum of 100 agents (limit maxAgents). Delete an agent first.",
    );
  });

  it("takes the account's own maxAgents over its tier's", () => {
    const account = { tier: "enterprise" as const, limitOverrides: { maxAgents: 2 } };
    expect(() => assertAgentQuota(account, 1)).not.toThrow();
    expect(refusal(() => assertAgentQuota(account, 2)).message).toContain("maximum of 2 agents");
    // Over the limit already (it was lowered): still refused, never allowed again until below it.
    expect(refusal(() => assertAgentQuota(account, 5)).code).toBe("INSUFFICIENT_QUOTA");
  });

  it("refuses every create with a maxAgents of 0", () => {
    expect(
      refusal(() => assertAgentQuota({ tier: "enterprise", limitOverrides: { maxAgents: 0 } }, 0)).code,
    ).toBe("INSUFFICIENT_QUOTA");
  });
});
