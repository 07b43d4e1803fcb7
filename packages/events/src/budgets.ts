import { createHash } from "node:crypto";

/** The `data` of `budget.threshold` (docs/api/budgets.md, "Alerts"): a budget's spend reached a percentage of it. */
export interface BudgetThresholdData {
  [key: string]: string | number | null;
  budgetId: string;
  /** 50, 80 or 100. */
  threshold: number;
  unit: "tokens" | "usd";
  period: "day" | "month";
  agentId: string | null;
  apiKeyId: string | null;
  /** In the budget's unit: tokens, or US dollars. */
  limit: number;
  spent: number;
  /** ISO 8601: the period's start, and when the budget resets. */
  periodStart: string;
  resetsAt: string;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The id of a threshold's event: the same for every gateway that sees the budget cross it in the same period, so
 * the webhooks service, which skips an id it has, delivers it once. A ULID dated at the period's start whose
 * random part is a hash of the budget, the period and the threshold.
 */
export function budgetThresholdEventId(budgetId: string, periodStartMs: number, threshold: number): string {
  let time = "";
  let rest = periodStartMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  const hash = createHash("sha256").update(`${budgetId}:${periodStartMs}:${threshold}`).digest();
  let random = "";
  // 16 characters of 5 bits each from the hash's first 10 bytes.
  let bits = 0;
  let value = 0;
  for (const byte of hash.subarray(0, 10)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      random += CROCKFORD[(value >> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return `evt_${time}${random}`;
}
