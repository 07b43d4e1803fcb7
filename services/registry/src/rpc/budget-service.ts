import {
  BUDGET_BOUNDS,
  type Budget,
  type BudgetPeriod,
  type BudgetUnit,
  NANO_USD_PER_USD,
} from "@agentry/core";
import { AppError, invalid } from "@agentry/errors";
import { type BudgetService, BudgetPeriod as PeriodEnum, BudgetUnit as UnitEnum } from "@agentry/proto";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RegistryContext } from "./context.js";
import { toTimestamp } from "./convert.js";

const UNITS: Partial<Record<UnitEnum, BudgetUnit>> = { [UnitEnum.TOKENS]: "tokens", [UnitEnum.USD]: "usd" };
const PERIODS: Partial<Record<PeriodEnum, BudgetPeriod>> = {
  [PeriodEnum.DAY]: "day",
  [PeriodEnum.MONTH]: "month",
};

function unitOf(value: UnitEnum): BudgetUnit {
  const unit = UNITS[value];
  if (!unit) throw invalid("unit", "must be tokens or usd");
  return unit;
}

function periodOf(value: PeriodEnum): BudgetPeriod {
  const period = PERIODS[value];
  if (!period) throw invalid("period", "must be day or month");
  return period;
}

/** A limit within the bounds of its unit (tokens, or nano-dollars for usd). */
function checkedLimit(unit: BudgetUnit, value: bigint): number {
  const [min, max] =
    unit === "tokens"
      ? [1, BUDGET_BOUNDS.maxTokens]
      : [BUDGET_BOUNDS.minUsd * NANO_USD_PER_USD, BUDGET_BOUNDS.maxUsd * NANO_USD_PER_USD];
  const limit = Number(value);
  if (!(limit >= min && limit <= max))
    throw invalid("limit", `must be ${min} to ${max} in the budget's unit`);
  return limit;
}

function toProto(budget: Budget) {
  return {
    id: budget.id,
    accountId: budget.accountId,
    ...(budget.agentId !== null ? { agentId: budget.agentId } : {}),
    ...(budget.apiKeyId !== null ? { apiKeyId: budget.apiKeyId } : {}),
    unit: budget.unit === "tokens" ? UnitEnum.TOKENS : UnitEnum.USD,
    period: budget.period === "day" ? PeriodEnum.DAY : PeriodEnum.MONTH,
    limit: BigInt(budget.limit),
    createdAt: toTimestamp(budget.createdAt),
    updatedAt: toTimestamp(budget.updatedAt),
  };
}

function notFound(id: string): AppError {
  return new AppError("BUDGET_NOT_FOUND", `Budget ${id} does not exist.`);
}

/** The registry's BudgetService: spend budgets, stored; the gateways count the spend and enforce them. */
export function budgetService({ store }: RegistryContext): ServiceImpl<typeof BudgetService> {
  return {
    async createBudget(request) {
      if (request.agentId !== undefined && request.apiKeyId !== undefined) {
        throw invalid("apiKeyId", "a budget is the account's, one agent's or one key's: not both");
      }
      const unit = unitOf(request.unit);
      const budget = await store.createBudget({
        accountId: request.accountId,
        agentId: request.agentId ?? null,
        apiKeyId: request.apiKeyId ?? null,
        unit,
        period: periodOf(request.period),
        limit: checkedLimit(unit, request.limit),
      });
      return { budget: toProto(budget) };
    },

    async listBudgets({ accountId }) {
      return { budgets: (await store.listBudgets(accountId)).map(toProto) };
    },

    async updateBudget(request) {
      const current = (await store.listBudgets(request.accountId)).find((b) => b.id === request.id);
      if (!current) throw notFound(request.id);
      const updated = await store.updateBudget(request.accountId, request.id, {
        ...(request.limit !== undefined ? { limit: checkedLimit(current.unit, request.limit) } : {}),
        ...(request.period !== undefined ? { period: periodOf(request.period) } : {}),
      });
      if (!updated) throw notFound(request.id);
      return { budget: toProto(updated) };
    },

    async deleteBudget({ accountId, id }) {
      if (!(await store.deleteBudget(accountId, id))) throw notFound(id);
      return {};
    },
  };
}
