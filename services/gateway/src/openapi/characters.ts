import { characterFile, elizaNamesOf, exportedCharacterFile } from "@agentry/characters";
import { TIER_DEFAULTS } from "@agentry/core";
import { z } from "zod";
import type { ServedProviders } from "../providers.js";
import { CHARACTER_SCHEMA_PATH } from "../routes/characters.js";
import { importCharacterQuery } from "../validation/characters.js";
import { TRIMMED_SPACE } from "../validation/text.js";
import { type ComponentRegistry, convertSchema, type JsonSchema } from "./convert.js";
import type { OperationDoc } from "./operations.js";

/*
 * The document's part for character files (docs/api/character-files.md): the import and export operations,
 * the schema route, their component schemas, and the import schema's narrowing to what a deployment serves.
 */

const FILE_NAME_EXAMPLE = 'attachment; filename="eliza.character.json"';

export const CHARACTER_OPERATION_DOCS: Record<string, OperationDoc> = {
  "POST /v1/agents/import": {
    sdk: { resource: ["agents"], method: "importCharacter" },
    operationId: "importCharacter",
    tag: "Agents",
    summary: "Import an elizaOS character file",
    description: `Creates an agent from an elizaOS character file (v0.x, 1.x, or with grouped \`messageExamples\`), sent as the body; its JSON Schema is also served at \`${CHARACTER_SCHEMA_PATH}\`. Only \`name\` is required. \`name\`, \`bio\` (a string is one item), the strings of \`knowledge\`, \`clients\`, \`plugins\` and \`settings\` map to the agent's own fields; \`settings.model\` becomes \`model\`; \`modelProvider\` is mapped (\`anthropic\` stays, \`llama_local\` becomes \`local\`, the OpenAI-compatible names become \`openai\`), the name given kept in \`personality.sourceModelProvider\`. \`system\`, \`username\`, \`lore\`, \`topics\`, \`adjectives\`, \`style\`, \`messageExamples\`, \`postExamples\` and \`templates\` are kept in \`personality\` under their names (empty ones nowhere); file and folder references of \`knowledge\` in \`personality.knowledgeSources\`, with their positions; fields the schema does not name in \`personality.extraFields\`. \`settings.secrets\` and \`secrets\` are stored in the agent's \`settings.secrets\`, which no read or export ever returns. Plugins not in the plugin catalogue are kept as \`{name, enabled: false}\`. \`settings.agentry\`, written by an export, puts back what the elizaOS format has no field for.\n\nThe answer carries \`warnings\`, \`[{field, issue}]\` by JSON path in the file, for what was kept but will not act. Every problem of the file is answered at once, as \`details\` by JSON path. With \`dryRun=true\` nothing is stored: \`200\` with the agent it would create. With \`useDefaultModel=true\` the agent uses this server's default provider and model (\`modelProvider\` and \`model\` \`null\`), the file's kept in \`personality.sourceModelProvider\` and \`personality.sourceModel\`; the export puts the model back in \`settings.model\`. As on create, a provider with no configuration here is taken with a warning naming the variable to set, a provider that serves only some models (\`local\`) must be given one of them, and the account holds at most its plan's \`maxAgents\` agents (${TIER_DEFAULTS.standard.maxAgents} by default).`,
    requestBody: "CharacterFile",
    bodyArgument: "character",
    queryParameters: () => queryParameters(importCharacterQuery),
    success: {
      status: 201,
      schema: "ImportCharacterResponse",
      description: "The agent created, and the warnings.",
    },
    otherSuccess: [
      {
        status: 200,
        schema: "ImportCharacterPreviewResponse",
        description: "`dryRun=true`: the agent the file would create, and the warnings; nothing was stored.",
        whenQuery: { dryRun: true },
      },
    ],
    errors: ["INVALID_REQUEST", "INSUFFICIENT_QUOTA", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "GET /v1/agents/:agentId/character": {
    sdk: { resource: ["agents"], method: "exportCharacter" },
    operationId: "exportCharacter",
    tag: "Agents",
    summary: "Export an agent as an elizaOS character file",
    description:
      "The agent as an elizaOS 1.x character file, as a download: the bare file, without the envelope, with `Content-Disposition: attachment` and a file name made from the agent's name. Fields the 1.x format has at the top are there; everything else of the agent (`goals`, `clients`, `modelProvider`, each plugin's `enabled` and `config`, `personality` keys without a 1.x field) is under `settings.agentry`, so importing the file gives an agent equal to this one in every field but its id, times and `apiEndpoint`. `plugins` names every plugin. Secrets never leave: `settings.secrets` and `secrets` are empty.",
    success: {
      status: 200,
      schema: "ExportedCharacterFile",
      description: "The character file.",
      headers: {
        "Content-Disposition": {
          description:
            "`attachment`, with the file name: the agent's name in lowercase letters, digits and dashes, then `.character.json`.",
          required: true,
          schema: { type: "string", examples: [FILE_NAME_EXAMPLE] },
        },
      },
    },
    errors: ["AGENT_NOT_FOUND"],
    bare: true,
  },
};

function queryParameters(schema: z.ZodObject): { name: string; schema: JsonSchema; required: boolean }[] {
  const query = convertSchema(schema, "input");
  const required = new Set((query.required as string[] | undefined) ?? []);
  return Object.entries(query.properties as Record<string, JsonSchema>).map(([name, item]) => ({
    name,
    schema: item,
    required: required.has(name),
  }));
}

/** The `GET /v1/schemas/character.json` path item; `plain` makes an unauthenticated response. */
export function characterSchemaPath(
  plain: (description: string, content: JsonSchema) => JsonSchema,
): Record<string, Record<string, JsonSchema>> {
  return {
    [CHARACTER_SCHEMA_PATH]: {
      get: {
        operationId: "getCharacterSchema",
        tags: ["Service"],
        summary: "The character file's JSON Schema",
        description:
          "The JSON Schema (draft 2020-12) of an elizaOS character file as `POST /v1/agents/import` takes it (the `CharacterFile` schema of this document, for every provider the product knows). No authentication.",
        security: [],
        "x-sdk-exclude": true,
        responses: {
          "200": plain("The schema.", {
            "application/schema+json": { schema: { type: "object", description: "A JSON Schema." } },
          }),
        },
      },
    },
  };
}

/**
 * Registers the character schemas: the file as a request, the import's answers and the exported file as
 * responses. `agent` and `fieldIssue` are the document's own `Agent` and `FieldIssue`.
 */
export function registerCharacterSchemas(
  requests: ComponentRegistry,
  responses: ComponentRegistry,
  agent: z.ZodObject,
  fieldIssue: z.ZodType,
): void {
  requests.add(characterFile, { id: "CharacterFile" });
  const warnings = z.array(fieldIssue).meta({
    description: "What was kept but will not act, or was set aside, by JSON path in the file.",
  });
  const draft = agent
    .pick({
      name: true,
      bio: true,
      personality: true,
      knowledge: true,
      goals: true,
      clients: true,
      settings: true,
      modelProvider: true,
      model: true,
      plugins: true,
    })
    .meta({ description: "The agent an import would create: its fields, with no id, status or times yet." });
  responses.add(draft, { id: "AgentDraft" });
  responses.add(
    z
      .object({ success: z.literal(true), data: agent, warnings })
      .meta({ description: "An imported character file: the agent created, and the warnings." }),
    { id: "ImportCharacterResponse" },
  );
  responses.add(
    z.object({ success: z.literal(true), data: draft, warnings }).meta({
      description:
        "A character file checked with `dryRun=true`: the agent it would create, and the warnings; nothing was stored.",
    }),
    { id: "ImportCharacterPreviewResponse" },
  );
  responses.add(exportedCharacterFile, { id: "ExportedCharacterFile" });
}

/** A JSON Schema pattern matching exactly these names, with the whitespace the import trims around them. */
function oneOfNamesPattern(names: readonly string[]): string {
  const escaped = names.map((name) => name.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&"));
  return `^[${TRIMMED_SPACE}]*(?:${escaped.join("|")})[${TRIMMED_SPACE}]*$`;
}

/** An object that has `key`; the property named beside it, as strict JSON Schema validators ask. */
const has = (key: string, schema: JsonSchema = {}): JsonSchema => ({
  required: [key],
  properties: { [key]: schema },
});

/** A file whose `settings.agentry` is as `agentry` says. */
const inAgentry = (agentry: JsonSchema): JsonSchema => has("settings", has("agentry", agentry));

/**
 * The import schema of one deployment, as `narrowToDeployment` does for create: `modelProvider` says which
 * providers it is configured for (every accepted name is taken; the others with a warning), and where a
 * provider serves only some models, `settings.model` must name one of them whenever that provider is the one the
 * file names (in `settings.agentry.modelProvider`, or else in `modelProvider`), or is the default one and the file
 * names none.
 */
export function narrowCharacterFile(schema: JsonSchema, served: ServedProviders): void {
  const names = served.providers.map((provider) => provider.name);
  const properties = schema.properties as Record<string, JsonSchema>;
  const topLevel = properties.modelProvider!;
  topLevel.description = `${topLevel.description} This deployment is configured for ${names.map((name) => `\`${name}\``).join(", ")}; a file naming another provider is imported with a warning, and its messages fail with \`502 MODEL_ERROR\` until that provider is configured.`;
  const settings = properties.settings!.properties as Record<string, JsonSchema>;

  const rules: JsonSchema[] = [];
  for (const provider of served.providers.filter((candidate) => candidate.models.length > 0)) {
    const then = {
      properties: { settings: { properties: { model: { pattern: oneOfNamesPattern(provider.models) } } } },
    };
    const elizaNames = elizaNamesOf(provider.name);
    const agentryNames = inAgentry(has("modelProvider"));
    rules.push({ if: inAgentry(has("modelProvider", { const: provider.name })), then });
    if (elizaNames.length > 0) {
      rules.push({ if: { ...has("modelProvider", { enum: elizaNames }), not: agentryNames }, then });
    }
    if (provider.name === served.defaultProvider) {
      rules.push({ if: { not: { anyOf: [has("modelProvider"), agentryNames] } }, then });
    }
    const model = settings.model!;
    model.description = `${model.description} Here \`${provider.name}\` serves only ${provider.models.map((name) => `\`${name}\``).join(", ")}.`;
  }
  if (rules.length > 0) schema.allOf = rules;
}
