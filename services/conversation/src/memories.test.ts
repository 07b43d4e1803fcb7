import { describe, expect, it } from "vitest";
import {
  fuseRankings,
  MAX_MEMORIES_PER_TURN,
  memoryEnabled,
  memoryKey,
  memoryLimit,
  memorySection,
  newFacts,
  newMemory,
  parseFacts,
  searchTerms,
} from "./memories.js";
import type { MemoryRecord } from "./store/types.js";

describe("memoryKey", () => {
  it("compares memories without case, punctuation or spacing", () => {
    expect(memoryKey("The user likes  TEA.")).toBe(memoryKey("the user likes tea"));
    expect(memoryKey("Café, crème!")).toBe("café crème");
    expect(memoryKey("?!")).toBe("");
  });
});

describe("newMemory", () => {
  it("trims, and refuses a learnt memory without a letter or digit, or any over 1,000 characters", () => {
    expect(newMemory("  two\n words ", null)).toMatchObject({ text: "two words", key: "two words" });
    expect(newMemory("...", "msg_1")).toBeNull();
    expect(newMemory(" =) ", null)).toMatchObject({ text: "=)", key: "=)" });
    expect(newMemory("😀".repeat(1000), null)?.text).toBe("😀".repeat(1000));
    expect(newMemory("a".repeat(1001), null)).toBeNull();
    expect(newMemory("a".repeat(1000), "msg_1")?.sourceMessageId).toBe("msg_1");
  });
});

describe("searchTerms", () => {
  it("keeps distinct words of two characters or more that say something, safe for either store's syntax", () => {
    expect(searchTerms(`What's my "favourite" colour? a OR b* colour, user`)).toEqual([
      "favourite",
      "colour",
    ]);
    expect(searchTerms("one two three", 2)).toEqual(["one", "two"]);
    expect(searchTerms("What is it?")).toEqual([]);
  });
});

describe("parseFacts", () => {
  it("reads the facts of the answer's JSON, wrapped in prose or a code fence or not", () => {
    expect(parseFacts('{"facts": ["a", "b"]}')).toEqual(["a", "b"]);
    expect(parseFacts('Sure!\n```json\n{"facts": ["a"]}\n```\nAnything else?')).toEqual(["a"]);
    expect(parseFacts('["a", 3, null, "b"]')).toEqual(["a", "b"]);
    expect(parseFacts('{"facts": ["a"]} and {"more": 1}')).toEqual(["a"]);
  });

  it("reads no facts from anything else", () => {
    expect(parseFacts("I cannot help with that.")).toEqual([]);
    expect(parseFacts('{"facts": "a"}')).toEqual([]);
    expect(parseFacts('{"facts": [')).toEqual([]);
    expect(parseFacts("")).toEqual([]);
  });
});

describe("newFacts", () => {
  const known = [{ text: "The user likes tea." }] as MemoryRecord[];

  it("keeps new, distinct, well-formed facts, at most a few per turn", () => {
    const facts = ["the user likes TEA", "The user has a cat.", "the user has a cat", "", "x".repeat(1001)];
    expect(newFacts(facts, known, "msg_1").map((m) => m.text)).toEqual(["The user has a cat."]);
    const many = Array.from({ length: 9 }, (_, i) => `fact ${i}`);
    expect(newFacts(many, [], "msg_1")).toHaveLength(MAX_MEMORIES_PER_TURN);
  });
});

describe("settings and the prompt section", () => {
  it("is on unless settings.memory is false, with the default limit unless set", () => {
    expect(memoryEnabled(undefined)).toBe(true);
    expect(memoryEnabled({ memory: false })).toBe(false);
    expect(memoryLimit({})).toBe(100);
    expect(memoryLimit({ memoryLimit: 7 })).toBe(7);
  });

  it("lists the memories under their heading, and is empty without any", () => {
    expect(memorySection([{ text: "a" }, { text: "b" }])).toBe(
      "What you remember about this user from earlier conversations:\n- a\n- b",
    );
    expect(memorySection([])).toBe("");
  });
});

describe("fuseRankings", () => {
  const items = (...ids: string[]) => ids.map((id) => ({ id }));

  it("ranks first what both rankings place well, and keeps one ranking's order alone", () => {
    const fused = fuseRankings([items("a", "b", "c"), items("c", "d", "a")], 3);
    // a: 1/61 + 1/63; c: 1/63 + 1/61 (a tie, the first ranking's order); then b and d by one rank each.
    expect(fused.map((item) => item.id)).toEqual(["a", "c", "b"]);
    expect(fuseRankings([items("x", "y", "z")], 2).map((item) => item.id)).toEqual(["x", "y"]);
    expect(fuseRankings([[], items("v", "w")], 5).map((item) => item.id)).toEqual(["v", "w"]);
  });
});
