import { BUDGET_PERIODS, BUDGET_UNITS } from "@agentry/core";
import { z } from "zod";
import type { ComponentRegistry } from "../openapi/convert.js";
import { createBudgetBody, updateBudgetBody } from "../validation/budgets.js";
import { EXAMPLE_ULID, id, success } from "./common.schemas.js";

/* The response schemas of the budget routes (docs/api/budgets.md), components of the document. */

const amount = (description: string, example: number) =>
  z.number().meta({ description, examples: [example] });

export const Budget = z
  .object({
    id: id("bdg", "The budget's id"),
    agentId: z
      .string()
      .nullable()
      .meta({ description: "Set: only this agent's messages count.", examples: [`agt_${EXAMPLE_ULID}`] }),
    apiKeyId: z
      .string()
      .nullable()
      .meta({ description: "Set: only the messages sent with this key count.", examples: [null] }),
    unit: z.enum(BUDGET_UNITS).meta({ description: "`tokens` or `usd` (US dollars)." }),
    period: z.enum(BUDGET_PERIODS).meta({ description: "`day` or `month`, in UTC." }),
    limit: amount("In the budget's unit.", 1_000_000),
    spend: z
      .object({
        spent: amount(
          "Spent this period, in the budget's unit, with the estimates of messages under way.",
          250_000,
        ),
        remaining: amount("What is left of the limit this period.", 750_000),
        percent: amount("`spent` as a percentage of `limit`, to two decimals.", 25),
        periodStart: z.iso.datetime().meta({ examples: ["2026-11-29T00:00:00.000Z"] }),
        resetsAt: z.iso.datetime().meta({
          description: "When the next period starts at zero.",
          examples: ["2026-11-30T00:00:00.000Z"],
        }),
      })
      .meta({ description: "Where the budget stands in its current period." }),
    createdAt: z.iso.datetime().meta({ examples: ["2026-11-20T09:30:00.000Z"] }),
    updatedAt: z.iso.datetime().meta({ examples: ["2026-11-20T09:30:00.000Z"] }),
  })
  .meta({ description: "A spend budget (docs/api/budgets.md)." });

const BudgetDeleted = z.object({
  id: id("bdg", "The deleted budget's id"),
  deleted: z.literal(true),
});

export const BudgetThresholdData = z
  .object({
    budgetId: id("bdg", "The budget"),
    threshold: z
      .union([z.literal(50), z.literal(80), z.literal(100)])
      .meta({ description: "The percentage reached." }),
    unit: z.enum(BUDGET_UNITS),
    period: z.enum(BUDGET_PERIODS),
    agentId: z.string().nullable(),
    apiKeyId: z.string().nullable(),
    limit: z.number(),
    spent: z
      .number()
      .meta({ description: "Spent this period when the threshold was reached, in the budget's unit." }),
    periodStart: z.iso.datetime(),
    resetsAt: z.iso.datetime(),
  })
  .meta({
    description: "Data of `budget.threshold`: a budget's spend reached 50, 80 or 100 % of it this period.",
  });

/** Adds the budget schemas. */
export function registerBudgetSchemas(requests: ComponentRegistry, responses: ComponentRegistry): void {
  requests.add(createBudgetBody, { id: "CreateBudgetRequest" });
  requests.add(updateBudgetBody, { id: "UpdateBudgetRequest" });
  responses.add(Budget, { id: "Budget" });
  responses.add(success(Budget), { id: "BudgetResponse" });
  responses.add(success(z.array(Budget)), { id: "BudgetListResponse" });
  responses.add(success(BudgetDeleted), { id: "BudgetDeletedResponse" });
}
