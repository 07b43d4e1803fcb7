export {
  approvalRequired,
  Catalogue,
  type CatalogueEntry,
  normalisePluginSetting,
  type PluginSetting,
  type PluginSettingProblem,
} from "./catalogue.js";
export { definePlugin, defineTool, jsonSchemaOf, ToolInputError, type ToolSpec } from "./define.js";
export type {
  DocumentHit,
  GuardedFetch,
  JsonSchema,
  KnowledgeHit,
  Plugin,
  PluginHost,
  Tool,
  ToolContext,
} from "./types.js";
