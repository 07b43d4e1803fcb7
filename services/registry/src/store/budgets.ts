import { BUDGET_BOUNDS, type Budget, type BudgetPeriod, type BudgetUnit } from "@agentry/core";
import { AppError } from "@agentry/errors";

/** A budget to store: `agentId` and `apiKeyId` must be the account's, and at most one of them is set. */
export interface NewBudget {
  accountId: string;
  agentId: string | null;
  apiKeyId: string | null;
  unit: BudgetUnit;
  period: BudgetPeriod;
  limit: number;
}

/** What an update may change; absent fields are kept. */
export interface BudgetPatch {
  limit?: number;
  period?: BudgetPeriod;
}

/**
 * Spend budgets. An agent's budgets go with the agent; a key's stay after it is revoked (nothing spends with it).
 */
export interface BudgetStore {
  /**
   * Inserts a budget, checking in the same transaction that the agent or key it names is the account's (else
   * AppError AGENT_NOT_FOUND or API_KEY_NOT_FOUND) and that the account holds fewer than
   * `BUDGET_BOUNDS.maxPerAccount` budgets (else INSUFFICIENT_QUOTA), so simultaneous creates never exceed it.
   */
  createBudget(input: NewBudget): Promise<Budget>;
  /** The account's budgets, oldest first. */
  listBudgets(accountId: string): Promise<Budget[]>;
  /** Null when the account has no such budget. */
  updateBudget(accountId: string, id: string, patch: BudgetPatch): Promise<Budget | null>;
  /** False when the account has no such budget. */
  deleteBudget(accountId: string, id: string): Promise<boolean>;
}

/** Over the account's maximum of budgets: the error both stores throw. */
export function budgetQuotaExceeded(): AppError {
  return new AppError(
    "INSUFFICIENT_QUOTA",
    `The account already holds its maximum of ${BUDGET_BOUNDS.maxPerAccount} budgets; delete one first.`,
  );
}

export function budgetTargetMissing(input: NewBudget): AppError {
  return input.agentId !== null
    ? new AppError("AGENT_NOT_FOUND", `Agent ${input.agentId} does not exist.`)
    : new AppError("API_KEY_NOT_FOUND", `API key ${input.apiKeyId} does not exist.`);
}
