import { type Budget, isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { periodEnum, presentBudget, unitEnum } from "../budgets/present.js";
import { createBudgetBody, limitIssue, storedLimit, updateBudgetBody } from "../validation/budgets.js";
import { defineRoute, type RequestContext, type Route } from "./define.js";

const BUDGET_PARAM = {
  budgetId: {
    description:
      "The budget's id (`bdg_…`). An id of another account's budget, or not of that form, is answered `404 BUDGET_NOT_FOUND`.",
    example: "bdg_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
};

async function present(input: RequestContext, budget: Budget) {
  return presentBudget(budget, await input.gateway.ledger.standing(budget));
}

/** The caller's budget named by the path, read fresh; another account's is answered as missing. */
async function callersBudget(input: RequestContext): Promise<Budget> {
  const id = input.ctx.params.budgetId ?? "";
  const missing = () => new AppError("BUDGET_NOT_FOUND", `Budget ${JSON.stringify(id)} does not exist.`);
  if (!isId("budget", id)) throw missing();
  const budget = (await input.gateway.ledger.budgetsOf(input.principal.accountId, true)).find(
    (b) => b.id === id,
  );
  if (!budget) throw missing();
  return budget;
}

/** Spend budgets (docs/api/budgets.md): the owner's, with `budgets:read` and `budgets:write`. */
export const budgetRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/budgets",
    scope: "budgets:write",
    limit: "createPerMinute",
    operationId: "createBudget",
    tag: "Budgets",
    summary: "Create a budget",
    description:
      "Limits what the account, one of its agents (`agentId`) or one of its keys (`apiKeyId`) spends per UTC day or month, in tokens or in US dollars at the configured prices. From then on a message it counts is refused with `402 BUDGET_EXCEEDED` before it reaches a model when the budget cannot take it; `budget.threshold` webhook events tell when its spend reaches 50, 80 and 100 %. Spend already recorded this period counts. At most 100 budgets per account.",
    body: { schema: createBudgetBody, component: "CreateBudgetRequest" },
    success: {
      status: 201,
      schema: "BudgetResponse",
      description: "The budget, with its spend this period.",
    },
    errors: [
      "INVALID_REQUEST",
      "INSUFFICIENT_QUOTA",
      "AGENT_NOT_FOUND",
      "API_KEY_NOT_FOUND",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const body = await input.body();
      const { budget } = await gateway.budgets.createBudget(
        {
          accountId: principal.accountId,
          ...(body.agentId !== undefined ? { agentId: body.agentId } : {}),
          ...(body.apiKeyId !== undefined ? { apiKeyId: body.apiKeyId } : {}),
          unit: unitEnum(body.unit),
          period: periodEnum(body.period),
          limit: storedLimit(body.unit, body.limit),
        },
        rpc,
      );
      gateway.ledger.forget(principal.accountId);
      const created = (await gateway.ledger.budgetsOf(principal.accountId, true)).find(
        (b) => b.id === budget!.id,
      );
      ctx.status = 201;
      ctx.body = { success: true, data: await present(input, created!) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/budgets",
    scope: "budgets:read",
    limit: "listPerMinute",
    operationId: "listBudgets",
    tag: "Budgets",
    summary: "List budgets",
    description: "Every budget of the account (at most 100), oldest first, each with its spend this period.",
    success: { status: 200, schema: "BudgetListResponse", description: "The account's budgets." },
    errors: [],
    async handler(input) {
      const budgets = await input.gateway.ledger.budgetsOf(input.principal.accountId, true);
      input.ctx.body = { success: true, data: await Promise.all(budgets.map((b) => present(input, b))) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/budgets/:budgetId",
    params: BUDGET_PARAM,
    scope: "budgets:read",
    limit: "getPerMinute",
    operationId: "getBudget",
    tag: "Budgets",
    summary: "Get a budget",
    description: "One budget, with its spend this period and when it resets.",
    success: { status: 200, schema: "BudgetResponse", description: "The budget." },
    errors: ["BUDGET_NOT_FOUND"],
    async handler(input) {
      input.ctx.body = { success: true, data: await present(input, await callersBudget(input)) };
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/v1/budgets/:budgetId",
    params: BUDGET_PARAM,
    scope: "budgets:write",
    limit: "updatePerMinute",
    operationId: "updateBudget",
    tag: "Budgets",
    summary: "Update a budget",
    description:
      "Changes its `limit` (in its unit) or its `period`; what it counts and its unit stay. The new limit applies to the next message; spend this period is kept (a new period starts from what was spent in it).",
    body: { schema: updateBudgetBody, component: "UpdateBudgetRequest" },
    success: { status: 200, schema: "BudgetResponse", description: "The budget as updated." },
    errors: ["INVALID_REQUEST", "BUDGET_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const current = await callersBudget(input);
      const body = await input.body();
      if (body.limit !== undefined) {
        const issue = limitIssue(current.unit, body.limit);
        if (issue) {
          throw new AppError("INVALID_REQUEST", `limit ${issue}.`, { details: [{ field: "limit", issue }] });
        }
      }
      await gateway.budgets.updateBudget(
        {
          accountId: principal.accountId,
          id: current.id,
          ...(body.limit !== undefined ? { limit: storedLimit(current.unit, body.limit) } : {}),
          ...(body.period !== undefined ? { period: periodEnum(body.period) } : {}),
        },
        rpc,
      );
      gateway.ledger.forget(principal.accountId);
      ctx.body = { success: true, data: await present(input, await callersBudget(input)) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/budgets/:budgetId",
    params: BUDGET_PARAM,
    scope: "budgets:write",
    limit: "deletePerMinute",
    operationId: "deleteBudget",
    tag: "Budgets",
    summary: "Delete a budget",
    description: "Removes the budget: the messages it counted are no longer limited by it.",
    success: { status: 200, schema: "BudgetDeletedResponse", description: "The budget is deleted." },
    errors: ["BUDGET_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = input.params.budgetId;
      if (!isId("budget", id))
        throw new AppError("BUDGET_NOT_FOUND", `Budget ${JSON.stringify(id)} does not exist.`);
      await gateway.budgets.deleteBudget({ accountId: principal.accountId, id }, rpc);
      gateway.ledger.forget(principal.accountId);
      ctx.body = { success: true, data: { id, deleted: true } };
    },
  }),
];
