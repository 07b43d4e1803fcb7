import type { ProviderName } from "@agentry/core";
import type { FieldIssue } from "./issues.js";
import { toFieldIssues } from "./issues.js";
import { isJsonObject, type JsonObject, type JsonValue, objectOf, omitKeys } from "./json.js";
import {
  EXTRA_FIELDS,
  KNOWLEDGE_SOURCES,
  type KnowledgeSourceEntry,
  PERSONALITY_FIELDS,
  personalityValue,
  SOURCE_MODEL,
  SOURCE_MODEL_PROVIDER,
} from "./personality.js";
import { ELIZA_MODEL_PROVIDERS, type ElizaModelProvider } from "./providers.js";
import { CHARACTER_FIELD_NAMES, characterFile } from "./schema.js";

/** An agent's writable fields, as `POST /v1/agents` takes them and the registry stores them. */
export interface AgentFields {
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
  clients: JsonValue[];
  settings: JsonObject;
  modelProvider: ProviderName | null;
  model: string | null;
  plugins: JsonValue[];
}

export interface ImportOptions {
  /** Whether a plugin name is in this service's plugin catalogue; none is by default. */
  inCatalogue?: (name: string) => boolean;
  /**
   * Leave the provider and model to the server's default (`null`), keeping the file's in
   * `personality.sourceModelProvider` and `personality.sourceModel` for the export.
   */
  useDefaultModel?: boolean;
}

export type ImportResult =
  | {
      ok: true;
      agent: AgentFields;
      /** What was kept but will not act, or was set aside, by JSON path in the file. */
      warnings: FieldIssue[];
      /** Where in the file the agent's `modelProvider`, `model` and `clients` came from, to name them in later checks. */
      fieldPaths: { modelProvider: string; model: string; clients: string };
    }
  | { ok: false; issues: FieldIssue[] };

/** The keys of `settings` an import reads for itself; the rest stay in the agent's settings as they are. */
const CONSUMED_SETTINGS = ["model", "secrets", "agentry"];

/**
 * Every value no store keeps, by path, wherever it is (fields the schema leaves open included): a string or
 * object key holding U+0000, and a number beyond a double's range, which `JSON.parse` reads as Infinity.
 */
function unstorablePaths(value: unknown, path: string, out: FieldIssue[]): void {
  const refuse = (at: string, issue: string) => out.push({ field: at || "body", issue });
  const NUL = "must not contain the NUL character (U+0000)";
  if (typeof value === "string") {
    if (value.includes("\u0000")) refuse(path, NUL);
  } else if (typeof value === "number") {
    if (!Number.isFinite(value)) refuse(path, "must be a number within a double's range (about ±1.8e308)");
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) unstorablePaths(item, `${path}[${i}]`, out);
  } else if (isJsonObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (key.includes("\u0000")) refuse(at, NUL);
      else unstorablePaths(item, at, out);
    }
  }
}

function pluginName(plugin: JsonValue): string | undefined {
  if (typeof plugin === "string") return plugin;
  return isJsonObject(plugin) && typeof plugin.name === "string" ? plugin.name : undefined;
}

/**
 * An elizaOS character file (v0.x, 1.x, grouped examples, or an export of this service) as the fields of a new
 * agent, or every problem of the file at once. Nothing is stored: the gateway and the admin CLI both store what
 * this returns.
 *
 * - `name`, `bio` (a string is one item) and the strings of `knowledge` are the agent's own; `clients` too.
 * - Fields without a place of their own (`PERSONALITY_FIELDS`) go to `personality` under their names, empty
 *   ones nowhere; example conversations are kept as 1.x arrays of `{name, content}` whatever the generation.
 * - File and folder references of `knowledge` go to `personality.knowledgeSources` with their position.
 * - `modelProvider` is mapped (`ELIZA_MODEL_PROVIDERS`), the name given kept in `personality.sourceModelProvider`;
 *   `settings.model` becomes `model`.
 * - `settings.secrets` and `secrets` become the agent's write-only `settings.secrets`.
 * - `plugins` in the catalogue become enabled plugins, others `{name, enabled: false}`.
 * - `settings.agentry` (written by an export) puts back what the file has no field for, and is preferred to
 *   what the file says elsewhere.
 * - Any other field is kept in `personality.extraFields`, with a warning.
 */
export function importCharacter(input: unknown, options: ImportOptions = {}): ImportResult {
  const inCatalogue = options.inCatalogue ?? (() => false);
  const issues: FieldIssue[] = [];
  unstorablePaths(input, "", issues);
  const result = characterFile.safeParse(input);
  if (!result.success) issues.push(...toFieldIssues(result.error));
  if (issues.length > 0 || !result.success) return { ok: false, issues };

  // The parse has checked every shape; values are copied from the input itself, which zod may not reproduce
  // key for key (an own `__proto__` key, say).
  const file = input as JsonObject;
  const settings = isJsonObject(file.settings) ? file.settings : {};
  const agentry = isJsonObject(settings.agentry) ? settings.agentry : {};
  const warnings: FieldIssue[] = [];
  const warn = (field: string, issue: string) => warnings.push({ field, issue });
  // An export of an agent that used the server's default says so, so that its import does the same.
  const useDefaultModel = options.useDefaultModel === true || agentry.defaultModel === true;

  const personality: [string, JsonValue][] = [];
  for (const field of PERSONALITY_FIELDS) {
    const value = file[field] === undefined ? undefined : personalityValue(field, file[field]);
    if (value !== undefined) personality.push([field, value]);
  }
  if (personality.some(([field]) => field === "templates"))
    warn("templates", "kept for the export; this service does not use elizaOS prompt templates");
  if (personality.some(([field]) => field === "postExamples"))
    warn("postExamples", "kept for the export; agents here do not post");
  const style = file.style;
  if (isJsonObject(style) && Array.isArray(style.post) && style.post.length > 0)
    warn("style.post", "kept for the export; agents here do not post");

  const knowledge: string[] = [];
  const sources: KnowledgeSourceEntry[] = [];
  (Array.isArray(file.knowledge) ? file.knowledge : []).forEach((item, position) => {
    if (typeof item === "string") knowledge.push(item);
    else if (isJsonObject(item)) {
      sources.push({ position, source: item });
      warn(
        `knowledge[${position}]`,
        "a file or folder reference: kept in personality.knowledgeSources for the export; no file is read",
      );
    }
  });
  if (sources.length > 0) personality.push([KNOWLEDGE_SOURCES, sources]);

  let modelProvider: ProviderName | null = null;
  let modelProviderPath = "modelProvider";
  if (typeof file.modelProvider === "string") {
    const named = file.modelProvider as ElizaModelProvider;
    modelProvider = ELIZA_MODEL_PROVIDERS[named];
    personality.push([SOURCE_MODEL_PROVIDER, named]);
    if (modelProvider !== named && !useDefaultModel) {
      warn(
        "modelProvider",
        modelProvider === "openai"
          ? `${named} is answered by the openai provider, through the OpenAI-compatible API OPENAI_BASE_URL points at; the name given is kept in personality.sourceModelProvider`
          : `${named} is answered by the ${modelProvider} provider; the name given is kept in personality.sourceModelProvider`,
      );
    }
  }
  if (typeof agentry.modelProvider === "string") {
    modelProvider = agentry.modelProvider as ProviderName;
    modelProviderPath = "settings.agentry.modelProvider";
    if (useDefaultModel && file.modelProvider === undefined)
      personality.push([SOURCE_MODEL_PROVIDER, agentry.modelProvider]);
    if (file.modelProvider !== undefined)
      warn(
        "modelProvider",
        "settings.agentry.modelProvider is the agent's provider; this one is kept as a note",
      );
  }

  const extra = Object.keys(file).filter((key) => !CHARACTER_FIELD_NAMES.includes(key));
  if (extra.length > 0) {
    personality.push([EXTRA_FIELDS, objectOf(extra.map((key) => [key, file[key]!] as const))]);
    for (const key of extra)
      warn(key, "not a field this service uses: kept in personality.extraFields for the export");
  }

  let model = typeof settings.model === "string" ? settings.model.trim() : null;
  if (useDefaultModel) {
    if (model !== null) personality.push([SOURCE_MODEL, model]);
    if ((modelProvider !== null || model !== null) && options.useDefaultModel === true)
      warn(
        "modelProvider",
        "left to this server's default provider and model (useDefaultModel); the file's are kept in personality.sourceModelProvider and personality.sourceModel for the export",
      );
    modelProvider = null;
    model = null;
  }

  const restoredPersonality = isJsonObject(agentry.personality) ? agentry.personality : {};
  for (const key of Object.keys(restoredPersonality)) {
    if (personality.some(([field]) => field === key))
      warn(
        `settings.agentry.personality.${key}`,
        `replaces what the file says elsewhere for personality.${key}`,
      );
  }
  const restoredKeys = Object.keys(restoredPersonality);
  const mergedPersonality = objectOf([
    ...personality.filter(([field]) => !restoredKeys.includes(field)),
    ...Object.entries(restoredPersonality),
  ]);

  const restoredSettings = isJsonObject(agentry.settings) ? agentry.settings : {};
  const keptSettings: [string, JsonValue][] = [
    ...Object.entries(omitKeys(settings, CONSUMED_SETTINGS)),
    ...Object.entries(restoredSettings),
  ];
  const secretEntries = [
    ...Object.entries(isJsonObject(settings.secrets) ? settings.secrets : {}),
    ...Object.entries(isJsonObject(file.secrets) ? file.secrets : {}),
  ];
  if (secretEntries.length > 0) {
    keptSettings.push(["secrets", objectOf(secretEntries)]);
    for (const field of ["settings.secrets", "secrets"]) {
      const value = field === "secrets" ? file.secrets : settings.secrets;
      if (isJsonObject(value) && Object.keys(value).length > 0)
        warn(field, "stored in the agent's settings.secrets, which no read or export ever returns");
    }
  }

  const restoredPlugins = Array.isArray(agentry.plugins) ? agentry.plugins : [];
  const used = new Set<number>();
  const plugins = (Array.isArray(file.plugins) ? file.plugins : []).map((item, i): JsonValue => {
    const name = String(item);
    const match = restoredPlugins.findIndex((plugin, j) => !used.has(j) && pluginName(plugin) === name);
    if (match >= 0) {
      used.add(match);
      if (!inCatalogue(name))
        warn(`plugins[${i}]`, "not in the plugin catalogue: kept as the export had it; it will not act");
      return restoredPlugins[match]!;
    }
    if (inCatalogue(name)) return name;
    warn(`plugins[${i}]`, "not in the plugin catalogue: kept as {name, enabled: false}; it will not act");
    return { name, enabled: false };
  });
  restoredPlugins.forEach((_, j) => {
    if (!used.has(j))
      warn(`settings.agentry.plugins[${j}]`, "names a plugin that plugins does not list: left out");
  });

  let clients: JsonValue[] = Array.isArray(file.clients) ? file.clients : [];
  let clientsPath = "clients";
  if (Array.isArray(agentry.clients)) {
    if (file.clients !== undefined)
      warn("clients", "settings.agentry.clients holds the agent's clients; these are left out");
    clients = agentry.clients;
    clientsPath = "settings.agentry.clients";
  }

  const bio =
    typeof file.bio === "string" ? [file.bio] : Array.isArray(file.bio) ? (file.bio as string[]) : [];
  return {
    ok: true,
    agent: {
      name: String(file.name).trim(),
      bio,
      personality: mergedPersonality,
      knowledge,
      goals: Array.isArray(agentry.goals) ? (agentry.goals as string[]) : [],
      clients,
      settings: objectOf(keptSettings),
      modelProvider,
      model,
      plugins,
    },
    warnings,
    fieldPaths: { modelProvider: modelProviderPath, model: "settings.model", clients: clientsPath },
  };
}
