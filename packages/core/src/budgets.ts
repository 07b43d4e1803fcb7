/**
 * Spend budgets (docs/api/budgets.md): a limit on the tokens or the money an account, one of its keys or one of
 * its agents spends per UTC day or month. The rules here are the store's and the gateway's alike.
 */
export const BUDGET_PERIODS = ["day", "month"] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** `tokens` counts input and output tokens; `usd` what they cost at the configured prices. */
export const BUDGET_UNITS = ["tokens", "usd"] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** The percentages of a budget at which a `budget.threshold` event is sent, once each per period. */
export const BUDGET_THRESHOLDS = [50, 80, 100] as const;

export const BUDGET_BOUNDS = {
  /** Budgets per account. */
  maxPerAccount: 100,
  /** A token budget: a whole number in this range. */
  maxTokens: 1_000_000_000_000,
  /** A money budget, in US dollars: at least a cent, at most this. */
  minUsd: 0.01,
  maxUsd: 10_000_000,
} as const;

/** A budget as the registry keeps it. `limit` is in tokens, or in nano-dollars for `usd`. */
export interface Budget {
  id: string;
  accountId: string;
  /** Set: the budget counts only this agent's sends. */
  agentId: string | null;
  /** Set: the budget counts only the sends made with this key. Neither set: the whole account's. */
  apiKeyId: string | null;
  unit: BudgetUnit;
  period: BudgetPeriod;
  limit: number;
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
}

/** The period a moment falls in: its start, and when the next one starts (when the budget resets), epoch ms. */
export function budgetWindow(period: BudgetPeriod, atMs: number): { startMs: number; resetsAtMs: number } {
  const at = new Date(atMs);
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  if (period === "day") {
    const startMs = Date.UTC(year, month, at.getUTCDate());
    return { startMs, resetsAtMs: startMs + 86_400_000 };
  }
  return { startMs: Date.UTC(year, month, 1), resetsAtMs: Date.UTC(year, month + 1, 1) };
}

/** Whether a send made with this key to this agent counts against the budget. */
export function budgetApplies(budget: Budget, send: { agentId: string; apiKeyId: string }): boolean {
  return (
    (budget.agentId === null || budget.agentId === send.agentId) &&
    (budget.apiKeyId === null || budget.apiKeyId === send.apiKeyId)
  );
}

/** The thresholds a spend reaching `after` from `before` passes (each at most once: `before` was below it). */
export function thresholdsCrossed(limit: number, before: number, after: number): number[] {
  return BUDGET_THRESHOLDS.filter((percent) => {
    const mark = (limit * percent) / 100;
    return before < mark && after >= mark;
  });
}
