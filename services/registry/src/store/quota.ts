import { effectiveLimits } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { AccountRecord } from "./types.js";

/**
 * Refuses a create when the account already holds its `maxAgents` (docs/api/limits-and-quotas.md, "Quotas"). Stores
 * count the account's agents inside the transaction that inserts the new one, once no other create of the account
 * can commit in between, so that simultaneous creates never exceed the limit.
 */
export function assertAgentQuota(
  account: Pick<AccountRecord, "tier" | "limitOverrides">,
  agents: number,
): void {
  const { maxAgents } = effectiveLimits(account.tier, account.limitOverrides);
  if (agents < maxAgents) return;
  throw new AppError(
    "INSUFFICIENT_QUOTA",
    `The account already holds its maximum of ${maxAgents} agents (limit maxAgents). Delete an agent first.`,
  );
}
