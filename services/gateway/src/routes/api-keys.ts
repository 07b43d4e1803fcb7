import { isId, type Scope } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { ApiKey } from "@agentry/proto";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { heldScopes } from "../http/auth.js";
import { readJsonBody } from "../http/body.js";
import { createdUnderKey } from "../http/idempotency.js";
import { createApiKeyBody } from "../validation/api-keys.js";
import { parseOrThrow } from "../validation/issues.js";
import type { HandlerInput, Route } from "./table.js";

/** The public JSON of an API key record; the secret is never part of it. */
function presentKey(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: heldScopes(key),
    fullAccess: key.fullAccess,
    createdAt: key.createTime ? timestampDate(key.createTime).toISOString() : null,
    lastUsedAt: key.lastUsedTime ? timestampDate(key.lastUsedTime).toISOString() : null,
    expiresAt: key.expireTime ? timestampDate(key.expireTime).toISOString() : null,
  };
}

async function createKey({ ctx, gateway, principal, rpc }: HandlerInput): Promise<void> {
  const body = parseOrThrow(createApiKeyBody, await readJsonBody(ctx), "request body");
  // Without scopes a key gets what its creator holds: full access from a full-access key (an empty list asks the
  // registry for one), exactly the creator's own scopes otherwise.
  const scopes: Scope[] = body.scopes ?? (principal.fullAccess ? [] : [...principal.scopes]);
  const missing = scopes.filter((scope) => !principal.scopes.has(scope));
  if (missing.length > 0) {
    throw new AppError(
      "FORBIDDEN",
      `A key can only grant scopes it holds itself; this one lacks: ${missing.join(", ")}.`,
    );
  }
  const keyed = ctx.state.idempotency;
  const { apiKey, secret } = createdUnderKey(
    ctx,
    await gateway.accounts.createApiKey(
      {
        accountId: principal.accountId,
        name: body.name ?? "",
        scopes,
        ...(body.expiresAt ? { expireTime: timestampFromMs(Date.parse(body.expiresAt)) } : {}),
        // The registry keeps the new secret under the key sealed with this, to answer a retry with.
        ...(keyed?.create ? { idempotency: { ...keyed.create, sealingKey: keyed.sealing() } } : {}),
      },
      rpc,
    ),
  );
  ctx.status = 201;
  ctx.body = { success: true, data: { ...presentKey(apiKey!), key: secret } };
}

async function listKeys({ ctx, gateway, principal, rpc }: HandlerInput): Promise<void> {
  const { apiKeys } = await gateway.accounts.listApiKeys({ accountId: principal.accountId }, rpc);
  ctx.body = { success: true, data: apiKeys.filter((key) => !key.revokeTime).map(presentKey) };
}

async function revokeKey({ ctx, gateway, principal, rpc }: HandlerInput): Promise<void> {
  const id = ctx.params.keyId ?? "";
  if (!isId("key", id)) throw new AppError("NOT_FOUND", `API key ${JSON.stringify(id)} does not exist.`);
  const { alreadyRevoked } = await gateway.accounts.revokeApiKey({ accountId: principal.accountId, id }, rpc);
  // This gateway forgets the key at once; the others within AUTH_CACHE_TTL_MS.
  gateway.auth.invalidateKey(id);
  // A revoked key is gone from the caller's point of view, as in the listing.
  if (alreadyRevoked) throw new AppError("NOT_FOUND", `API key ${id} does not exist.`);
  ctx.body = { success: true, data: { id, revoked: true } };
}

/** API keys managed over REST with the `keys:manage` scope. */
export const apiKeyRoutes: Route[] = [
  { method: "POST", path: "/v1/api-keys", scope: "keys:manage", handle: createKey, claimsKeyInCreate: true },
  { method: "GET", path: "/v1/api-keys", scope: "keys:manage", handle: listKeys },
  { method: "DELETE", path: "/v1/api-keys/:keyId", scope: "keys:manage", handle: revokeKey },
];
