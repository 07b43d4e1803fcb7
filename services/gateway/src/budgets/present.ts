import { type Budget, type BudgetPeriod, type BudgetUnit, toUsd } from "@agentry/core";
import {
  type Budget as BudgetMessage,
  BudgetPeriod as PeriodEnum,
  BudgetUnit as UnitEnum,
} from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";

/** A budget of the registry's RPCs as the gateway's rules take it (`@agentry/core`'s `Budget`). */
export function budgetOf(message: BudgetMessage): Budget {
  return {
    id: message.id,
    accountId: message.accountId,
    agentId: message.agentId ?? null,
    apiKeyId: message.apiKeyId ?? null,
    unit: message.unit === UnitEnum.USD ? "usd" : "tokens",
    period: message.period === PeriodEnum.MONTH ? "month" : "day",
    limit: Number(message.limit),
    createdAt: (message.createdAt ? timestampDate(message.createdAt) : new Date(0)).toISOString(),
    updatedAt: (message.updatedAt ? timestampDate(message.updatedAt) : new Date(0)).toISOString(),
  };
}

export function unitEnum(unit: BudgetUnit): UnitEnum {
  return unit === "usd" ? UnitEnum.USD : UnitEnum.TOKENS;
}

export function periodEnum(period: BudgetPeriod): PeriodEnum {
  return period === "month" ? PeriodEnum.MONTH : PeriodEnum.DAY;
}

/** An amount in a budget's stored unit (tokens, nano-dollars) as the API shows it (tokens, US dollars). */
export function shown(unit: BudgetUnit, amount: number): number {
  return unit === "usd" ? toUsd(amount) : amount;
}

/** Where the budget stands in its period now. */
export interface Standing {
  spent: number;
  periodStartMs: number;
  resetsAtMs: number;
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
