import { isId } from "@agentry/core";
import { AppError, invalidInputListing } from "@agentry/errors";
import type { SecretInfo } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { readJsonBody } from "../http/body.js";
import { parseOrThrow } from "../validation/issues.js";
import { putSecretBody, secretName } from "../validation/plugins.js";
import type { HandlerInput, Route } from "./table.js";

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

/** `GET /v1/plugins`: the catalogue of the plugins this deployment installs. */
async function listPlugins({ ctx, gateway }: HandlerInput): Promise<void> {
  ctx.body = { success: true, data: gateway.catalogue.entries };
}

/** `PUT /v1/agents/{agentId}/secrets/{name}`: sets one secret, encrypted by the registry before it is stored. */
async function putSecret(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = agentIdParam(input);
  const name = secretNameParam(input);
  const { value } = parseOrThrow(putSecretBody, await readJsonBody(ctx), "request body");
  const { secret } = await gateway.plugins.putSecret(
    { accountId: principal.accountId, agentId, name, value },
    rpc,
  );
  ctx.body = { success: true, data: presentSecret(secret!) };
}

/** `GET /v1/agents/{agentId}/secrets`: the names of the agent's secrets and when each was set. */
async function listSecrets(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = agentIdParam(input);
  const { secrets } = await gateway.plugins.listSecrets({ accountId: principal.accountId, agentId }, rpc);
  ctx.body = { success: true, data: secrets.map(presentSecret) };
}

/** `DELETE /v1/agents/{agentId}/secrets/{name}`. */
async function deleteSecret(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = agentIdParam(input);
  const name = secretNameParam(input);
  await gateway.plugins.deleteSecret({ accountId: principal.accountId, agentId, name }, rpc);
  ctx.body = { success: true, data: { name, deleted: true } };
}

/** The plugin catalogue and agents' secrets (docs/api/plugins-and-tools.md). */
export const pluginRoutes: Route[] = [
  { method: "GET", path: "/v1/plugins", scope: null, limit: "listPerMinute", handle: listPlugins },
  {
    method: "PUT",
    path: "/v1/agents/:agentId/secrets/:name",
    scope: "plugins:manage",
    limit: "updatePerMinute",
    handle: putSecret,
  },
  {
    method: "GET",
    path: "/v1/agents/:agentId/secrets",
    scope: "plugins:manage",
    limit: "listPerMinute",
    handle: listSecrets,
  },
  {
    method: "DELETE",
    path: "/v1/agents/:agentId/secrets/:name",
    scope: "plugins:manage",
    limit: "deletePerMinute",
    handle: deleteSecret,
  },
];
