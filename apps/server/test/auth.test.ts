import { API_KEY_PREFIX, generateApiKey } from "@agentry/core";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  h = await startHarness({ AUTH_CACHE_TTL_MS: "300" });
  tenant = await h.tenant();
});
afterAll(() => h.close());

const get = (headers: Record<string, string>) => h.request<ErrorBody>("GET", "/v1/agents", { headers });

async function expect401(headers: Record<string, string>, message: RegExp) {
  const res = await get(headers);
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe("UNAUTHORIZED");
  expect(res.body.error.message).toMatch(message);
}

describe("authentication", () => {
  it("accepts a valid key", async () => {
    expect((await get({ authorization: `Bearer ${tenant.key}` })).status).toBe(200);
    expect((await get({ authorization: `bearer  ${tenant.key}` })).status).toBe(200);
  });

  it("refuses a missing key", () => expect401({}, /Missing API key/));

  it("refuses a header that is not Bearer", () =>
    expect401({ authorization: `Basic ${tenant.key}` }, /Bearer/));

  it("refuses malformed keys without a lookup", async () => {
    const calls: unknown[] = [];
    const original = h.gateway.context.accounts.verifyApiKey;
    h.gateway.context.accounts.verifyApiKey = (...args) => {
      calls.push(args);
      return original(...args);
    };
    try {
      await expect401({ authorization: "Bearer nope" }, /malformed/);
      // Right shape, wrong checksum: one character changed.
      const last = tenant.key.at(-1) === "a" ? "b" : "a";
      await expect401({ authorization: `Bearer ${tenant.key.slice(0, -1)}${last}` }, /malformed/);
      expect(calls).toHaveLength(0);
    } finally {
      h.gateway.context.accounts.verifyApiKey = original;
    }
  });

  it("refuses a well-formed key that does not exist", async () => {
    const { secret } = generateApiKey();
    expect(secret.startsWith(API_KEY_PREFIX)).toBe(true);
    await expect401({ authorization: `Bearer ${secret}` }, /invalid, revoked or expired/);
  });

  it("refuses a revoked key once the cache entry lapses", async () => {
    const { key, keyId } = await tenant.keyWith(["agents:read"]);
    expect((await get({ authorization: `Bearer ${key}` })).status).toBe(200);
    await h.gateway.context.accounts.revokeApiKey({ id: keyId });
    await new Promise((resolve) => setTimeout(resolve, 350));
    await expect401({ authorization: `Bearer ${key}` }, /invalid, revoked or expired/);
  });

  it("refuses a revoked key at once when the revocation goes through this gateway", async () => {
    const { key, keyId } = await tenant.keyWith(["agents:read"]);
    expect((await get({ authorization: `Bearer ${key}` })).status).toBe(200);
    await h.gateway.context.accounts.revokeApiKey({ id: keyId });
    h.gateway.context.auth.invalidateKey(keyId);
    await expect401({ authorization: `Bearer ${key}` }, /invalid, revoked or expired/);
  });

  it("refuses an expired key, even while cached", async () => {
    const { apiKey, secret } = await h.gateway.context.accounts.createApiKey({
      accountId: tenant.accountId,
      name: "short-lived",
      expireTime: timestampFromDate(new Date(Date.now() + 150)),
    });
    expect(apiKey?.expireTime).toBeDefined();
    expect((await get({ authorization: `Bearer ${secret}` })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect401({ authorization: `Bearer ${secret}` }, /invalid, revoked or expired/);
  });
});

describe("scopes", () => {
  const exportOf = (key: string) => h.request<ErrorBody>("GET", "/v1/users/u1/export", { key });

  it("lets a full-access key through every route, also one whose scope the registry does not list", async () => {
    const { secret } = await h.gateway.context.accounts.createApiKey({
      accountId: tenant.accountId,
      name: "full",
    });
    // A registry of an earlier version lists the scopes it knew; full access still holds the later ones.
    const original = h.gateway.context.accounts.verifyApiKey;
    h.gateway.context.accounts.verifyApiKey = async (...args) => {
      const response = await original(...args);
      response.apiKey!.scopes = [
        "agents:read",
        "agents:write",
        "agents:delete",
        "messages:send",
        "keys:manage",
      ];
      return response;
    };
    try {
      expect((await exportOf(secret)).status).toBe(200);
    } finally {
      h.gateway.context.accounts.verifyApiKey = original;
    }
  });

  it("holds a key with explicit scopes to those, whatever is added later", async () => {
    const { key } = await tenant.keyWith([
      "agents:read",
      "agents:write",
      "agents:delete",
      "messages:send",
      "keys:manage",
    ]);
    const refused = await exportOf(key);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    expect(refused.body.error.message).toContain("history:read");
  });
});
