import { isWellFormedApiKey, SCOPES } from "@agentry/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

interface KeyJson {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  fullAccess: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  key?: string;
}

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  h = await startHarness({ AUTH_CACHE_TTL_MS: "60000", KEY_USAGE_FLUSH_MS: "50" });
  tenant = await h.tenant();
});
afterAll(() => h.close());

const create = (body: unknown, key = tenant.key) =>
  h.request<{ success: boolean; data: KeyJson } & ErrorBody>("POST", "/v1/api-keys", { key, body });
const list = (key = tenant.key) =>
  h.request<{ success: boolean; data: KeyJson[] } & ErrorBody>("GET", "/v1/api-keys", { key });

describe("POST /v1/api-keys", () => {
  it("creates a key and shows its secret once", async () => {
    const res = await create({ name: "ci", scopes: ["agents:read"], expiresAt: "2099-01-01T00:00:00Z" });
    expect(res.status).toBe(201);
    const key = res.body.data;
    expect(isWellFormedApiKey(key.key!)).toBe(true);
    expect(key).toMatchObject({
      name: "ci",
      scopes: ["agents:read"],
      fullAccess: false,
      expiresAt: "2099-01-01T00:00:00.000Z",
      lastUsedAt: null,
    });
    expect(key.key!.startsWith(key.prefix)).toBe(true);
    expect((await h.request("GET", "/v1/agents", { key: key.key! })).status).toBe(200);
    expect((await h.request("POST", "/v1/agents", { key: key.key!, body: { name: "x" } })).status).toBe(403);
    const listed = (await list()).body.data.find((k) => k.id === key.id)!;
    expect(listed).not.toHaveProperty("key");
    expect(JSON.stringify((await list()).body)).not.toContain(key.key!);
  });

  it("grants the caller's own scopes by default and never more", async () => {
    const limited = await tenant.keyWith(["keys:manage", "agents:read"]);
    const made = await create({}, limited.key);
    expect(made.status).toBe(201);
    expect(made.body.data.scopes).toEqual(["agents:read", "keys:manage"]);
    expect(made.body.data.fullAccess).toBe(false);
    const escalate = await create({ scopes: ["agents:delete"] }, limited.key);
    expect(escalate.status).toBe(403);
    expect(escalate.body.error.code).toBe("FORBIDDEN");
    expect(escalate.body.error.message).toContain("agents:delete");
  });

  it("makes a full-access key without scopes when the caller has full access", async () => {
    const made = await create({ name: "everything" });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ scopes: [...SCOPES], fullAccess: true });
    // It holds the scopes added after the first five, as its creator does.
    const history = await h.request("GET", "/v1/users/u1/export", { key: made.body.data.key! });
    expect(history.status).toBe(200);
    const again = await create({}, made.body.data.key!);
    expect(again.body.data).toMatchObject({ scopes: [...SCOPES], fullAccess: true });
  });

  it("makes a key holding every scope by name, not full access, from a caller that names every scope", async () => {
    const named = await tenant.keyWith([...SCOPES]);
    const made = await create({}, named.key);
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ scopes: [...SCOPES], fullAccess: false });
  });

  it("validates the body", async () => {
    for (const [body, field] of [
      [{ scopes: ["agents:fly"] }, "scopes[0]"],
      [{ scopes: [] }, "scopes"],
      [{ scopes: ["agents:read", "agents:read"] }, "scopes"],
      [{ expiresAt: "tomorrow" }, "expiresAt"],
      [{ expiresAt: "2001-01-01T00:00:00Z" }, "expiresAt"],
      [{ name: 3 }, "name"],
      [{ owner: "me" }, "owner"],
    ] as const) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error.details?.[0]?.field).toBe(field);
    }
  });

  it("needs keys:manage", async () => {
    const noManage = await tenant.keyWith(["agents:read"]);
    expect((await create({}, noManage.key)).status).toBe(403);
    expect((await list(noManage.key)).status).toBe(403);
    expect((await h.request("DELETE", `/v1/api-keys/${tenant.keyId}`, { key: noManage.key })).status).toBe(
      403,
    );
  });
});

describe("GET /v1/api-keys", () => {
  it("lists the account's live keys with their last use, written in batches", async () => {
    const other = await h.tenant();
    const res = await list();
    expect(res.status).toBe(200);
    const ids = res.body.data.map((k) => k.id);
    expect(ids).toContain(tenant.keyId);
    expect(ids).not.toContain(other.keyId);
    for (const key of res.body.data) {
      expect(Object.keys(key).sort()).toEqual([
        "createdAt",
        "createdBy",
        "expiresAt",
        "fullAccess",
        "id",
        "lastUsedAt",
        "name",
        "prefix",
        "scopes",
      ]);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    const mine = (await list()).body.data.find((k) => k.id === tenant.keyId)!;
    expect(mine.lastUsedAt).not.toBeNull();
    expect(Date.now() - Date.parse(mine.lastUsedAt!)).toBeLessThan(5000);
  });
});

describe("DELETE /v1/api-keys/{id}", () => {
  it("revokes at once on this gateway, even with a long cache, and hides the key", async () => {
    const doomed = await create({ name: "doomed" });
    const secret = doomed.body.data.key!;
    expect((await h.request("GET", "/v1/agents", { key: secret })).status).toBe(200);
    const res = await h.request<{ success: boolean; data: unknown }>(
      "DELETE",
      `/v1/api-keys/${doomed.body.data.id}`,
      { key: tenant.key },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { id: doomed.body.data.id, revoked: true } });
    const refused = await h.request<ErrorBody>("GET", "/v1/agents", { key: secret });
    expect(refused.status).toBe(401);
    expect((await list()).body.data.map((k) => k.id)).not.toContain(doomed.body.data.id);
    const again = await h.request<ErrorBody>("DELETE", `/v1/api-keys/${doomed.body.data.id}`, {
      key: tenant.key,
    });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("NOT_FOUND");
  });

  it("cannot revoke another account's key", async () => {
    const other = await h.tenant();
    const res = await h.request<ErrorBody>("DELETE", `/v1/api-keys/${other.keyId}`, { key: tenant.key });
    expect(res.status).toBe(404);
    expect((await h.request("GET", "/v1/agents", { key: other.key })).status).toBe(200);
    expect((await h.request("DELETE", "/v1/api-keys/not-a-key", { key: tenant.key })).status).toBe(404);
  });

  it("refuses an expired key", async () => {
    const shortLived = await create({ expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await h.request("GET", "/v1/agents", { key: shortLived.body.data.key! })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect((await h.request("GET", "/v1/agents", { key: shortLived.body.data.key! })).status).toBe(401);
  });
});
