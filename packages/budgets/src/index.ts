export {
  BudgetLedger,
  type BudgetLedgerOptions,
  Charge,
  replyUsage,
  type Send,
  type SendUsage,
} from "./ledger.js";
export { budgetOf, type Standing, shown } from "./present.js";
export { loadPrices } from "./prices.js";
