/** The longest unit, in tokens, whose repetition ends a reply. */
export const LOOP_MAX_PERIOD = 16;
/** Tokens a repeated run must span before it ends a reply: a short run (a divider, a list's "- ") is text. */
export const LOOP_MIN_RUN = 32;
/** Times a unit must follow itself, so that a long unit needs a long run. */
export const LOOP_MIN_REPEATS = 3;

export interface LoopBounds {
  maxPeriod: number;
  minRun: number;
  minRepeats: number;
}

/**
 * Watches a reply's tokens for a degenerate loop: the same token, or the same short sequence of up to
 * `maxPeriod` tokens, repeated back to back over at least `minRun` tokens (and at least `minRepeats` times).
 * A small model can fall into such a loop ("＋＋＋…", one list item over and over) and would otherwise
 * generate it until the token limit. The repetition penalty makes loops rarer; this ends the ones that remain.
 *
 * For each period p it keeps how many of the latest tokens equal the token p before them: a run of a
 * p-token unit spans that count plus p tokens. Each token costs O(maxPeriod).
 */
export class LoopDetector {
  private readonly recent: number[] = [];
  /** matches[p]: how many of the latest tokens, back to back, equal the token p positions before each. */
  private readonly matches: number[];
  private readonly bounds: LoopBounds;

  constructor(bounds: Partial<LoopBounds> = {}) {
    this.bounds = {
      maxPeriod: bounds.maxPeriod ?? LOOP_MAX_PERIOD,
      minRun: bounds.minRun ?? LOOP_MIN_RUN,
      minRepeats: bounds.minRepeats ?? LOOP_MIN_REPEATS,
    };
    this.matches = new Array<number>(this.bounds.maxPeriod + 1).fill(0);
  }

  /** Adds the tokens just generated; true once the reply has fallen into a loop. */
  push(tokens: Iterable<number>): boolean {
    let looping = false;
    for (const token of tokens) looping = this.add(token) || looping;
    return looping;
  }

  private add(token: number): boolean {
    const { maxPeriod, minRun, minRepeats } = this.bounds;
    const recent = this.recent;
    recent.push(token);
    // Only the last maxPeriod + 1 tokens are ever compared.
    if (recent.length > maxPeriod + 1) recent.shift();
    const last = recent.length - 1;
    let looping = false;
    for (let period = 1; period <= maxPeriod; period++) {
      const earlier = recent[last - period];
      this.matches[period] = earlier !== undefined && earlier === token ? this.matches[period]! + 1 : 0;
      const run = this.matches[period]! + period;
      if (this.matches[period]! > 0 && run >= Math.max(minRun, minRepeats * period)) looping = true;
    }
    return looping;
  }
}
