import type { HistoryTurn } from "./types.js";

/**
 * The turns a history read returned, newest first, as `recentTurns` returns them: oldest first, without the
 * replies that the cut left at the start (some providers require the first message to be the user's).
 */
export function oldestFirst(newestFirst: HistoryTurn[]): HistoryTurn[] {
  while (newestFirst.at(-1)?.role === "assistant") newestFirst.pop();
  return newestFirst.reverse();
}
