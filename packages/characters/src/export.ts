import { AGENT_BOUNDS, publicSettings } from "@agentry/core";
import type { AgentFields } from "./import.js";
import { isJsonObject, type JsonObject, type JsonValue, jsonEqual, objectOf, omitKeys } from "./json.js";
import {
  KNOWLEDGE_SOURCES,
  type KnowledgeSourceEntry,
  knowledgeSourceEntry,
  PERSONALITY_FIELDS,
  type PersonalityField,
  personalityValue,
  SOURCE_MODEL,
  SOURCE_MODEL_PROVIDER,
} from "./personality.js";
import { characterFields, type ExportedCharacterFile } from "./schema.js";

/** Personality fields an elizaOS 1.x file has a top-level field for; 1.x refuses any other top-level field. */
const TOP_LEVEL: readonly PersonalityField[] = PERSONALITY_FIELDS.filter((field) => field !== "lore");

/** Keys of an agent's own settings that the file uses for something else; kept under `settings.agentry`. */
const RESERVED_SETTINGS = ["model", "agentry"];

/**
 * Whether a personality value can stand in the file's own field: the import of that field gives back exactly
 * this value. Otherwise (an agent written by hand with `style: "formal"`, v0.x examples stored as they came) it
 * goes under `settings.agentry.personality` unchanged.
 */
function fitsField(field: PersonalityField, value: JsonValue): boolean {
  if (!characterFields[field].safeParse(value).success) return false;
  const kept = personalityValue(field, value);
  return kept !== undefined && jsonEqual(kept, value);
}

/**
 * The knowledge list with the references back at their positions, when they are such that an import of it puts
 * them back exactly (positions increasing, within the list, at most the file's bound in all); undefined
 * otherwise.
 */
function mergedKnowledge(knowledge: readonly string[], sources: JsonValue): JsonValue[] | undefined {
  if (!Array.isArray(sources) || sources.length === 0) return undefined;
  if (!knowledgeSourceEntry.array().safeParse(sources).success) return undefined;
  const entries = sources as unknown as KnowledgeSourceEntry[];
  const total = knowledge.length + entries.length;
  if (total > AGENT_BOUNDS.arrayMaxItems) return undefined;
  const merged: JsonValue[] = [];
  let next = 0;
  for (const { position, source } of entries) {
    if (position < merged.length || position - merged.length > knowledge.length - next) return undefined;
    while (merged.length < position) merged.push(knowledge[next++]!);
    merged.push(source);
  }
  merged.push(...knowledge.slice(next));
  return merged;
}

/**
 * An agent as an elizaOS 1.x character file: the fields 1.x knows at the top, everything else of the agent under
 * `settings.agentry`, so that `importCharacter` of the file gives back an agent equal in every field (its id,
 * times and `apiEndpoint` apart). `plugins` names every plugin; their `enabled` and `config` are under
 * `settings.agentry.plugins`. Secrets never leave: `settings.secrets` and `secrets` are empty.
 */
export function exportCharacter(agent: AgentFields): ExportedCharacterFile {
  const top = new Map<string, JsonValue>();
  const rest: [string, JsonValue][] = [];
  let knowledge: JsonValue[] = agent.knowledge;
  // An agent imported with the server's default model gives its file's model back in `settings.model`.
  const sourceModel = agent.personality[SOURCE_MODEL];
  const defaultModel =
    agent.modelProvider === null &&
    agent.model === null &&
    (typeof sourceModel === "string" || typeof agent.personality[SOURCE_MODEL_PROVIDER] === "string");
  const model = agent.model ?? (defaultModel && typeof sourceModel === "string" ? sourceModel : null);
  for (const [key, value] of Object.entries(agent.personality)) {
    if (defaultModel && key === SOURCE_MODEL && model !== null) continue;
    const field = TOP_LEVEL.find((name) => name === key);
    const merged = key === KNOWLEDGE_SOURCES ? mergedKnowledge(agent.knowledge, value) : undefined;
    if (field !== undefined && fitsField(field, value)) top.set(field, value);
    else if (merged !== undefined) knowledge = merged;
    else rest.push([key, value]);
  }

  const settings = publicSettings(agent.settings);
  const reserved = Object.entries(settings).filter(([key]) => RESERVED_SETTINGS.includes(key));
  const agentry: [string, JsonValue][] = [];
  if (agent.modelProvider !== null) agentry.push(["modelProvider", agent.modelProvider]);
  if (defaultModel) agentry.push(["defaultModel", true]);
  if (agent.goals.length > 0) agentry.push(["goals", agent.goals]);
  if (agent.clients.length > 0) agentry.push(["clients", agent.clients]);
  if (agent.plugins.length > 0) agentry.push(["plugins", agent.plugins]);
  if (rest.length > 0) agentry.push(["personality", objectOf(rest)]);
  if (reserved.length > 0) agentry.push(["settings", objectOf(reserved)]);

  const file: JsonObject = objectOf([
    ["name", agent.name],
    ...optional("username", top),
    ...optional("system", top),
    ["bio", agent.bio],
    ...optional("topics", top),
    ...optional("adjectives", top),
    ...optional("style", top),
    ...optional("messageExamples", top),
    ...optional("postExamples", top),
    ...(knowledge.length > 0 ? [["knowledge", knowledge] as const] : []),
    ...optional("templates", top),
    ["plugins", agent.plugins.map((plugin) => (isJsonObject(plugin) ? String(plugin.name) : String(plugin)))],
    [
      "settings",
      objectOf([
        ...Object.entries(omitKeys(settings, RESERVED_SETTINGS)),
        ...(model !== null ? [["model", model] as const] : []),
        ["secrets", {}],
        ...(agentry.length > 0 ? [["agentry", objectOf(agentry)] as const] : []),
      ]),
    ],
    ["secrets", {}],
  ]);
  return file as ExportedCharacterFile;
}

function optional(field: string, values: ReadonlyMap<string, JsonValue>): [string, JsonValue][] {
  const value = values.get(field);
  return value === undefined ? [] : [[field, value]];
}

/** `Ada Lovelace!` → `ada-lovelace`: a file name any system takes, from the agent's name. */
export function characterFileName(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
  return `${slug || "agent"}.character.json`;
}
