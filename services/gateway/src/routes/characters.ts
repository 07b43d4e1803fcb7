import {
  type AgentFields,
  characterFileName,
  characterJsonSchema,
  exportCharacter,
  type FieldIssue,
  importCharacter,
} from "@agentry/characters";
import { isId, type ProviderName, publicSettings } from "@agentry/core";
import { AppError, invalidInput } from "@agentry/errors";
import { type Catalogue, normalisePluginSetting } from "@agentry/plugin-kit";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Router } from "@koa/router";
import type { GatewayState } from "../context.js";
import { readJsonBody } from "../http/body.js";
import { createdUnderKey } from "../http/idempotency.js";
import { createAgentBody } from "../validation/agents.js";
import { importCharacterQuery } from "../validation/characters.js";
import { parseOrThrow } from "../validation/issues.js";
import { modelChoiceIssues, modelChoiceWarnings } from "../validation/models.js";
import { type AgentJson, presentAgent, toAgentSpec } from "./present.js";
import type { HandlerInput, Route } from "./table.js";

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

/**
 * `POST /v1/agents/import`: an elizaOS character file becomes an agent (docs/api/character-files.md, "Import"). The
 * file's problems are all reported at once by JSON path; then, as on create, its model must be one its provider
 * serves, and a provider with no configuration here gives a warning. `useDefaultModel` leaves the provider and
 * model to the server's default, the file's kept for the export. Plugins the catalogue has are enabled; others,
 * and those whose config their plugin's schema refuses, are kept disabled, with a warning.
 */
async function importAgent(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const raw = await readJsonBody(ctx);
  const { dryRun, useDefaultModel } = parseOrThrow(importCharacterQuery, ctx.query, "query parameters");
  const result = importCharacter(raw, {
    inCatalogue: (name) => gateway.catalogue.has(name),
    useDefaultModel,
  });
  if (!result.ok) throw invalidInput("character file", result.issues);
  const { agent, warnings, fieldPaths } = result;
  disableMisconfiguredPlugins(gateway.catalogue, agent, warnings);

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
}

/**
 * `GET /v1/agents/{agentId}/character`: the agent as an elizaOS 1.x character file, the bare file as a download,
 * without the envelope, so that what is saved is the file itself. Secrets never leave (`exportCharacter`).
 */
async function exportAgent(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = ctx.params.agentId ?? "";
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
}

export const characterRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/agents/import",
    scope: "agents:write",
    limit: "createPerMinute",
    handle: importAgent,
    claimsKeyInCreate: true,
  },
  {
    method: "GET",
    path: "/v1/agents/:agentId/character",
    scope: "agents:read",
    limit: "getPerMinute",
    handle: exportAgent,
  },
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
