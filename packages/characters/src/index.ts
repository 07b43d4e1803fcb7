export { characterFileName, exportCharacter } from "./export.js";
export { type AgentFields, type ImportOptions, type ImportResult, importCharacter } from "./import.js";
export type { FieldIssue } from "./issues.js";
export type { JsonObject, JsonValue } from "./json.js";
export { characterJsonSchema } from "./json-schema.js";
export { knowledgeReferences, missingSources } from "./knowledge.js";
export {
  type CharacterTraits,
  characterTraits,
  EXTRA_FIELDS,
  type ExampleLine,
  KNOWLEDGE_SOURCES,
  PERSONALITY_FIELDS,
  SOURCE_MODEL,
  SOURCE_MODEL_PROVIDER,
  spokenByCharacter,
} from "./personality.js";
export { ELIZA_MODEL_PROVIDERS, type ElizaModelProvider, elizaNamesOf } from "./providers.js";
export {
  ACCEPTED_MODEL_PROVIDERS,
  agentrySettings,
  CHARACTER_BOUNDS,
  type CharacterFile,
  characterFile,
  type ExportedCharacterFile,
  exportedCharacterFile,
} from "./schema.js";
