import {
  type AgentFields,
  characterFileName,
  characterJsonSchema,
  exportCharacter,
  type FieldIssue,
  importCharacter,
} from "@agentry/characters";
import { clientWarnings, isId, type ProviderName, publicSettings, TIER_DEFAULTS } from "@agentry/core";
import { AppError, invalidInput } from "@agentry/errors";
import { type Catalogue, normalisePluginSetting } from "@agentry/plugin-kit";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Router } from "@koa/router";
import type { GatewayState } from "../context.js";
import { readJsonBody } from "../http/body.js";
import { createdUnderKey } from "../http/idempotency.js";
import { createAgentBody } from "../validation/agents.js";
import { importCharacterQuery } from "../validation/characters.js";
import { modelChoiceIssues, modelChoiceWarnings } from "../validation/models.js";
import { defineRoute, type Route } from "./define.js";
import { type AgentJson, presentAgent, toAgentSpec } from "./present.js";

/** Where the character file's JSON Schema is published, without authentication, as the OpenAPI document is. */
export const CHARACTER_SCHEMA_PATH = "/v1/schemas/character.json";

/** The agent a dry run would create: its writable fields as a read would present them. */
function presentDraft(
  agent: AgentFields,
): Omit<AgentJson, "id" | "status" | "statusReason" | "createdAt" | "updatedAt" | "apiEndpoint"> {
  return {
    ...agent,
    settings: publicSettings(agent.settings) as JsonObject,
    clients: agent.clients as JsonValue[],
  };
}

/**
 * A file's plugin that the catalogue has but whose config its schema refuses (`http` named without the URLs it
 * may call) is kept disabled, as plugins outside the catalogue are, with a warning naming what is wrong.
 */
function disableMisconfiguredPlugins(catalogue: Catalogue, agent: AgentFields, warnings: FieldIssue[]): void {
  const refused = new Map<number, string[]>();
  for (const problem of catalogue.check(agent.plugins)) {
    const index = Number(/^plugins\[(\d+)\]/.exec(problem.field)?.[1]);
    const field = problem.field.replace(/^plugins\[\d+\]\.?/, "");
    refused.set(index, [
      ...(refused.get(index) ?? []),
      field ? `${field} ${problem.message}` : problem.message,
    ]);
  }
  for (const [index, problems] of refused) {
    const setting = normalisePluginSetting(agent.plugins[index]);
    if (!setting) continue;
    agent.plugins[index] = { ...setting, enabled: false } as JsonValue;
    warnings.push({
      field: `plugins[${index}]`,
      issue: `its configuration does not suit the plugin (${problems.join("; ")}): kept disabled; it will not act`,
    });
  }
}

const FILE_NAME_EXAMPLE = 'attachment; filename="eliza.character.json"';

export const characterRoutes: Route[] = [
  /**
   * `POST /v1/agents/import`: an elizaOS character file becomes an agent (docs/api/character-files.md, "Import"). The
   * file's problems are all reported at once by JSON path; then, as on create, its model must be one its provider
   * serves, and a provider with no configuration here gives a warning. `useDefaultModel` leaves the provider and
   * model to the server's default, the file's kept for the export. Plugins the catalogue has are enabled; others,
   * and those whose config their plugin's schema refuses, are kept disabled, with a warning.
   */
  defineRoute({
    method: "POST",
    path: "/v1/agents/import",
    scope: "agents:write",
    limit: "createPerMinute",
    claimsKeyInCreate: true,
    sdk: { resource: ["agents"], method: "importCharacter" },
    operationId: "importCharacter",
    tag: "Agents",
    summary: "Import an elizaOS character file",
    description: `Creates an agent from an elizaOS character file (v0.x, 1.x, or with grouped \`messageExamples\`), sent as the body; its JSON Schema is also served at \`${CHARACTER_SCHEMA_PATH}\`. Only \`name\` is required. \`name\`, \`bio\` (a string is one item), the strings of \`knowledge\`, \`clients\`, \`plugins\` and \`settings\` map to the agent's own fields; \`settings.model\` becomes \`model\`; \`modelProvider\` is mapped (\`anthropic\` stays, \`llama_local\` becomes \`local\`, the OpenAI-compatible names become \`openai\`), the name given kept in \`personality.sourceModelProvider\`. \`system\`, \`username\`, \`lore\`, \`topics\`, \`adjectives\`, \`style\`, \`messageExamples\`, \`postExamples\` and \`templates\` are kept in \`personality\` under their names (empty ones nowhere); file and folder references of \`knowledge\` in \`personality.knowledgeSources\`, with their positions; fields the schema does not name in \`personality.extraFields\`. \`settings.secrets\` and \`secrets\` are stored in the agent's \`settings.secrets\`, which no read or export ever returns. Plugins not in the plugin catalogue are kept as \`{name, enabled: false}\`. \`settings.agentry\`, written by an export, puts back what the elizaOS format has no field for.\n\nThe answer carries \`warnings\`, \`[{field, issue}]\` by JSON path in the file, for what was kept but will not act. Every problem of the file is answered at once, as \`details\` by JSON path. With \`dryRun=true\` nothing is stored: \`200\` with the agent it would create. With \`useDefaultModel=true\` the agent uses this server's default provider and model (\`modelProvider\` and \`model\` \`null\`), the file's kept in \`personality.sourceModelProvider\` and \`personality.sourceModel\`; the export puts the model back in \`settings.model\`. As on create, a provider with no configuration here is taken with a warning naming the variable to set, each of the file's \`clients\` that will not connect has a warning at its path (a platform no connector runs; \`telegram\`, \`discord\` or \`slack\`, whose agent secrets the new agent does not hold yet), a provider that serves only some models (\`local\`) must be given one of them, and the account holds at most its plan's \`maxAgents\` agents (${TIER_DEFAULTS.standard.maxAgents} by default).`,
    body: { component: "CharacterFile", argument: "character" },
    query: importCharacterQuery,
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
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const raw = await readJsonBody(ctx);
      const { dryRun, useDefaultModel } = input.query();
      const result = importCharacter(raw, {
        inCatalogue: (name) => gateway.catalogue.has(name),
        useDefaultModel,
      });
      if (!result.ok) throw invalidInput("character file", result.issues);
      const { agent, warnings, fieldPaths } = result;
      disableMisconfiguredPlugins(gateway.catalogue, agent, warnings);
      // The agent is new: it has no agent secrets yet, so a run platform is warned of until they are set.
      warnings.push(...clientWarnings(agent.clients, new Set(), fieldPaths.clients));

      const served = await gateway.providers.get();
      if (served && (agent.modelProvider !== null || agent.model !== null)) {
        const details = modelChoiceIssues(
          served,
          { modelProvider: agent.modelProvider, model: agent.model },
          { modelProvider: true, model: true },
        ).map((detail) => ({
          ...detail,
          field: fieldPaths[detail.field === "model" ? "model" : "modelProvider"],
        }));
        if (details.length > 0) throw invalidInput("character file", details);
        warnings.push(
          ...modelChoiceWarnings(served, agent.modelProvider).map((warning) => ({
            ...warning,
            field: fieldPaths.modelProvider,
          })),
        );
      }

      if (dryRun) {
        ctx.body = { success: true, data: presentDraft(agent), warnings };
        return;
      }
      // The import holds the bounds of create; an agent create would refuse is a fault of this service, not the file's.
      const body = createAgentBody.safeParse({
        ...agent,
        modelProvider: agent.modelProvider ?? undefined,
        model: agent.model ?? undefined,
      });
      if (!body.success) throw new Error(`an imported agent failed the create schema: ${body.error.message}`);
      const { agent: created } = createdUnderKey(
        ctx,
        await gateway.agents.createAgent(
          {
            accountId: principal.accountId,
            spec: toAgentSpec(body.data),
            idempotency: ctx.state.idempotency?.create,
          },
          rpc,
        ),
      );
      ctx.status = 201;
      ctx.body = { success: true, data: presentAgent(created!, gateway.config.PUBLIC_BASE_URL), warnings };
    },
  }),
  /**
   * `GET /v1/agents/{agentId}/character`: the agent as an elizaOS 1.x character file, the bare file as a download,
   * without the envelope, so that what is saved is the file itself. Secrets never leave (`exportCharacter`).
   */
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/character",
    scope: "agents:read",
    limit: "getPerMinute",
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
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = input.params.agentId;
      if (!isId("agent", id))
        throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
      const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
      const presented = presentAgent(agent!, gateway.config.PUBLIC_BASE_URL);
      const file = exportCharacter({
        name: presented.name,
        bio: presented.bio,
        personality: presented.personality,
        knowledge: presented.knowledge,
        goals: presented.goals,
        clients: presented.clients,
        settings: presented.settings,
        modelProvider: presented.modelProvider as ProviderName | null,
        model: presented.model,
        plugins: presented.plugins,
      });
      ctx.set("Content-Disposition", `attachment; filename="${characterFileName(presented.name)}"`);
      ctx.type = "application/json; charset=utf-8";
      ctx.body = `${JSON.stringify(file, null, 2)}\n`;
    },
  }),
];

/** Serves the character file's JSON Schema; it is the same for every deployment, so it is built once. */
export function characterSchemaRoute(router: Router<GatewayState>): void {
  let body: string | undefined;
  router.get(CHARACTER_SCHEMA_PATH, (ctx) => {
    body ??= JSON.stringify(characterJsonSchema());
    ctx.type = "application/schema+json; charset=utf-8";
    ctx.body = body;
  });
}
