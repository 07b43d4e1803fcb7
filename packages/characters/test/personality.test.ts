import { describe, expect, it } from "vitest";
import { characterTraits, type ExampleLine, importCharacter, spokenByCharacter } from "../src/index.js";
import { corpusFile } from "../src/testing/index.js";

describe("characterTraits", () => {
  it("reads what the prompt uses of an imported character", () => {
    const result = importCharacter(corpusFile("v0-mixed-generations.json"));
    if (!result.ok) throw new Error("refused");
    expect(characterTraits(result.agent.personality)).toEqual({
      system: undefined,
      lore: ["Her cat co-hosts the podcast."],
      topics: [],
      adjectives: [],
      guidelines: ["folksy"],
      examples: [
        [
          { speaker: "{{user1}}", text: "Any tea for a cold?" },
          { speaker: "Bramble", text: "Thyme, honey, lemon. And bed." },
        ],
        [
          { speaker: "{{name1}}", text: "Is this mushroom safe?" },
          { speaker: "Bramble", text: "Never trust a picture. Bring it to someone who can hold it." },
        ],
      ],
      plain: [],
    });
  });

  it("leaves keys of another shape, and other keys, to be shown as plain traits", () => {
    const traits = characterTraits({
      style: "formal",
      tone: "dry",
      topics: ["engines"],
      lore: "one story",
      knowledgeSources: [{ position: 0, source: { path: "x" } }],
      templates: { a: "b" },
    });
    expect(traits.topics).toEqual(["engines"]);
    expect(traits.guidelines).toEqual([]);
    expect(traits.plain).toEqual(["style", "tone", "lore"]);
  });

  it("drops example messages without text (an action alone)", () => {
    const traits = characterTraits({
      messageExamples: [
        [
          { user: "{{user1}}", content: { text: "Thanks." } },
          { user: "Archivist", content: { text: "", action: "IGNORE" } },
        ],
      ],
    });
    expect(traits.examples).toEqual([[{ speaker: "{{user1}}", text: "Thanks." }]]);
  });
});

describe("spokenByCharacter", () => {
  const lines = (...speakers: string[]): ExampleLine[] => speakers.map((speaker) => ({ speaker, text: "t" }));

  it("is the agent's name, in any case, or a placeholder for the character", () => {
    const conversation = lines("{{user1}}", "Ada");
    expect(spokenByCharacter("Ada", conversation, "ada")).toBe(true);
    expect(spokenByCharacter("{{user1}}", conversation, "Ada")).toBe(false);
    expect(spokenByCharacter("{{agentName}}", lines("{{name1}}", "{{agentName}}"), "Ada")).toBe(true);
  });

  it("is any speaker but the other party's placeholder when the agent's name is not in the conversation", () => {
    const conversation = lines("{{user1}}", "Old Name");
    expect(spokenByCharacter("Old Name", conversation, "New Name")).toBe(true);
    expect(spokenByCharacter("{{user1}}", conversation, "New Name")).toBe(false);
  });
});
