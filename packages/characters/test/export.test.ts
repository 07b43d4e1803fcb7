import { describe, expect, it } from "vitest";
import {
  type AgentFields,
  characterFileName,
  exportCharacter,
  exportedCharacterFile,
  importCharacter,
} from "../src/index.js";
import { corpusFile } from "../src/testing/index.js";

/** The fields an elizaOS 1.x loader accepts at the top of a character file; it refuses any other. */
const ELIZA_1X_FIELDS = [
  "id",
  "name",
  "username",
  "system",
  "templates",
  "bio",
  "messageExamples",
  "postExamples",
  "topics",
  "adjectives",
  "knowledge",
  "plugins",
  "settings",
  "secrets",
  "style",
];

const agent: AgentFields = {
  name: "Ada",
  bio: ["Mathematician"],
  personality: {
    tone: "dry",
    style: "formal",
    topics: ["engines"],
    lore: ["Wrote the first program."],
    messageExamples: [[{ user: "{{user1}}", content: { text: "hi" } }]],
    knowledgeSources: [{ position: 1, source: { path: "notes.md" } }],
  },
  knowledge: ["analysis", "poetry"],
  goals: ["teach"],
  clients: ["discord"],
  settings: { temperature: 0.5, model: "own", secrets: { API_KEY: "sk-never-leaves" } },
  modelProvider: "anthropic",
  model: "claude-x",
  plugins: ["search", { name: "calendar", enabled: false, config: { region: "eu" } }],
};

describe("exportCharacter", () => {
  const file = exportCharacter(agent);

  it("writes an elizaOS 1.x file: 1.x fields only at the top, the rest under settings.agentry", () => {
    expect(exportedCharacterFile.safeParse(file).success).toBe(true);
    for (const key of Object.keys(file)) expect(ELIZA_1X_FIELDS).toContain(key);
    expect(file).toMatchObject({
      name: "Ada",
      bio: ["Mathematician"],
      topics: ["engines"],
      knowledge: ["analysis", { path: "notes.md" }, "poetry"],
      plugins: ["search", "calendar"],
      settings: {
        temperature: 0.5,
        model: "claude-x",
        agentry: {
          modelProvider: "anthropic",
          goals: ["teach"],
          clients: ["discord"],
          plugins: ["search", { name: "calendar", enabled: false, config: { region: "eu" } }],
          personality: {
            tone: "dry",
            style: "formal",
            lore: ["Wrote the first program."],
            messageExamples: [[{ user: "{{user1}}", content: { text: "hi" } }]],
          },
          settings: { model: "own" },
        },
      },
    });
  });

  it("empties the secrets", () => {
    expect(file.secrets).toEqual({});
    expect(file.settings.secrets).toEqual({});
    expect(JSON.stringify(file)).not.toContain("sk-never-leaves");
  });

  it("gives back the agent when imported, secrets apart", () => {
    const result = importCharacter(JSON.parse(JSON.stringify(file)));
    expect(result.ok && result.agent).toEqual({
      ...agent,
      settings: { temperature: 0.5, model: "own" },
    });
  });

  it("writes the examples of an imported v0.x file as 1.x messages", () => {
    const imported = importCharacter(corpusFile("v0-classic-openai.json"));
    if (!imported.ok) throw new Error("refused");
    const exported = exportCharacter(imported.agent);
    expect(exported.messageExamples?.[0]?.[1]).toEqual({
      name: "Marlowe",
      content: { text: "Depends. Does he want to be found?" },
    });
    expect(exported.system).toMatch(/^You are Marlowe/);
    expect(exported.settings.agentry?.personality).toMatchObject({ sourceModelProvider: "openai" });
  });
});

describe("characterFileName", () => {
  it.each([
    ["Ada Lovelace", "ada-lovelace.character.json"],
    ["  Zoë Ångström! ", "zoe-angstrom.character.json"],
    ["日本語", "agent.character.json"],
    ["../../etc/passwd", "etc-passwd.character.json"],
    ["x".repeat(200), `${"x".repeat(64)}.character.json`],
  ])("%j → %s", (name, expected) => {
    expect(characterFileName(name)).toBe(expected);
  });
});
