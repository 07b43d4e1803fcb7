import { characterFile, elizaNamesOf, exportedCharacterFile } from "@agentry/characters";
import { z } from "zod";
import type { ComponentRegistry, JsonSchema } from "../openapi/convert.js";
import type { ServedProviders } from "../providers.js";
import { TRIMMED_SPACE } from "../validation/text.js";
import { CHARACTER_SCHEMA_PATH } from "./characters.js";

/*
 * The document's part for character files (docs/api/character-files.md): the import and export operations,
 * the schema route, their component schemas, and the import schema's narrowing to what a deployment serves.
 */

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
