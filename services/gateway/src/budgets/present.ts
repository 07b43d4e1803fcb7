import { type Standing, shown } from "@agentry/budgets";
import type { Budget, BudgetPeriod, BudgetUnit } from "@agentry/core";
import { BudgetPeriod as PeriodEnum, BudgetUnit as UnitEnum } from "@agentry/proto";

export function unitEnum(unit: BudgetUnit): UnitEnum {
  return unit === "usd" ? UnitEnum.USD : UnitEnum.TOKENS;
}

export function periodEnum(period: BudgetPeriod): PeriodEnum {
  return period === "month" ? PeriodEnum.MONTH : PeriodEnum.DAY;
}

/** A budget as the API answers it (docs/api/budgets.md, "The budget object"). */
export function presentBudget(budget: Budget, standing: Standing) {
  const spent = Math.min(standing.spent, Number.MAX_SAFE_INTEGER);
  return {
    id: budget.id,
    agentId: budget.agentId,
    apiKeyId: budget.apiKeyId,
    unit: budget.unit,
    period: budget.period,
    limit: shown(budget.unit, budget.limit),
    spend: {
      spent: shown(budget.unit, spent),
      remaining: shown(budget.unit, Math.max(0, budget.limit - spent)),
      percent: Math.round((spent / budget.limit) * 10_000) / 100,
      periodStart: new Date(standing.periodStartMs).toISOString(),
      resetsAt: new Date(standing.resetsAtMs).toISOString(),
    },
    createdAt: budget.createdAt,
    updatedAt: budget.updatedAt,
  };
}
