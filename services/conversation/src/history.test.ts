import { describe, expect, it } from "vitest";
import {
  estimateTokens,
  firstPromptTurn,
  fitHistory,
  MESSAGE_OVERHEAD_TOKENS,
  oldestFirst,
  turnTokens,
  withinLimits,
} from "./history.js";
import type { HistoryTurn } from "./store/types.js";

const user = (text: string): HistoryTurn => ({ role: "user", text });
const reply = (text: string): HistoryTurn => ({ role: "assistant", text });

describe("turn costs", () => {
  it("are a quarter token per character, rounded up, plus the chat format's overhead", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(2);
    expect(turnTokens("a".repeat(40))).toBe(10 + MESSAGE_OVERHEAD_TOKENS);
    // UTF-16 units: an astral character counts twice.
    expect(estimateTokens("🙂🙂")).toBe(1);
  });

  it("fit while both the turns and the tokens are within the limits, each limit included", () => {
    const limits = { maxTurns: 3, tokenBudget: 30 };
    expect(withinLimits(3, 30, limits)).toBe(true);
    expect(withinLimits(4, 30, limits)).toBe(false);
    expect(withinLimits(3, 31, limits)).toBe(false);
    expect(withinLimits(0, 0, { maxTurns: 0, tokenBudget: 0 })).toBe(true);
  });
});

describe("fitHistory", () => {
  // Every turn costs 14 tokens (40 characters).
  const turn = (tag: string) => tag.padEnd(40, ".");
  const history = [user(turn("q1")), reply(turn("a1")), user(turn("q2")), reply(turn("a2"))];
  const kept = (maxTurns: number, tokenBudget: number) =>
    fitHistory(history, { maxTurns, tokenBudget }).map((t) => t.text.slice(0, 2));

  it("keeps the most recent turns within the budget, cut between turns", () => {
    expect(kept(200, 4 * 14)).toEqual(["q1", "a1", "q2", "a2"]);
    expect(kept(200, 2 * 14)).toEqual(["q2", "a2"]);
    expect(kept(200, 13)).toEqual([]);
  });

  it("keeps at most maxTurns", () => {
    expect(kept(4, 1000)).toEqual(["q1", "a1", "q2", "a2"]);
    expect(kept(2, 1000)).toEqual(["q2", "a2"]);
    expect(kept(0, 1000)).toEqual([]);
  });

  it("never starts with a reply: the replies the cut leaves first go too", () => {
    expect(kept(200, 3 * 14)).toEqual(["q2", "a2"]);
    expect(kept(3, 1000)).toEqual(["q2", "a2"]);
    expect(kept(1, 1000)).toEqual([]);
    expect(fitHistory([reply("x"), reply("y"), user("z")], { maxTurns: 10, tokenBudget: 100 })).toEqual([
      user("z"),
    ]);
  });

  it("stops at the first turn that does not fit, though an older one would", () => {
    const long = [user("q"), reply("r".repeat(400)), user("q2"), reply("a2")];
    // q2 and a2 cost 5 each, the long reply 104: it does not fit in 110, and q (5) would, but the cut is made.
    expect(fitHistory(long, { maxTurns: 200, tokenBudget: 110 })).toEqual([user("q2"), reply("a2")]);
  });

  it("returns the caller's turns, in a new list", () => {
    const turns = [user("q"), reply("a")];
    const fitted = fitHistory(turns, { maxTurns: 200, tokenBudget: 100 });
    expect(fitted).toEqual(turns);
    expect(fitted).not.toBe(turns);
    expect(fitted[0]).toBe(turns[0]);
  });
});

describe("oldestFirst", () => {
  it("turns a read newest first into the prompt's order, without replies at the start", () => {
    expect(oldestFirst([reply("a2"), user("q2"), reply("a1")])).toEqual([user("q2"), reply("a2")]);
    expect(oldestFirst([reply("a1")])).toEqual([]);
    expect(oldestFirst([])).toEqual([]);
  });

  it("agrees with fitHistory on a read cut by the same limits", () => {
    const history = [reply("a0"), user("q1"), reply("a1"), user("q2"), reply("a2")];
    for (let maxTurns = 0; maxTurns <= history.length; maxTurns++) {
      const read = history.slice(history.length - maxTurns).reverse();
      expect(oldestFirst(read)).toEqual(fitHistory(history, { maxTurns, tokenBudget: 1000 }));
    }
  });
});

describe("firstPromptTurn", () => {
  it("skips the replies from where the history starts", () => {
    const turns = [reply("a"), user("q"), reply("b"), reply("c"), user("r")];
    expect(firstPromptTurn(turns)).toBe(1);
    expect(firstPromptTurn(turns, 2)).toBe(4);
    expect(firstPromptTurn(turns, 5)).toBe(5);
  });
});
