import {
  type Budget,
  budgetApplies,
  budgetWindow,
  costNanoUsd,
  type PriceTable,
  priceOf,
  thresholdsCrossed,
} from "@agentry/core";
import { AppError } from "@agentry/errors";
import { type BudgetThresholdData, budgetThresholdEventId } from "@agentry/events";
import type { SpendCounter, SpendMeter } from "@agentry/limits";
import type { Logger } from "@agentry/logging";
import {
  type AgentService,
  AgentView,
  type BudgetService,
  type ConversationService,
  UsageDimension,
  UsageGranularity,
  type WebhookService,
} from "@agentry/proto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { budgetOf, type Standing, shown } from "./present.js";

/** A counter is kept this long past its period's end, for sends that settle late. */
const COUNTER_GRACE_MS = 3_600_000;

export interface BudgetLedgerOptions {
  meter: SpendMeter;
  prices: PriceTable;
  budgets: Pick<Client<typeof BudgetService>, "listBudgets">;
  agents: Pick<Client<typeof AgentService>, "getAgent">;
  conversations: Pick<Client<typeof ConversationService>, "getUsage">;
  webhooks: Pick<Client<typeof WebhookService>, "publishEvents">;
  logger: Logger;
  /** How long an account's budgets are trusted without asking the registry again. */
  cacheTtlMs: number;
  /** What a send to an agent is taken to spend before one of its sends has been seen (tokens). */
  estimateTokens: number;
  rpcTimeoutMs: number;
  /** Epoch milliseconds; periods and resets follow it. */
  now?: () => number;
}

/** What the ledger learnt a send to an agent spends: its last send's. */
interface Estimate {
  tokens: number;
  /** The model it was priced at. */
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** A reply's usage as a charge is settled with. */
export function replyUsage(reply: {
  model: string;
  usage?: { inputTokens: number; outputTokens: number } | undefined;
}): SendUsage {
  return {
    model: reply.model,
    inputTokens: reply.usage?.inputTokens ?? 0,
    outputTokens: reply.usage?.outputTokens ?? 0,
  };
}

/** A send's usage, as a reply states it. */
export interface SendUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** The send a charge is for. */
export interface Send {
  accountId: string;
  agentId: string;
  /** Empty for a console session. */
  apiKeyId: string;
}

/**
 * The account's budgets, and what each has spent this period (docs/api/budgets.md, "Enforcement"). Before a send
 * reaches a model, `admit` reserves its estimate (at most what is left) in every budget it counts against, or
 * refuses it with 402 BUDGET_EXCEEDED when one has nothing left; when it ends, its charge is settled to what the
 * model really used, which may cross an alert threshold.
 */
export class BudgetLedger {
  private readonly now: () => number;
  private readonly cached = new Map<string, { budgets: Budget[]; atMs: number }>();
  private readonly estimates = new Map<string, Estimate>();

  constructor(private readonly options: BudgetLedgerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The account's budgets, from a short-lived cache. */
  async budgetsOf(accountId: string, fresh = false): Promise<Budget[]> {
    const hit = this.cached.get(accountId);
    if (!fresh && hit && Date.now() - hit.atMs < this.options.cacheTtlMs) return hit.budgets;
    const { budgets } = await this.options.budgets.listBudgets(
      { accountId },
      { timeoutMs: this.options.rpcTimeoutMs },
    );
    const listed = budgets.map(budgetOf);
    this.cached.set(accountId, { budgets: listed, atMs: Date.now() });
    if (this.cached.size > 10_000) this.cached.delete(this.cached.keys().next().value!);
    return listed;
  }

  /** After a change through this gateway: the next send of the account reads its budgets again. */
  forget(accountId: string): void {
    this.cached.delete(accountId);
  }

  /** Where a budget stands now: the meter's count (in-flight estimates included), else its stored spend. */
  async standing(budget: Budget): Promise<Standing> {
    const { startMs, resetsAtMs } = budgetWindow(budget.period, this.now());
    const [held] = await this.options.meter.peek([counterKey(budget, startMs)]);
    const spent = held ?? (await this.storedSpend(budget, startMs, resetsAtMs));
    return { spent, periodStartMs: startMs, resetsAtMs };
  }

  /**
   * Reserves the send's estimate in every budget that counts it; null when none does. A `sideCall` (memory
   * extraction) reserves nothing: it is admitted while every budget has something left, its usage is counted when
   * it settles, and it teaches nothing about what the agent's messages spend.
   * @throws AppError BUDGET_EXCEEDED naming the first budget it would overspend.
   */
  async admit(send: Send, options: { sideCall?: boolean } = {}): Promise<Charge | null> {
    const budgets = (await this.budgetsOf(send.accountId)).filter((b) => budgetApplies(b, send));
    if (budgets.length === 0) return null;
    const at = this.now();
    const estimate = options.sideCall ? null : await this.estimate(send);
    const counters = budgets.map((budget) => this.counter(budget, at));
    const amounts = budgets.map((budget) => (estimate ? this.amount(budget, estimate) : 0));
    const outcome = await this.options.meter.reserve(counters, amounts);
    if (!outcome.allowed) {
      const budget = budgets[outcome.refused]!;
      throw exceeded(budget, outcome.spent[outcome.refused]!, at);
    }
    return new Charge(this, send, budgets, counters, outcome.amounts, at, !options.sideCall);
  }

  /**
   * @internal Settles a charge: the meter, what the agent's sends are estimated at, and the alerts. Never throws:
   * a counter that cannot be settled now keeps the estimate, which errs on the side of spending less.
   */
  async settle(charge: Charge, usage: SendUsage | null): Promise<void> {
    try {
      await this.settleOrThrow(charge, usage);
    } catch (error) {
      this.options.logger.warn(
        { err: error, agentId: charge.send.agentId },
        "could not settle a budget charge",
      );
    }
  }

  private async settleOrThrow(charge: Charge, usage: SendUsage | null): Promise<void> {
    const actual = charge.budgets.map((budget) => (usage ? this.amount(budget, estimateOf(usage)) : 0));
    const after = await this.options.meter.settle(
      charge.counters.map((c) => c.key),
      charge.amounts,
      actual,
    );
    if (!usage) return;
    if (charge.learns) this.estimates.set(charge.send.agentId, estimateOf(usage));
    const alerts: Promise<void>[] = [];
    charge.budgets.forEach((budget, i) => {
      const spent = after[i];
      if (spent === null || spent === undefined) return;
      for (const threshold of thresholdsCrossed(budget.limit, spent - actual[i]!, spent)) {
        alerts.push(this.alert(budget, threshold, spent, charge.atMs));
      }
    });
    await Promise.all(alerts);
  }

  /** Publishes `budget.threshold`, under an id every gateway gives it, so it is delivered once per period. */
  private async alert(budget: Budget, threshold: number, spent: number, atMs: number): Promise<void> {
    const { startMs, resetsAtMs } = budgetWindow(budget.period, atMs);
    const data: BudgetThresholdData = {
      budgetId: budget.id,
      threshold,
      unit: budget.unit,
      period: budget.period,
      agentId: budget.agentId,
      apiKeyId: budget.apiKeyId,
      limit: shown(budget.unit, budget.limit),
      spent: shown(budget.unit, spent),
      periodStart: new Date(startMs).toISOString(),
      resetsAt: new Date(resetsAtMs).toISOString(),
    };
    try {
      await this.options.webhooks.publishEvents(
        {
          events: [
            {
              id: budgetThresholdEventId(budget.id, startMs, threshold),
              type: "budget.threshold",
              accountId: budget.accountId,
              createTime: timestampFromDate(new Date(this.now())),
              data,
            },
          ],
        },
        { timeoutMs: this.options.rpcTimeoutMs },
      );
    } catch (error) {
      this.options.logger.warn(
        { err: error, budgetId: budget.id, threshold },
        "could not publish a budget alert",
      );
    }
  }

  private counter(budget: Budget, atMs: number): SpendCounter {
    const { startMs, resetsAtMs } = budgetWindow(budget.period, atMs);
    return {
      key: counterKey(budget, startMs),
      limit: budget.limit,
      ttlMs: Math.max(1, resetsAtMs - this.now()) + COUNTER_GRACE_MS,
      seed: () => this.storedSpend(budget, startMs, resetsAtMs),
    };
  }

  private amount(budget: Budget, estimate: Estimate): number {
    if (budget.unit === "tokens") return estimate.tokens;
    return costNanoUsd(this.options.prices, estimate.model, estimate);
  }

  /** The agent's last send, or the configured tokens as input at the agent's model until one is seen. */
  private async estimate(send: Send): Promise<Estimate> {
    const learnt = this.estimates.get(send.agentId);
    if (learnt) return learnt;
    const tokens = this.options.estimateTokens;
    // An agent that cannot be read is the handler's to answer (404, after the Idempotency-Key's claim).
    const agent = await this.options.agents
      .getAgent(
        // Only its model is read: the JSON view spares the registry the Struct form.
        { accountId: send.accountId, id: send.agentId, view: AgentView.JSON },
        { timeoutMs: this.options.rpcTimeoutMs },
      )
      .then((answer) => answer.agent)
      .catch(() => undefined);
    const model = agent?.spec?.model ?? "";
    // An unknown model (the server default) is priced as the most expensive input a budget would stop.
    const priced = model !== "" ? model : mostExpensive(this.options.prices);
    return { tokens, model: priced, inputTokens: tokens, outputTokens: 0 };
  }

  /** What was spent in the period before this gateway counted it, from the stored usage rollups. */
  private async storedSpend(budget: Budget, startMs: number, resetsAtMs: number): Promise<number> {
    const report = await this.options.conversations.getUsage(
      {
        accountId: budget.accountId,
        fromTime: timestampFromDate(new Date(startMs)),
        toTime: timestampFromDate(new Date(resetsAtMs)),
        granularity: UsageGranularity.DAY,
        ...(budget.agentId !== null ? { agentId: budget.agentId } : {}),
        groupBy:
          budget.apiKeyId !== null
            ? [UsageDimension.MODEL, UsageDimension.API_KEY_ID]
            : [UsageDimension.MODEL],
        // Tokens only: no percentiles to work out over a row per agent and model (and key) a day.
        countsOnly: true,
      },
      { timeoutMs: this.options.rpcTimeoutMs },
    );
    let spent = 0;
    for (const group of report.totals) {
      if (budget.apiKeyId !== null && group.apiKeyId !== budget.apiKeyId) continue;
      const usage = {
        model: group.model ?? "",
        inputTokens: Number(group.figures?.inputTokens ?? 0n),
        outputTokens: Number(group.figures?.outputTokens ?? 0n),
      };
      spent += this.amount(budget, estimateOf(usage));
    }
    return spent;
  }
}

/**
 * One admitted send's reservation. `settle` with the reply's usage when it ends with one, `release` otherwise
 * (and always at the end: a settled charge ignores it).
 */
export class Charge {
  private settled: Promise<void> | undefined;

  constructor(
    private readonly ledger: BudgetLedger,
    readonly send: Send,
    readonly budgets: Budget[],
    readonly counters: SpendCounter[],
    readonly amounts: number[],
    readonly atMs: number,
    /** Whether its usage is what the agent's next message is estimated at (a message's, not a side call's). */
    readonly learns = true,
  ) {}

  /** Replaces the estimate by what the send spent. Only the first settle or release counts. */
  settle(usage: SendUsage): Promise<void> {
    this.settled ??= this.ledger.settle(this, usage);
    return this.settled;
  }

  /** Frees the estimate of a send that ended without a reply. */
  release(): Promise<void> {
    this.settled ??= this.ledger.settle(this, null);
    return this.settled;
  }
}

function counterKey(budget: Budget, periodStartMs: number): string {
  return `budget:${budget.id}:${periodStartMs}`;
}

function estimateOf(usage: SendUsage): Estimate {
  return { ...usage, tokens: usage.inputTokens + usage.outputTokens };
}

function mostExpensive(prices: PriceTable): string {
  let best = "";
  let highest = prices.default.inputPerMillion;
  for (const name of Object.keys(prices.models)) {
    const input = priceOf(prices, name).inputPerMillion;
    if (input > highest) [best, highest] = [name, input];
  }
  return best;
}

function exceeded(budget: Budget, spent: number, atMs: number): AppError {
  const { resetsAtMs } = budgetWindow(budget.period, atMs);
  const resetsAt = new Date(resetsAtMs).toISOString();
  const whose =
    budget.agentId !== null
      ? `agent ${budget.agentId}'s`
      : budget.apiKeyId !== null
        ? `API key ${budget.apiKeyId}'s`
        : "the account's";
  const unit = budget.unit === "usd" ? "USD" : "tokens";
  return new AppError(
    "BUDGET_EXCEEDED",
    `Budget ${budget.id} (${whose}, per ${budget.period}) is spent: ${shown(budget.unit, spent)} of ${shown(budget.unit, budget.limit)} ${unit}, messages under way included. It resets at ${resetsAt}; raise its limit with PATCH /v1/budgets/${budget.id} to send sooner.`,
    {
      extra: {
        budget: {
          id: budget.id,
          unit: budget.unit,
          period: budget.period,
          limit: shown(budget.unit, budget.limit),
          spent: shown(budget.unit, spent),
          resetsAt,
        },
      },
    },
  );
}
