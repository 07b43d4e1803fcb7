import { importCharacter } from "@agentry/characters";
import { corpusFile } from "@agentry/characters/testing";
import type { JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { turnTokens } from "./history.js";
import {
  type AgentProfile,
  buildPrompt,
  contextSection,
  EXAMPLE_BUDGET_SHARE,
  exampleTurns,
  MAX_EXAMPLE_CONVERSATIONS,
  suppliedPrompt,
  systemPrompt,
} from "./prompt.js";

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
  it("puts what is remembered of the user after the profile and before the message's context", () => {
    const prompt = buildPrompt({
      profile: { ...empty, name: "Ada" },
      context: { k: "v" },
      history: [],
      text: "hello",
      memories: [{ text: "The user likes tea." }],
      historyLimits: { maxTurns: 200, tokenBudget: 100 },
    });
    const memories = prompt.system.indexOf("What you remember about this user");
    expect(memories).toBeGreaterThan(prompt.system.indexOf("You are Ada"));
    expect(prompt.system.indexOf('{"k":"v"}')).toBeGreaterThan(memories);
    expect(prompt.system).toContain("\n- The user likes tea.");
  });

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

/** An imported character's profile, as the service reads it from the agent. */
function characterProfile(file: string): AgentProfile {
  const result = importCharacter(corpusFile(file));
  if (!result.ok) throw new Error(`${file} was refused`);
  const { name, bio, personality, knowledge, goals } = result.agent;
  return { name, bio, personality, knowledge, goals };
}

describe("the prompt of an imported character", () => {
  const history = [
    { role: "user" as const, text: "Earlier question." },
    { role: "assistant" as const, text: "Earlier answer." },
  ];
  const prompt = (file: string, tokenBudget = 3000) =>
    buildPrompt({
      profile: characterProfile(file),
      context: undefined,
      history,
      text: "Who are you?",
      historyLimits: { maxTurns: 200, tokenBudget },
    });

  it("v0.x: system replaces the opening line; lore, traits, topics and style follow; examples come first", () => {
    const built = prompt("v0-classic-openai.json");
    expect(built.system).toMatchInlineSnapshot(`
      "You are Marlowe, a tired private investigator who answers in short, dry sentences.

      About you:
      - Marlowe has worked the night shift of a city that never sleeps for twenty years.

      Your background:
      - Once found a missing cat in the mayor's limousine.
      - Keeps a bottle of cheap rye in the second drawer and never opens it.

      You are laconic, observant, weary.

      Topics you know well and like to talk about: crime, the city at night, old cars.

      How you write your replies:
      - short sentences
      - no exclamation marks
      - answer questions with a question when cornered

      Your areas of knowledge:
      - Most cases are about money.
      - The harbour closes at midnight.

      The first 4 messages below are example conversations that show how you talk; they are not part of this conversation."
    `);
    expect(built.messages).toMatchInlineSnapshot(`
      [
        {
          "role": "user",
          "text": "Can you find my brother?",
        },
        {
          "role": "assistant",
          "text": "Depends. Does he want to be found?",
        },
        {
          "role": "user",
          "text": "Tell me more.",
        },
        {
          "role": "assistant",
          "text": "The rest costs extra.",
        },
        {
          "role": "user",
          "text": "Earlier question.",
        },
        {
          "role": "assistant",
          "text": "Earlier answer.",
        },
        {
          "role": "user",
          "text": "Who are you?",
        },
      ]
    `);
  });

  it("1.x: the same from 1.x fields", () => {
    const built = prompt("v1-sage.json");
    expect(built.system).toMatchInlineSnapshot(`
      "Respond as Sage, a calm meditation teacher. Keep answers under four sentences.

      About you:
      - Teaches breathing exercises to people who think they have no time for them.
      - Spent ten years in a monastery and ten in a call centre.

      You are calm, kind, practical.

      Topics you know well and like to talk about: meditation, sleep, stress.

      How you write your replies:
      - plain words
      - no jargon
      - end with one small suggestion

      Your areas of knowledge:
      - Box breathing: four counts in, hold, out, hold.

      The first 4 messages below are example conversations that show how you talk; they are not part of this conversation."
    `);
    expect(built.messages).toMatchInlineSnapshot(`
      [
        {
          "role": "user",
          "text": "I can't sleep.",
        },
        {
          "role": "assistant",
          "text": "Breathe in for four, hold for seven, out for eight. Twice.",
        },
        {
          "role": "user",
          "text": "Is meditation a waste of time?",
        },
        {
          "role": "assistant",
          "text": "Only the time you spend arguing about it.",
        },
        {
          "role": "user",
          "text": "Earlier question.",
        },
        {
          "role": "assistant",
          "text": "Earlier answer.",
        },
        {
          "role": "user",
          "text": "Who are you?",
        },
      ]
    `);
  });

  it("grouped examples: the default opening line, and the examples as turns", () => {
    const built = prompt("v1-grouped-examples.json");
    expect(built.system.split("\n\n")[0]).toBe("You are Tinker. Stay in character and answer as Tinker.");
    expect(built.messages.slice(0, 4).map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(built.messages[1]!.text).toMatch(/^Your derailleur limit screw/);
  });
});

describe("example conversations and the budget", () => {
  const line = (name: string, text: string) => ({ name, content: { text } });
  const conversation = (i: number, size = 40) => [
    line("{{user1}}", `q${i}`.padEnd(size, ".")),
    line("Ada", `a${i}`.padEnd(size, ".")),
  ];
  const profile = (examples: unknown[]): AgentProfile => ({
    ...empty,
    name: "Ada",
    personality: { messageExamples: examples as JsonValue[] },
  });
  const cost = 2 * turnTokens("x".repeat(40));

  it(`shows at most ${MAX_EXAMPLE_CONVERSATIONS} conversations, in order`, () => {
    const turns = exampleTurns(profile([0, 1, 2, 3, 4, 5].map((i) => conversation(i))), 100_000);
    expect(turns.map((turn) => turn.text[0] + turn.text[1]!)).toEqual([
      "q0",
      "a0",
      "q1",
      "a1",
      "q2",
      "a2",
      "q3",
      "a3",
    ]);
  });

  it("passes over a conversation that does not fit for a shorter one after it", () => {
    const turns = exampleTurns(profile([conversation(0), conversation(1, 400), conversation(2)]), cost * 2);
    expect(turns.map((turn) => turn.text.slice(0, 2))).toEqual(["q0", "a0", "q2", "a2"]);
  });

  it("starts each with the other party, ends it with the character, and merges what one speaker says twice", () => {
    const turns = exampleTurns(
      profile([
        [
          line("Ada", "opening"),
          line("{{user1}}", "one"),
          line("{{user1}}", "two"),
          line("Ada", "reply"),
          line("{{user1}}", "last"),
        ],
      ]),
      1000,
    );
    expect(turns).toEqual([
      { role: "user", text: "one\ntwo" },
      { role: "assistant", text: "reply" },
    ]);
  });

  it(`takes at most ${EXAMPLE_BUDGET_SHARE * 100}% of the budget; the history has what they leave`, () => {
    const history = [0, 1, 2, 3].flatMap((i) => [
      { role: "user" as const, text: `h${i}`.padEnd(40, ".") },
      { role: "assistant" as const, text: `r${i}`.padEnd(40, ".") },
    ]);
    const build = (examples: unknown[]) =>
      buildPrompt({
        profile: profile(examples),
        context: undefined,
        history,
        text: "new",
        historyLimits: { maxTurns: 200, tokenBudget: cost * 4 },
      }).messages.map((message) => message.text.slice(0, 2));
    // A quarter of four exchanges' worth: one example conversation, and three exchanges of history.
    expect(build([conversation(0), conversation(1)])).toEqual([
      "q0",
      "a0",
      "h1",
      "r1",
      "h2",
      "r2",
      "h3",
      "r3",
      "ne",
    ]);
    expect(build([])).toEqual(["h0", "r0", "h1", "r1", "h2", "r2", "h3", "r3", "ne"]);
  });

  it("says in the system prompt how many messages are examples", () => {
    const built = buildPrompt({
      profile: profile([conversation(0)]),
      context: undefined,
      history: [],
      text: "new",
      historyLimits: { maxTurns: 200, tokenBudget: 3000 },
    });
    expect(built.system).toContain("The first 2 messages below are example conversations");
  });
});

describe("suppliedPrompt", () => {
  const profile: AgentProfile = {
    ...empty,
    name: "Ada",
    personality: {
      messageExamples: [
        [
          { user: "{{user1}}", content: { text: "Hi" } },
          { user: "Ada", content: { text: "Hello" } },
        ],
      ],
    },
  };

  it("is the agent's system prompt, the caller's instructions, then the caller's messages and the new one only", () => {
    const prompt = suppliedPrompt(
      profile,
      {
        system: "Answer briefly.",
        messages: [
          { role: "user", text: "One" },
          { role: "assistant", text: "Two" },
        ],
      },
      "Three",
    );
    expect(prompt.system).toBe(`${systemPrompt(profile)}\n\nAnswer briefly.`);
    // No example conversation, though the agent has one: the caller's messages are the whole conversation.
    expect(exampleTurns(profile, 1000)).not.toEqual([]);
    expect(prompt.messages).toEqual([
      { role: "user", text: "One" },
      { role: "assistant", text: "Two" },
      { role: "user", text: "Three" },
    ]);
  });

  it("joins two messages in a row from one speaker, and keeps the agent's prompt alone without instructions", () => {
    const prompt = suppliedPrompt(profile, { system: " ", messages: [{ role: "user", text: "One" }] }, "Two");
    expect(prompt.system).toBe(systemPrompt(profile));
    expect(prompt.messages).toEqual([{ role: "user", text: "One\n\nTwo" }]);
  });
});
