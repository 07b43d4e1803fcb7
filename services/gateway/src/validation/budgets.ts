import {
  BUDGET_BOUNDS,
  BUDGET_PERIODS,
  BUDGET_UNITS,
  type BudgetUnit,
  NANO_USD_PER_USD,
} from "@agentry/core";
import { z } from "zod";
import { atMostOneOf } from "./exclusive.js";

/* The bodies of the budget routes (docs/api/budgets.md). */

const limit = z
  .number({ error: "must be a number" })
  .positive("must be more than 0")
  .meta({
    description: `In the budget's unit: a whole number of tokens (1 to ${BUDGET_BOUNDS.maxTokens.toLocaleString("en-US")}), or US dollars (${BUDGET_BOUNDS.minUsd} to ${BUDGET_BOUNDS.maxUsd.toLocaleString("en-US")}, to the billionth).`,
    examples: [1_000_000],
  });

const period = z.enum(BUDGET_PERIODS, { error: "must be day or month" }).meta({
  description: "How often the budget starts again: every UTC day, or on the first of every UTC month.",
});

/** Why a limit does not fit its unit, or null when it does. */
export function limitIssue(unit: BudgetUnit, value: number): string | null {
  if (unit === "tokens") {
    return Number.isInteger(value) && value <= BUDGET_BOUNDS.maxTokens
      ? null
      : `must be a whole number of tokens, 1 to ${BUDGET_BOUNDS.maxTokens}`;
  }
  return value >= BUDGET_BOUNDS.minUsd && value <= BUDGET_BOUNDS.maxUsd
    ? null
    : `must be ${BUDGET_BOUNDS.minUsd} to ${BUDGET_BOUNDS.maxUsd} US dollars`;
}

/** A limit in the budget's stored unit: tokens, or nano-dollars. */
export function storedLimit(unit: BudgetUnit, value: number): bigint {
  return BigInt(unit === "usd" ? Math.round(value * NANO_USD_PER_USD) : value);
}

export const createBudgetBody = atMostOneOf(
  z
    .strictObject(
      {
        unit: z.enum(BUDGET_UNITS, { error: "must be tokens or usd" }).meta({
          description:
            "`tokens`: input and output tokens; `usd`: what they cost at the configured prices per model.",
        }),
        limit,
        period,
        agentId: z
          .string()
          .regex(/^agt_[0-9A-HJKMNP-TV-Z]{26}$/, "must be an agent id (agt_…)")
          .optional()
          .meta({
            description: "Only this agent's messages count. Unset (and no `apiKeyId`): the whole account's.",
          }),
        apiKeyId: z
          .string()
          .regex(/^key_[0-9A-HJKMNP-TV-Z]{26}$/, "must be an API key id (key_…)")
          .optional()
          .meta({ description: "Only the messages sent with this key count. Not with `agentId`." }),
      },
      { error: "must be a JSON object" },
    )
    .superRefine((body, ctx) => {
      const issue = limitIssue(body.unit, body.limit);
      if (issue) ctx.addIssue({ code: "custom", path: ["limit"], message: issue });
    }),
  "agentId",
  "apiKeyId",
  "a budget is the account's, one agent's or one key's: give agentId or apiKeyId, not both",
);

export const updateBudgetBody = z.strictObject(
  { limit: limit.optional(), period: period.optional() },
  { error: "must be a JSON object" },
);
