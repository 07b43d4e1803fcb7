import { z } from "zod";
import { isEmptyValue, isJsonObject, type JsonObject, type JsonValue, objectOf } from "./json.js";
import { characterFields, knowledgeSource } from "./schema.js";

/*
 * The keys of an agent's `personality` that hold character-file fields, what shape each has there, and how an
 * import writes them. The export, the prompt and the import all read them through this one place.
 */

/** Character-file fields without a place of their own in the agent, kept in `personality` under their names. */
export const PERSONALITY_FIELDS = [
  "system",
  "username",
  "lore",
  "topics",
  "adjectives",
  "style",
  "messageExamples",
  "postExamples",
  "templates",
] as const;

export type PersonalityField = (typeof PERSONALITY_FIELDS)[number];

/** Where an import keeps file and folder references of `knowledge`, each with its position in the file. */
export const KNOWLEDGE_SOURCES = "knowledgeSources";
/** Where an import keeps the file's `modelProvider` as the file named it. */
export const SOURCE_MODEL_PROVIDER = "sourceModelProvider";
/** Where an import that leaves the model to the server's default keeps the file's `settings.model`. */
export const SOURCE_MODEL = "sourceModel";
/** Where an import keeps the fields of a file it has no use for, for the export. */
export const EXTRA_FIELDS = "extraFields";

/**
 * A message of any generation as the personality keeps it: `name` for the speaker (a v0.x `user` becomes
 * `name`), everything else as it was.
 */
function normalizeMessage(message: JsonObject): JsonObject {
  if (message.name !== undefined) return message;
  return objectOf(
    Object.entries(message).map(([key, value]) => [key === "user" ? "name" : key, value] as const),
  );
}

/** The conversations of `messageExamples`, whatever the generation: arrays of messages. */
function normalizeExamples(examples: JsonValue[]): JsonValue[] {
  return examples.map((conversation) => {
    const messages = Array.isArray(conversation)
      ? conversation
      : isJsonObject(conversation) && Array.isArray(conversation.examples)
        ? conversation.examples
        : [];
    return messages.map((message) => (isJsonObject(message) ? normalizeMessage(message) : message));
  });
}

/**
 * The value an import keeps in `personality[field]` for a file's value (already valid), or undefined when it is
 * empty and kept nowhere (v0.x files carry `"lore": []` and empty `style` lists as a matter of course).
 */
export function personalityValue(field: PersonalityField, value: JsonValue): JsonValue | undefined {
  if (isEmptyValue(value)) return undefined;
  if (field === "messageExamples" && Array.isArray(value)) return normalizeExamples(value);
  return value;
}

/** A file or folder reference of the file's `knowledge`, at its position there. */
export const knowledgeSourceEntry = z.strictObject({
  position: z.number().int().min(0),
  source: knowledgeSource,
});

export type KnowledgeSourceEntry = { position: number; source: JsonObject };

const stringList = z.array(z.string());

function parsed<T extends z.ZodType>(schema: T, value: JsonValue | undefined): z.infer<T> | undefined {
  if (value === undefined) return undefined;
  const result = schema.safeParse(value);
  return result.success ? result.data : undefined;
}

/** One message of an example conversation: who speaks, and what. */
export interface ExampleLine {
  speaker: string;
  text: string;
}

/**
 * What the prompt uses of a personality's character fields, read leniently: a key whose value has not the shape
 * an import gives it (an agent written by hand may use `style` for something else) is left to be shown as any
 * other trait, and is named in `plain`.
 */
export interface CharacterTraits {
  system: string | undefined;
  lore: string[];
  topics: string[];
  adjectives: string[];
  /** `style.all` then `style.chat`: the guidelines of a chat reply. */
  guidelines: string[];
  /** Example conversations in order, each its messages that have text. */
  examples: ExampleLine[][];
  /** The personality's keys that are not character fields of the expected shape: traits to show as they are. */
  plain: string[];
}

const EXPORT_ONLY: Record<string, z.ZodType> = {
  username: z.string(),
  postExamples: stringList,
  templates: characterFields.templates,
  [KNOWLEDGE_SOURCES]: z.array(knowledgeSourceEntry),
  [SOURCE_MODEL_PROVIDER]: z.string(),
  [SOURCE_MODEL]: z.string(),
  [EXTRA_FIELDS]: z.record(z.string(), z.json()),
};

export function characterTraits(personality: JsonObject): CharacterTraits {
  const handled = new Set<string>();
  const take = <T extends z.ZodType>(key: string, schema: T): z.infer<T> | undefined => {
    const value = parsed(schema, personality[key]);
    if (value !== undefined) handled.add(key);
    return value;
  };
  const system = take("system", z.string());
  const lore = take("lore", stringList) ?? [];
  const topics = take("topics", stringList) ?? [];
  const adjectives = take("adjectives", stringList) ?? [];
  const style = take("style", characterFields.style.unwrap());
  const examples = take("messageExamples", characterFields.messageExamples.unwrap()) ?? [];
  for (const [key, schema] of Object.entries(EXPORT_ONLY)) take(key, schema);
  return {
    system,
    lore,
    topics,
    adjectives,
    guidelines: [...(style?.all ?? []), ...(style?.chat ?? [])],
    examples: examples.map((conversation) =>
      (Array.isArray(conversation) ? conversation : conversation.examples)
        .map((message) => ({ speaker: message.name ?? message.user ?? "", text: message.content.text ?? "" }))
        .filter((line) => line.text.trim() !== ""),
    ),
    plain: Object.keys(personality).filter((key) => !handled.has(key)),
  };
}

/** Placeholders elizaOS files use for the other party of an example (`{{user1}}`, `{{name1}}`, `{{user}}`). */
const OTHER_PARTY = /^\{\{\s*(?:user|name)\d*\s*\}\}$/i;
/** Placeholders for the character itself. */
const CHARACTER_PLACEHOLDER = /^\{\{\s*(?:agentName|char|charName)\s*\}\}$/i;

/**
 * Whether the character speaks a line of an example conversation: its name (as the agent is now called) or a
 * placeholder for it. Files written under an earlier name have no line in the agent's name; there, every speaker
 * that is not a placeholder for the other party is the character.
 */
export function spokenByCharacter(
  speaker: string,
  conversation: readonly ExampleLine[],
  agentName: string,
): boolean {
  const named = (line: string) =>
    line.trim().toLowerCase() === agentName.trim().toLowerCase() || CHARACTER_PLACEHOLDER.test(line.trim());
  if (conversation.some((line) => named(line.speaker))) return named(speaker);
  return !OTHER_PARTY.test(speaker.trim());
}
