import { SizedLru } from "@agentry/core";
import { firstPromptTurn, withinLimits } from "../history.js";
import type { HistoryLimits, HistoryTurn } from "./types.js";

/** A turn of a cached window, with what it costs the budget. */
interface WindowTurn extends HistoryTurn {
  tokens: number;
}

/** The newest turns of one conversation that fit its limits, oldest first, as a history read found them. */
interface Window {
  limits: HistoryLimits;
  turns: WindowTurn[];
  tokens: number;
  chars: number;
}

/**
 * The history windows of recently used conversations, so a message to a conversation read before needs no read
 * of its turns: the window a read found, kept up to date by appending each stored exchange. That is exact,
 * because a turn that fell out of a conversation's window can never come back into it: newer turns only push the
 * cut forward. Least recently used windows are dropped beyond `maxChars` characters of text in all.
 *
 * The cache knows only what its own store writes: the store clears it whenever anyone else may have written
 * (another connection to the same database, a purge).
 */
export class HistoryCache {
  private readonly windows: SizedLru<string, Window>;

  constructor(maxChars: number) {
    this.windows = new SizedLru(maxChars);
  }

  /** The history `recentTurns` returns for the conversation, if its window for these limits is cached. */
  get(id: string, limits: HistoryLimits): HistoryTurn[] | undefined {
    const window = this.windows.get(id);
    if (!window || !sameLimits(window.limits, limits)) return undefined;
    const turns: HistoryTurn[] = [];
    for (let i = firstPromptTurn(window.turns); i < window.turns.length; i++) {
      const turn = window.turns[i]!;
      turns.push({ role: turn.role, text: turn.text });
    }
    return turns;
  }

  /** Caches a window a read found: the turns that fit, newest first, each with its cost. */
  set(id: string, limits: HistoryLimits, newestFirst: readonly WindowTurn[]): void {
    const turns = newestFirst.toReversed();
    const window: Window = { limits, turns, tokens: 0, chars: 0 };
    for (const turn of turns) {
      window.tokens += turn.tokens;
      window.chars += turn.text.length;
    }
    this.windows.set(id, window, window.chars);
  }

  /** Appends turns just stored to the conversation's window, if it is cached, and moves its cut forward. */
  append(id: string, turns: readonly HistoryTurn[], tokensOf: (text: string) => number): void {
    const window = this.windows.get(id);
    if (!window) return;
    for (const turn of turns) {
      const tokens = tokensOf(turn.text);
      window.turns.push({ role: turn.role, text: turn.text, tokens });
      window.tokens += tokens;
      window.chars += turn.text.length;
    }
    let cut = 0;
    while (
      cut < window.turns.length &&
      !withinLimits(window.turns.length - cut, window.tokens, window.limits)
    ) {
      const dropped = window.turns[cut]!;
      window.tokens -= dropped.tokens;
      window.chars -= dropped.text.length;
      cut++;
    }
    if (cut > 0) window.turns.splice(0, cut);
    // Set again: its size changed.
    this.windows.set(id, window, window.chars);
  }

  delete(id: string): void {
    this.windows.delete(id);
  }

  clear(): void {
    this.windows.clear();
  }
}

function sameLimits(a: HistoryLimits, b: HistoryLimits): boolean {
  return a.maxTurns === b.maxTurns && a.tokenBudget === b.tokenBudget;
}
