import { DEFAULT_PRICE_TABLE } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { MemorySpendMeter } from "@agentry/limits";
import { silentLogger } from "@agentry/logging";
import {
  BudgetPeriod,
  BudgetSchema,
  BudgetUnit,
  GetUsageResponseSchema,
  PublishEventsResponseSchema,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { BudgetLedger } from "./ledger.js";

const send = { accountId: "acc_1", agentId: "agt_1", apiKeyId: "" };

/** A ledger over one agent budget of `limit` tokens a day, with nothing spent before. */
function ledgerWith(limit: number): BudgetLedger {
  const budget = create(BudgetSchema, {
    id: "bdg_1",
    accountId: "acc_1",
    agentId: "agt_1",
    unit: BudgetUnit.TOKENS,
    period: BudgetPeriod.DAY,
    limit: BigInt(limit),
  });
  return new BudgetLedger({
    meter: new MemorySpendMeter(),
    prices: DEFAULT_PRICE_TABLE,
    budgets: {
      listBudgets: async () => ({ $typeName: "agentry.registry.v1.ListBudgetsResponse", budgets: [budget] }),
    },
    agents: { getAgent: async () => ({ $typeName: "agentry.registry.v1.GetAgentResponse" }) },
    conversations: { getUsage: async () => create(GetUsageResponseSchema, {}) },
    webhooks: { publishEvents: async () => create(PublishEventsResponseSchema, {}) },
    logger: silentLogger(),
    cacheTtlMs: 60_000,
    estimateTokens: 1000,
    rpcTimeoutMs: 1000,
  });
}

async function refused(admitting: Promise<unknown>): Promise<string> {
  const error = await admitting.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).code;
}

describe("a side call (memory extraction)", () => {
  it("reserves nothing: it is refused only by a spent budget, never holds a message back, and counts what it used", async () => {
    const ledger = ledgerWith(100);
    const message = await ledger.admit(send);
    // The message's estimate (1,000 tokens) takes all that is left; nothing else is admitted meanwhile.
    expect(await refused(ledger.admit(send, { sideCall: true }))).toBe("BUDGET_EXCEEDED");
    await message!.release();

    const side = await ledger.admit(send, { sideCall: true });
    expect(side).not.toBeNull();
    // The side call holds nothing: a message still reserves the whole budget.
    const next = await ledger.admit(send);
    expect(next!.amounts).toEqual([100]);
    await next!.release();

    await side!.settle({ model: "gpt-4o-mini", inputTokens: 25, outputTokens: 5 });
    expect((await ledger.standing(budgetOf())).spent).toBe(30);
    // What the side call used is not what a message is estimated at: the next one still asks for what is left.
    const after = await ledger.admit(send);
    expect(after!.amounts).toEqual([70]);
  });
});

function budgetOf() {
  return {
    id: "bdg_1",
    accountId: "acc_1",
    agentId: "agt_1",
    apiKeyId: null,
    unit: "tokens" as const,
    period: "day" as const,
    limit: 100,
    createdAt: new Date(0).toISOString(),
    updatedAt: new Date(0).toISOString(),
  };
}
