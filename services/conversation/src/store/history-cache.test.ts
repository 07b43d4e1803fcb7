import { describe, expect, it } from "vitest";
import { HistoryCache } from "./history-cache.js";

const turn = (role: "user" | "assistant", text: string) => ({ role, text, tokens: text.length });
const tokensOf = (text: string) => text.length;
const limits = { maxTurns: 4, tokenBudget: 12 };

describe("HistoryCache", () => {
  it("returns the cached window oldest first, without replies left at its start", () => {
    const cache = new HistoryCache(1000);
    cache.set("c", limits, [turn("assistant", "ccc"), turn("user", "bbb"), turn("assistant", "aaa")]);
    expect(cache.get("c", limits)).toEqual([
      { role: "user", text: "bbb" },
      { role: "assistant", text: "ccc" },
    ]);
  });

  it("answers only for the limits the window was read with", () => {
    const cache = new HistoryCache(1000);
    cache.set("c", limits, [turn("user", "a")]);
    expect(cache.get("c", { maxTurns: 5, tokenBudget: 12 })).toBeUndefined();
    expect(cache.get("other", limits)).toBeUndefined();
  });

  it("moves the cut forward as turns are appended, by turns and by budget", () => {
    const cache = new HistoryCache(1000);
    cache.set("c", limits, [turn("assistant", "bb"), turn("user", "aa")]);
    cache.append(
      "c",
      [
        { role: "user", text: "cc" },
        { role: "assistant", text: "dd" },
      ],
      tokensOf,
    );
    expect(cache.get("c", limits)?.map((t) => t.text)).toEqual(["aa", "bb", "cc", "dd"]);
    // Five turns: over the limit of four.
    cache.append("c", [{ role: "user", text: "e" }], tokensOf);
    expect(cache.get("c", limits)?.map((t) => t.text)).toEqual(["cc", "dd", "e"]);
    // Over the budget of 12 tokens: "cc" goes too, and "dd", a reply, is not returned at the start.
    cache.append("c", [{ role: "assistant", text: "ffffffff" }], tokensOf);
    expect(cache.get("c", limits)?.map((t) => t.text)).toEqual(["e", "ffffffff"]);
  });

  it("ignores appends to a conversation it does not hold", () => {
    const cache = new HistoryCache(1000);
    cache.append("c", [{ role: "user", text: "a" }], tokensOf);
    expect(cache.get("c", limits)).toBeUndefined();
  });

  it("drops the least recently used windows beyond its size", () => {
    const cache = new HistoryCache(10);
    cache.set("a", limits, [turn("user", "aaaa")]);
    cache.set("b", limits, [turn("user", "bbbb")]);
    cache.get("a", limits);
    cache.set("c", limits, [turn("user", "cccc")]);
    expect(cache.get("b", limits)).toBeUndefined();
    expect(cache.get("a", limits)).toBeDefined();
    expect(cache.get("c", limits)).toBeDefined();
    // A window larger than the whole cache is not kept.
    cache.set("d", limits, [turn("user", "d".repeat(11))]);
    expect(cache.get("d", limits)).toBeUndefined();
  });
});
