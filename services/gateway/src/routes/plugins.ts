import { isId } from "@agentry/core";
import { AppError, invalidInputListing } from "@agentry/errors";
import type { SecretInfo } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { putSecretBody, secretName } from "../validation/plugins.js";
import { defineRoute, type HandlerInput, type Route } from "./define.js";

/** A secret as the API shows it: its name and when it was set, never its value. */
function presentSecret(secret: SecretInfo) {
  return {
    name: secret.name,
    updatedAt: secret.updatedAt ? timestampDate(secret.updatedAt).toISOString() : null,
  };
}

/** A malformed id cannot name an agent: answered like a missing one, without a lookup. */
function agentIdParam({ ctx }: HandlerInput): string {
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  return id;
}

function secretNameParam({ ctx }: HandlerInput): string {
  const parsed = secretName.safeParse(ctx.params.name ?? "");
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]?.message ?? "is invalid";
  throw invalidInputListing("path parameter", [{ field: "name", issue }]);
}

/** The plugin catalogue and agents' secrets (docs/api/plugins-and-tools.md). */
export const pluginRoutes: Route[] = [
  /** `GET /v1/plugins`: the catalogue of the plugins this deployment installs. */
  defineRoute({
    method: "GET",
    path: "/v1/plugins",
    scope: null,
    limit: "listPerMinute",
    sdk: { resource: ["plugins"], method: "list" },
    operationId: "listPlugins",
    tag: "Plugins",
    summary: "List the plugin catalogue",
    description:
      "The plugins this deployment installs, sorted by name: each with its version, the JSON Schema of the `config` an agent gives it, the names of the secrets it reads and its tools. An agent uses a plugin by naming it in `plugins`; during a turn the model may call the tools of the agent's enabled plugins.",
    success: { status: 200, schema: "PluginListResponse", description: "The catalogue." },
    errors: [],
    async handler({ ctx, gateway }) {
      ctx.body = { success: true, data: gateway.catalogue.entries };
    },
  }),
  /** `PUT /v1/agents/{agentId}/secrets/{name}`: sets one secret, encrypted by the registry before it is stored. */
  defineRoute({
    method: "PUT",
    path: "/v1/agents/:agentId/secrets/:name",
    scope: "plugins:manage",
    limit: "updatePerMinute",
    sdk: { resource: ["agents", "secrets"], method: "set" },
    operationId: "putAgentSecret",
    tag: "Plugins",
    summary: "Set an agent's secret",
    description:
      "Sets one secret of the agent, replacing its value if it exists: a credential its plugins read (the `mcp` plugin's `authSecret`, for example). The value is stored encrypted (AES-256-GCM under the deployment's `SECRETS_KEY`) and is never returned, logged or exported; the answer names the secret and when it was set. Deleting the agent deletes its secrets.",
    body: { schema: putSecretBody, component: "PutSecretRequest" },
    success: { status: 200, schema: "SecretResponse", description: "The secret's name and when it was set." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = agentIdParam(input);
      const name = secretNameParam(input);
      const { value } = await input.body();
      const { secret } = await gateway.plugins.putSecret(
        { accountId: principal.accountId, agentId, name, value },
        rpc,
      );
      ctx.body = { success: true, data: presentSecret(secret!) };
    },
  }),
  /** `GET /v1/agents/{agentId}/secrets`: the names of the agent's secrets and when each was set. */
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/secrets",
    scope: "plugins:manage",
    limit: "listPerMinute",
    sdk: { resource: ["agents", "secrets"], method: "list" },
    operationId: "listAgentSecrets",
    tag: "Plugins",
    summary: "List an agent's secrets",
    description:
      "The names of the agent's secrets and when each was set, sorted by name; never their values.",
    success: { status: 200, schema: "SecretListResponse", description: "The agent's secrets." },
    errors: ["AGENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = agentIdParam(input);
      const { secrets } = await gateway.plugins.listSecrets({ accountId: principal.accountId, agentId }, rpc);
      ctx.body = { success: true, data: secrets.map(presentSecret) };
    },
  }),
  /** `DELETE /v1/agents/{agentId}/secrets/{name}`. */
  defineRoute({
    method: "DELETE",
    path: "/v1/agents/:agentId/secrets/:name",
    scope: "plugins:manage",
    limit: "deletePerMinute",
    sdk: { resource: ["agents", "secrets"], method: "delete" },
    operationId: "deleteAgentSecret",
    tag: "Plugins",
    summary: "Delete an agent's secret",
    description: "Deletes one secret of the agent; a plugin that reads it then runs without it.",
    success: { status: 200, schema: "SecretDeletedResponse", description: "The secret was deleted." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "SECRET_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = agentIdParam(input);
      const name = secretNameParam(input);
      await gateway.plugins.deleteSecret({ accountId: principal.accountId, agentId, name }, rpc);
      ctx.body = { success: true, data: { name, deleted: true } };
    },
  }),
];
