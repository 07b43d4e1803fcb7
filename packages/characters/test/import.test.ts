import { describe, expect, it } from "vitest";
import {
  ACCEPTED_MODEL_PROVIDERS,
  ELIZA_MODEL_PROVIDERS,
  exportCharacter,
  type ImportResult,
  importCharacter,
} from "../src/index.js";
import { CHARACTER_CORPUS, corpusFile } from "../src/testing/index.js";

function imported(input: unknown, options = {}) {
  const result = importCharacter(input, options);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result;
}

function refused(input: unknown): { field: string; issue: string }[] {
  const result: ImportResult = importCharacter(input);
  if (result.ok) throw new Error("accepted");
  return result.issues;
}

describe("importCharacter, v0.x", () => {
  const { agent, warnings } = imported(corpusFile("v0-groq-trader.json"));

  it("gives the agent its own fields: name, bio, knowledge strings, clients", () => {
    expect(agent.name).toBe("Quill");
    expect(agent.bio).toEqual([
      "Quill reads order books the way others read novels.",
      "Never gives financial advice.",
    ]);
    expect(agent.knowledge).toEqual([
      "A limit order waits for its price.",
      "Slippage is the gap between the price asked and the price paid.",
    ]);
    expect(agent.clients).toEqual(["twitter"]);
    expect(agent.goals).toEqual([]);
  });

  it("keeps file and folder references with their positions, and warns that nothing is read", () => {
    expect(agent.personality.knowledgeSources).toEqual([
      { position: 1, source: { path: "docs/market-basics.md" } },
      { position: 2, source: { directory: "knowledge/exchanges", shared: true } },
    ]);
    expect(warnings.map((w) => w.field)).toEqual(expect.arrayContaining(["knowledge[1]", "knowledge[2]"]));
  });

  it("maps an OpenAI-compatible provider to openai, keeping the name given", () => {
    expect(agent.modelProvider).toBe("openai");
    expect(agent.model).toBe("llama-3.3-70b-versatile");
    expect(agent.personality.sourceModelProvider).toBe("groq");
    expect(warnings.find((w) => w.field === "modelProvider")?.issue).toMatch(/openai provider/);
  });

  it("keeps plugins outside the catalogue disabled, with a warning each", () => {
    expect(agent.plugins).toEqual([
      { name: "@elizaos/plugin-solana", enabled: false },
      { name: "@elizaos/plugin-coinmarketcap", enabled: false },
    ]);
    expect(warnings.filter((w) => w.field.startsWith("plugins[")).map((w) => w.field)).toEqual([
      "plugins[0]",
      "plugins[1]",
    ]);
  });

  it("puts secrets in settings.secrets and the other settings beside them, model apart", () => {
    expect(agent.settings).toEqual({
      chains: { solana: ["mainnet"] },
      secrets: { GROQ_API_KEY: "gsk-corpus-quill-0002", SOLANA_PRIVATE_KEY: "corpus-not-a-real-key" },
    });
    expect(warnings.find((w) => w.field === "settings.secrets")?.issue).toMatch(
      /no read or export ever returns/,
    );
  });

  it("keeps fields without a place of their own in personality, and unknown fields in extraFields", () => {
    expect(agent.personality).toMatchObject({
      lore: ["Lost everything in one trade and wrote a poem about it."],
      topics: ["markets", "risk"],
      adjectives: ["careful", "precise"],
      style: { all: ["numbers before opinions"], chat: [], post: [] },
      extraFields: {
        clientConfig: { discord: { shouldIgnoreBotMessages: true } },
        twitterProfile: { id: "42", username: "quill", screenName: "Quill", bio: "charts" },
      },
    });
    expect(warnings.map((w) => w.field)).toEqual(expect.arrayContaining(["clientConfig", "twitterProfile"]));
    // An empty list says nothing and is kept nowhere.
    expect(agent.personality).not.toHaveProperty("postExamples");
  });

  it("keeps example conversations as 1.x messages, actions and all", () => {
    expect(agent.personality.messageExamples).toEqual([
      [
        { name: "{{user1}}", content: { text: "Should I buy now?" } },
        {
          name: "Quill",
          content: {
            text: "I do not tell people what to buy. I can tell you what the chart says.",
            action: "NONE",
          },
        },
      ],
    ]);
  });

  it("takes bio as one string, and drops empty fields", () => {
    const classic = imported(corpusFile("v0-classic-openai.json")).agent;
    expect(classic.bio).toEqual([
      "Marlowe has worked the night shift of a city that never sleeps for twenty years.",
    ]);
    const pebble = imported(corpusFile("v0-llama-local.json")).agent;
    expect(pebble.personality).toEqual({ sourceModelProvider: "llama_local" });
    expect(pebble.modelProvider).toBe("local");
    expect(pebble.settings).toEqual({});
  });
});

describe("importCharacter, 1.x and grouped examples", () => {
  it("reads 1.x speakers, system and username into personality", () => {
    const { agent } = imported(corpusFile("v1-sage.json"));
    expect(agent.personality.system).toMatch(/^Respond as Sage/);
    expect(agent.personality.username).toBe("sage");
    expect(agent.modelProvider).toBeNull();
    expect(agent.model).toBeNull();
    expect(agent.settings).toEqual({ avatar: "https://example.invalid/sage.png" });
  });

  it("unwraps grouped examples, and merges top-level secrets into settings.secrets", () => {
    const { agent, warnings } = imported(corpusFile("v1-grouped-examples.json"));
    expect(agent.personality.messageExamples).toEqual([
      [
        { name: "{{user1}}", content: { text: "My bike chain keeps falling off." } },
        {
          name: "Tinker",
          content: { text: "Your derailleur limit screw is loose. Quarter turn, clockwise." },
        },
      ],
      [
        { name: "{{user1}}", content: { text: "The kettle clicks off too early." } },
        {
          name: "Tinker",
          content: { text: "Scale on the thermostat. Boil vinegar in it, then water twice." },
        },
      ],
    ]);
    expect(agent.knowledge).toEqual([]);
    expect(agent.personality.knowledgeSources).toEqual([
      { position: 0, source: { path: "manuals/bicycle.pdf" } },
      { position: 1, source: { directory: { path: "manuals/kitchen", shared: false } } },
    ]);
    expect(agent.settings).toEqual({ secrets: { REPAIR_DB_TOKEN: "corpus-tinker-0007" } });
    expect(warnings.map((w) => w.field)).toContain("secrets");
  });

  it("lets top-level secrets win over settings.secrets of the same name", () => {
    const { agent } = imported({
      name: "S",
      settings: { secrets: { A: "from-settings", B: "b" } },
      secrets: { A: "from-top" },
    });
    expect(agent.settings.secrets).toEqual({ A: "from-top", B: "b" });
  });

  it("enables plugins that are in the catalogue", () => {
    const { agent, warnings } = imported(
      { name: "P", plugins: ["web-search", "@elizaos/plugin-sql"] },
      { inCatalogue: (name: string) => name === "web-search" },
    );
    expect(agent.plugins).toEqual(["web-search", { name: "@elizaos/plugin-sql", enabled: false }]);
    expect(warnings.map((w) => w.field)).toEqual(["plugins[1]"]);
  });
});

describe("modelProvider", () => {
  it.each(ACCEPTED_MODEL_PROVIDERS)("%s becomes the provider of the table, the name kept", (name) => {
    const { agent } = imported({ name: "M", modelProvider: name });
    expect(agent.modelProvider).toBe(ELIZA_MODEL_PROVIDERS[name]);
    expect(agent.personality.sourceModelProvider).toBe(name);
  });

  it("maps openai and the OpenAI-compatible names to openai, anthropic to anthropic, llama_local to local", () => {
    expect(ELIZA_MODEL_PROVIDERS).toMatchObject({
      openai: "openai",
      openrouter: "openai",
      groq: "openai",
      together: "openai",
      deepseek: "openai",
      eternalai: "openai",
      anthropic: "anthropic",
      llama_local: "local",
    });
  });

  it("with useDefaultModel leaves provider and model to the server, keeping the file's, and the export gives them back", () => {
    const file = { name: "M", modelProvider: "groq", settings: { model: "llama-3.1-8b", voice: "x" } };
    const { agent, warnings } = imported(file, { useDefaultModel: true });
    expect(agent.modelProvider).toBeNull();
    expect(agent.model).toBeNull();
    expect(agent.personality).toMatchObject({ sourceModelProvider: "groq", sourceModel: "llama-3.1-8b" });
    expect(warnings).toEqual([
      {
        field: "modelProvider",
        issue: expect.stringMatching(/^left to this server's default provider and model \(useDefaultModel\)/),
      },
    ]);
    const exported = exportCharacter(agent);
    expect(exported.settings.model).toBe("llama-3.1-8b");
    expect(exported.settings.agentry).toMatchObject({
      defaultModel: true,
      personality: { sourceModelProvider: "groq" },
    });
    const again = imported(exported);
    expect(again.agent).toEqual(agent);
    expect(again.warnings).toEqual([]);
  });

  it("with useDefaultModel and a file that names no model, warns of nothing about it", () => {
    const { agent, warnings } = imported({ name: "M" }, { useDefaultModel: true });
    expect(agent.modelProvider).toBeNull();
    expect(agent.personality).toEqual({});
    expect(warnings).toEqual([]);
  });

  it.each(["claude_vertex", "bedrock", "falai", "letzai", "livepeer", "local", "OpenAI", ""])(
    "refuses %j, naming the field and the accepted values",
    (name) => {
      const issues = refused({ name: "M", modelProvider: name });
      expect(issues).toHaveLength(1);
      expect(issues[0]!.field).toBe("modelProvider");
      expect(issues[0]!.issue).toBe(`must be one of: ${ACCEPTED_MODEL_PROVIDERS.join(", ")}`);
    },
  );
});

describe("problems", () => {
  it("are reported all at once, each at its JSON path", () => {
    expect(
      refused({
        bio: ["fine", "", 7],
        knowledge: ["fact", { shared: true }, 3],
        messageExamples: [[{ content: { text: "hi" } }], { examples: [], extra: 1 }],
        style: { all: "short" },
        plugins: [{ name: "x" }],
        modelProvider: "bedrock",
        settings: { temperature: 3, maxTokens: 1.5, model: "  ", agentry: { plugin: [] } },
        secrets: { KEY: { nested: true } },
      }),
    ).toEqual([
      { field: "name", issue: "is required" },
      { field: "bio[1]", issue: "must not be empty" },
      { field: "bio[2]", issue: "must be a string" },
      { field: "style.all", issue: "must be an array of strings" },
      {
        field: "messageExamples[0][0]",
        issue: "must name its speaker in 'name' (or, in v0.x files, 'user')",
      },
      { field: "messageExamples[1].extra", issue: "unknown field" },
      { field: "knowledge[1]", issue: "must name a 'path' or a 'directory'" },
      {
        field: "knowledge[2]",
        issue: "must be a string or a file or folder reference {path} or {directory}",
      },
      { field: "plugins[0]", issue: "must be a string" },
      { field: "modelProvider", issue: `must be one of: ${ACCEPTED_MODEL_PROVIDERS.join(", ")}` },
      { field: "settings.model", issue: "must not be empty" },
      { field: "settings.temperature", issue: "must be a number from 0 to 2" },
      { field: "settings.maxTokens", issue: "must be an integer from 1 to 8192" },
      { field: "settings.agentry.plugin", issue: "unknown field" },
      { field: "secrets.KEY", issue: "must be a string, a number or a boolean" },
    ]);
  });

  it("hold the agent's bounds: name length, 100 items of its own, 1,000 in personality", () => {
    expect(refused({ name: "x".repeat(201) })).toEqual([
      { field: "name", issue: "must be at most 200 characters" },
    ]);
    expect(refused({ name: "a", bio: Array(101).fill("b") })).toEqual([
      { field: "bio", issue: "must hold at most 100 items" },
    ]);
    expect(refused({ name: "a", knowledge: Array(101).fill({ path: "p" }) })).toEqual([
      { field: "knowledge", issue: "must hold at most 100 items" },
    ]);
    expect(refused({ name: "a", lore: Array(1001).fill("l") })).toEqual([
      { field: "lore", issue: "must hold at most 1,000 items" },
    ]);
    expect(imported({ name: "a", lore: Array(1000).fill("l") }).agent.personality.lore).toHaveLength(1000);
    expect(refused({ name: "a", bio: "x".repeat(10_001) })).toEqual([
      { field: "bio", issue: "must be at most 10,000 characters" },
    ]);
  });

  it("refuse a number beyond a double's range anywhere, even in fields kept as they are", () => {
    expect(
      refused(JSON.parse('{"name": "a", "clientConfig": {"n": 1e400}, "settings": {"x": [-1e999]}}')),
    ).toEqual([
      { field: "clientConfig.n", issue: "must be a number within a double's range (about ±1.8e308)" },
      { field: "settings.x[0]", issue: "must be a number within a double's range (about ±1.8e308)" },
    ]);
  });

  it("refuse what is not an object, and U+0000 anywhere", () => {
    expect(refused([])).toEqual([{ field: "body", issue: "must be a JSON object" }]);
    expect(refused({ name: "a", lore: ["x\u0000"], settings: { "k\u0000": 1 } })).toEqual([
      { field: "lore[0]", issue: "must not contain the NUL character (U+0000)" },
      { field: "settings.k\u0000", issue: "must not contain the NUL character (U+0000)" },
    ]);
  });
});

describe("an export, imported", () => {
  it("puts back what the file has no field for, preferring settings.agentry to the file's other fields", () => {
    const { agent, warnings } = imported({
      name: "R",
      clients: ["discord"],
      modelProvider: "groq",
      plugins: ["a", "b", "a"],
      lore: ["from the file"],
      settings: {
        model: "m",
        agentry: {
          modelProvider: "anthropic",
          goals: ["win"],
          clients: [{ type: "telegram", chat: "1" }],
          plugins: [{ name: "a", config: { x: 1 } }, "a", "c"],
          personality: { lore: ["restored"], tone: "dry" },
          settings: { model: "the agent's own" },
        },
      },
    });
    expect(agent).toMatchObject({
      modelProvider: "anthropic",
      model: "m",
      goals: ["win"],
      clients: [{ type: "telegram", chat: "1" }],
      plugins: [{ name: "a", config: { x: 1 } }, { name: "b", enabled: false }, "a"],
      personality: { lore: ["restored"], tone: "dry", sourceModelProvider: "groq" },
      settings: { model: "the agent's own" },
    });
    expect(warnings.map((w) => w.field)).toEqual(
      expect.arrayContaining([
        "modelProvider",
        "clients",
        "settings.agentry.plugins[2]",
        "settings.agentry.personality.lore",
      ]),
    );
  });
});

describe("the corpus", () => {
  it.each(CHARACTER_CORPUS.map((entry) => [entry.file, entry.content] as const))(
    "%s imports, exports and imports again to the same agent, secrets apart",
    (_file, content) => {
      const first = imported(content).agent;
      const again = imported(JSON.parse(JSON.stringify(exportCharacter(first)))).agent;
      const { secrets: _secrets, ...settings } = first.settings;
      expect(again).toEqual({ ...first, settings });
    },
  );
});
