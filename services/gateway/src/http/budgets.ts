import type { BudgetLedger } from "@agentry/budgets";
import { reservingMiddleware } from "./limits.js";

/**
 * Spend budgets on the routes that call a model (those holding a concurrency slot): after the rate limits, the
 * request's own checks and the concurrency limit, before the handler, the send's estimate is reserved in every budget that counts it, or it
 * is refused with 402 BUDGET_EXCEEDED. The handler settles the charge (`ctx.state.spend`) with the reply's
 * usage; whatever it has not settled when the send ends (the request, or the background work it handed on) is
 * released.
 */
export function budgetsMiddleware(ledger: BudgetLedger) {
  return reservingMiddleware(async (ctx, next, principal, agentId) => {
    const charge = await ledger.admit({
      accountId: principal.accountId,
      agentId,
      apiKeyId: principal.keyId,
    });
    if (!charge) return next();
    ctx.state.spend = charge;
    const hold = ctx.state.holdSlotUntil;
    let held: Promise<unknown> | undefined;
    ctx.state.holdSlotUntil = (work) => {
      held = work;
      hold?.(work);
    };
    try {
      await next();
    } finally {
      ctx.state.holdSlotUntil = hold;
      const end = held ? held.catch(() => undefined) : Promise.resolve();
      void end.then(() => charge.release()).catch(() => undefined);
    }
  });
}
