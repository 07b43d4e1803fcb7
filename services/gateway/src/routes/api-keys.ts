import { isId, type Scope } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { ApiKey } from "@agentry/proto";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { heldScopes } from "../http/auth.js";
import { createdUnderKey } from "../http/idempotency.js";
import { createApiKeyBody } from "../validation/api-keys.js";
import { defineRoute, type Route } from "./define.js";

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
    createdBy: key.createdBy || null,
  };
}

/** API keys managed over REST with the `keys:manage` scope. */
export const apiKeyRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/api-keys",
    scope: "keys:manage",
    claimsKeyInCreate: true,
    operationId: "createApiKey",
    tag: "API keys",
    summary: "Create an API key",
    description:
      "Creates a key in the caller's account and returns its secret, the only time it is shown. A key can grant only scopes the calling key holds; from the console, only scopes the member's role holds (docs/api/members.md). The key records the member who created it (`createdBy`). Without `scopes`, a full-access calling key makes a full-access key (`fullAccess: true`: every scope, including scopes added in later versions) and any other key makes one with exactly its own scopes.",
    body: { schema: createApiKeyBody, component: "CreateApiKeyRequest" },
    success: { status: 201, schema: "ApiKeyResponse", description: "The key created, with its secret." },
    errors: ["INVALID_REQUEST", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const body = await input.body();
      // Without scopes a key gets what its creator holds: full access from a full-access key (an empty list asks the
      // registry for one), exactly the creator's own scopes otherwise.
      const scopes: Scope[] = body.scopes ?? (principal.fullAccess ? [] : [...principal.scopes]);
      const missing = scopes.filter((scope) => !principal.scopes.has(scope));
      if (missing.length > 0) {
        throw new AppError(
          "FORBIDDEN",
          principal.member
            ? `A key can only grant scopes your role '${principal.member.role}' holds; it lacks: ${missing.join(", ")}.`
            : `A key can only grant scopes it holds itself; this one lacks: ${missing.join(", ")}.`,
        );
      }
      const { actor } = principal;
      const createdBy = actor.type === "member" ? actor.id : (actor.createdBy ?? "");
      const keyed = ctx.state.idempotency;
      const { apiKey, secret } = createdUnderKey(
        ctx,
        await gateway.accounts.createApiKey(
          {
            accountId: principal.accountId,
            name: body.name ?? "",
            scopes,
            createdBy,
            ...(body.expiresAt ? { expireTime: timestampFromMs(Date.parse(body.expiresAt)) } : {}),
            // The registry keeps the new secret under the key sealed with this, to answer a retry with.
            ...(keyed?.create ? { idempotency: { ...keyed.create, sealingKey: keyed.sealing() } } : {}),
          },
          rpc,
        ),
      );
      ctx.status = 201;
      ctx.body = { success: true, data: { ...presentKey(apiKey!), key: secret } };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/api-keys",
    scope: "keys:manage",
    operationId: "listApiKeys",
    tag: "API keys",
    summary: "List API keys",
    description: "Lists the account's keys that are not revoked, without their secrets.",
    success: { status: 200, schema: "ApiKeyListResponse", description: "The account's keys." },
    errors: [],
    async handler({ ctx, gateway, principal, rpc }) {
      const { apiKeys } = await gateway.accounts.listApiKeys({ accountId: principal.accountId }, rpc);
      ctx.body = { success: true, data: apiKeys.filter((key) => !key.revokeTime).map(presentKey) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/api-keys/:keyId",
    scope: "keys:manage",
    operationId: "revokeApiKey",
    tag: "API keys",
    summary: "Revoke an API key",
    description:
      "Revokes a key of the caller's account. The key stops working at once on the gateway that answers, and on the others within their key cache time (`AUTH_CACHE_TTL_MS`, under a second by default). A key may revoke itself.",
    success: { status: 200, schema: "ApiKeyRevokedResponse", description: "The key was revoked." },
    errors: ["NOT_FOUND"],
    async handler({ ctx, gateway, principal, rpc, params }) {
      const id = params.keyId;
      if (!isId("key", id)) throw new AppError("NOT_FOUND", `API key ${JSON.stringify(id)} does not exist.`);
      const { alreadyRevoked } = await gateway.accounts.revokeApiKey(
        { accountId: principal.accountId, id },
        rpc,
      );
      // This gateway forgets the key at once; the others within AUTH_CACHE_TTL_MS.
      gateway.auth.invalidateKey(id);
      // A revoked key is gone from the caller's point of view, as in the listing.
      if (alreadyRevoked) throw new AppError("NOT_FOUND", `API key ${id} does not exist.`);
      ctx.body = { success: true, data: { id, revoked: true } };
    },
  }),
];
