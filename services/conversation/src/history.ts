import type { HistoryLimits, HistoryTurn } from "./store/types.js";

/*
 * What history fits a prompt. The prompt builder makes the exact cut (`fitHistory`); stores read back only what
 * that cut can keep, by the same costs and limits, so that a message to a long conversation reads its recent
 * turns, not all of them.
 */

/** The most turns of history one prompt uses. */
export const MAX_HISTORY_TURNS = 200;

/** About four characters per token for English text. */
export const CHARACTERS_PER_TOKEN = 4;

/** Per-message overhead of the chat formats (role markers, separators), in tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * A rough token count. It only decides how much history fits the budget, so being approximate costs a turn more
 * or less of context, never a failed call.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARACTERS_PER_TOKEN);
}

/** What one turn of history costs the budget: its text and the chat format's overhead. */
export function turnTokens(text: string): number {
  return estimateTokens(text) + MESSAGE_OVERHEAD_TOKENS;
}

/** Whether the newest `turns` turns of a history, costing `tokens` together, fit the limits. */
export function withinLimits(turns: number, tokens: number, limits: HistoryLimits): boolean {
  return turns <= limits.maxTurns && tokens <= limits.tokenBudget;
}

/**
 * Where a history, oldest first, may start from `start` on: past the replies there, since some providers require
 * the first message to be the user's.
 */
export function firstPromptTurn(oldestFirst: readonly HistoryTurn[], start = 0): number {
  let first = start;
  while (oldestFirst[first]?.role === "assistant") first++;
  return first;
}

/**
 * The history a prompt sends: the most recent turns that fit the limits, counted back from the newest and cut at
 * the first that does not fit (so the cut falls between turns and never skips one), without the replies the cut
 * leaves at the start.
 */
export function fitHistory<T extends HistoryTurn>(oldestFirst: readonly T[], limits: HistoryLimits): T[] {
  let start = oldestFirst.length;
  let tokens = 0;
  while (start > 0) {
    const cost = turnTokens(oldestFirst[start - 1]!.text);
    if (!withinLimits(oldestFirst.length - start + 1, tokens + cost, limits)) break;
    tokens += cost;
    start--;
  }
  return oldestFirst.slice(firstPromptTurn(oldestFirst, start));
}

/** A history a store read newest first, already cut by the limits, in the order and shape a prompt takes it. */
export function oldestFirst<T extends HistoryTurn>(newestFirst: T[]): T[] {
  const turns = newestFirst.reverse();
  turns.splice(0, firstPromptTurn(turns));
  return turns;
}
