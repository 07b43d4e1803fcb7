import { describe, expect, it } from "vitest";
import { turnTokens } from "./history.js";
import { buildPrompt, contextSection, systemPrompt } from "./prompt.js";

const empty = { name: "", bio: [], personality: {}, knowledge: [], goals: [] };

describe("systemPrompt", () => {
  it("holds every part of the profile, in order", () => {
    const prompt = systemPrompt({
      name: "Ada",
      bio: ["Born 1815"],
      personality: { tone: "warm", quirks: ["puns", 3, true], nested: { a: 1 } },
      knowledge: ["maths"],
      goals: ["teach"],
    });
    expect(prompt).toBe(
      [
        "You are Ada. Stay in character and answer as Ada.",
        "About you:\n- Born 1815",
        'Your personality and communication style:\n- tone: warm\n- quirks: puns, 3, true\n- nested: {"a":1}',
        "Your areas of knowledge:\n- maths",
        "Your goals:\n- teach",
      ].join("\n\n"),
    );
  });

  it("leaves out empty parts, blank items and empty personality traits", () => {
    expect(systemPrompt({ ...empty, name: "Bo" })).toBe("You are Bo. Stay in character and answer as Bo.");
    expect(
      systemPrompt({
        ...empty,
        name: "Bo",
        bio: ["  ", ""],
        personality: { tone: "", list: [], obj: {}, x: null },
      }),
    ).toBe("You are Bo. Stay in character and answer as Bo.");
    expect(systemPrompt({ ...empty, goals: ["win"] })).toBe("Your goals:\n- win");
    expect(systemPrompt(empty)).toBe("");
  });
});

describe("contextSection", () => {
  it("gives the caller's context as JSON, or nothing", () => {
    expect(contextSection({ a: [1, "b"] })).toContain('{"a":[1,"b"]}');
    expect(contextSection({})).toBe("");
    expect(contextSection(undefined)).toBe("");
  });
});

describe("buildPrompt", () => {
  const history = [
    { role: "user" as const, text: "a".repeat(40) },
    { role: "assistant" as const, text: "b".repeat(40) },
    { role: "user" as const, text: "c".repeat(40) },
    { role: "assistant" as const, text: "d".repeat(40) },
  ];

  it("puts the profile before the context, and the new message last", () => {
    const prompt = buildPrompt({
      profile: { ...empty, name: "Ada" },
      context: { k: "v" },
      history: [],
      text: "hello",
      historyLimits: { maxTurns: 200, tokenBudget: 100 },
    });
    expect(prompt.system.indexOf("You are Ada")).toBe(0);
    expect(prompt.system).toContain('{"k":"v"}');
    expect(prompt.messages).toEqual([{ role: "user", text: "hello" }]);
  });

  it("sends the history that fits its limits, then the new message", () => {
    const cost = turnTokens("a".repeat(40));
    const kept = (maxTurns: number, tokenBudget: number) =>
      buildPrompt({
        profile: empty,
        context: undefined,
        history,
        text: "new",
        historyLimits: { maxTurns, tokenBudget },
      }).messages.map((m) => m.text[0]);
    expect(kept(200, cost * 4)).toEqual(["a", "b", "c", "d", "n"]);
    expect(kept(200, cost * 4 - 1)).toEqual(["c", "d", "n"]);
    expect(kept(3, cost * 4)).toEqual(["c", "d", "n"]);
    expect(kept(200, 0)).toEqual(["n"]);
  });
});
