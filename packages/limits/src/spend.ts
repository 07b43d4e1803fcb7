/**
 * Spend counters for budgets: each counts the units (tokens, nano-dollars) spent in one period, with the
 * estimates of sends still running reserved in it. A send is admitted if and only if every counter it spends from
 * has something left, atomically, and reserves its estimate in each (no more than is left); when the send ends
 * its reservation is settled to what it really spent. So admissions stop exactly at the limit, and spend can pass
 * it only by what the one send that took the last of it used beyond its reservation.
 */
export interface SpendCounter {
  /** e.g. `budget:bdg_1:1764547200000` (the budget and its period's start), so a new period starts at zero. */
  key: string;
  /** Whole units ≥ 0. */
  limit: number;
  /** How long the counter is kept after its last change (past its period's end). */
  ttlMs: number;
  /**
   * What was spent in the period before this meter held the counter (from stored usage), asked only when the
   * counter is new to the meter, so a restart or a new gateway does not start the period over.
   */
  seed(): Promise<number>;
}

export type Reservation =
  | {
      allowed: true;
      /** Each counter's spend, reservations included, after this one: in the order given. */
      spent: number[];
      /** The amounts reserved (each estimate, or what was left when less), to settle. */
      amounts: number[];
    }
  | {
      allowed: false;
      /** The first counter (by its index in the order given) with nothing left. */
      refused: number;
      /** Each counter's spend, reservations included, as it stands. */
      spent: number[];
    };

export interface SpendMeter {
  /**
   * Reserves `amounts[i]` (at most what is left) in `counters[i]`, for every i or for none: none when any
   * counter's spend has reached its limit.
   * @throws LimiterUnavailableError when the backing store cannot decide (fail closed).
   */
  reserve(counters: readonly SpendCounter[], amounts: readonly number[]): Promise<Reservation>;
  /**
   * Replaces reserved amounts by the ones spent (`actual[i]` for `reserved[i]`) and answers each counter's spend
   * after. A counter that expired meanwhile is left alone (its period is over) and answers null.
   */
  settle(
    keys: readonly string[],
    reserved: readonly number[],
    actual: readonly number[],
  ): Promise<(number | null)[]>;
  /** Each counter's spend as the meter holds it, null for a counter it does not hold. */
  peek(keys: readonly string[]): Promise<(number | null)[]>;
}

/** Whole, non-negative, safe: anything else is a programming error. */
export function validateAmounts(counters: readonly { key: string }[], amounts: readonly number[]): void {
  if (counters.length !== amounts.length) throw new RangeError("one amount per counter");
  if (new Set(counters.map((c) => c.key)).size !== counters.length)
    throw new RangeError("a counter listed twice");
  for (const amount of amounts) {
    if (!Number.isSafeInteger(amount) || amount < 0)
      throw new RangeError(`amount ${amount} is not a whole number ≥ 0`);
  }
}
