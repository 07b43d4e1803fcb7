import { publicSettings } from "@agentry/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ACCEPTED_MODEL_PROVIDERS,
  type AgentFields,
  exportCharacter,
  exportedCharacterFile,
  importCharacter,
  type JsonObject,
  type JsonValue,
} from "../src/index.js";

/*
 * The export's promise (docs/api/character-files.md, "Export"): importing the export of any agent gives an agent equal
 * in every field but its id, times and apiEndpoint, which the import does not make (and the secrets, which never
 * leave). Agents are generated as the API accepts them, with personalities that hold character fields of the
 * right shape, of a wrong shape (an agent written by hand), and keys of any name.
 */

const noNul = (text: string) => text.replaceAll("\u0000", "");
const text = fc.string({ unit: "grapheme", maxLength: 12 }).map(noNul);
const solid = text.filter((value) => value.trim() !== "");
const trimmed = solid.map((value) => value.trim());

function withoutNul(value: JsonValue): JsonValue {
  if (typeof value === "string") return noNul(value);
  if (Array.isArray(value)) return value.map(withoutNul);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [noNul(key), withoutNul(item)]));
  }
  return value;
}

const json = fc.jsonValue({ maxDepth: 3 }).map((value) => withoutNul(value as JsonValue));
const jsonObject = fc.dictionary(text, json, { maxKeys: 4 }) as fc.Arbitrary<JsonObject>;
const strings = (maxLength = 4) => fc.array(text, { maxLength });

const message = fc.oneof(
  fc.record({ name: text, content: fc.record({ text, actions: strings(2) }, { requiredKeys: [] }) }),
  fc.record({ user: text, content: fc.record({ text, action: text }, { requiredKeys: ["text"] }) }),
);
const examples = fc.oneof(
  fc.array(fc.array(message, { maxLength: 3 }), { maxLength: 3 }),
  fc.array(fc.record({ examples: fc.array(message, { maxLength: 3 }) }), { maxLength: 2 }),
);
const source = fc.oneof(
  fc.record({ path: text }),
  fc.record({ directory: text, shared: fc.boolean() }, { requiredKeys: ["directory"] }),
);

const characterTraits = fc.record(
  {
    system: text,
    username: text,
    lore: strings(),
    topics: strings(),
    adjectives: strings(),
    style: fc.record({ all: strings(), chat: strings(), post: strings() }, { requiredKeys: [] }),
    messageExamples: examples,
    postExamples: strings(),
    templates: fc.dictionary(text, text, { maxKeys: 3 }),
    knowledgeSources: fc.array(fc.record({ position: fc.nat(8), source }), { maxLength: 3 }),
    sourceModelProvider: fc.constantFrom(...ACCEPTED_MODEL_PROVIDERS),
    extraFields: jsonObject,
  },
  { requiredKeys: [] },
);

/** Character fields of the right shape, any value under their names, and other keys; later keys win. */
const personality = fc
  .tuple(
    characterTraits,
    jsonObject,
    fc.dictionary(fc.constantFrom("style", "lore", "messageExamples"), json),
  )
  .map(([traits, others, wrong]) => ({ ...others, ...traits, ...wrong }) as JsonObject);

const settings = fc
  .record(
    {
      others: jsonObject,
      temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: null }),
      maxTokens: fc.integer({ min: 1, max: 8192 }),
      model: json,
      agentry: json,
      secrets: jsonObject,
    },
    { requiredKeys: ["others"] },
  )
  .map(({ others, ...known }) => {
    const { temperature: _t, maxTokens: _m, ...rest } = others;
    return { ...rest, ...known } as JsonObject;
  });

const plugin = fc.oneof(
  solid,
  fc.record({ name: solid, enabled: fc.boolean(), config: jsonObject }, { requiredKeys: ["name"] }),
);
const client = fc.oneof(solid, fc.record({ type: solid, channel: text }, { requiredKeys: ["type"] }));

const agent: fc.Arbitrary<AgentFields> = fc.record({
  name: trimmed,
  bio: fc.array(solid, { maxLength: 4 }),
  personality,
  knowledge: fc.array(solid, { maxLength: 5 }),
  goals: fc.array(solid, { maxLength: 3 }),
  clients: fc.array(client, { maxLength: 3 }),
  settings,
  modelProvider: fc.constantFrom(null, "openai", "anthropic", "local"),
  model: fc.option(trimmed, { nil: null }),
  plugins: fc.array(plugin, { maxLength: 4 }),
}) as fc.Arbitrary<AgentFields>;

describe("import(export(agent))", () => {
  it("equals the agent in every field, for any agent", () => {
    fc.assert(
      fc.property(agent, (original) => {
        const file = exportCharacter(original);
        expect(exportedCharacterFile.safeParse(file).success).toBe(true);
        const result = importCharacter(JSON.parse(JSON.stringify(file)));
        if (!result.ok) throw new Error(`the export was refused: ${JSON.stringify(result.issues)}`);
        const expected = JSON.parse(
          JSON.stringify({ ...original, settings: publicSettings(original.settings) }),
        ) as AgentFields;
        expect(result.agent).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
