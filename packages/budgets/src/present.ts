import { type Budget, type BudgetUnit, toUsd } from "@agentry/core";
import {
  type Budget as BudgetMessage,
  BudgetPeriod as PeriodEnum,
  BudgetUnit as UnitEnum,
} from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";

/** A budget of the registry's RPCs as the budget rules take it (`@agentry/core`'s `Budget`). */
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
