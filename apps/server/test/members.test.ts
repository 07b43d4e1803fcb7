import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";
import { addMember, signInAs } from "./members-helpers.js";

interface MemberBody {
  id: string;
  email: string | null;
  name: string;
  role: string;
  createdAt: string;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const data = <T>(body: unknown) => (body as { data: T }).data;

describe("members over REST", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await h.tenant();
  });

  it("lists the account's first member, its owner, and invites, reads, changes and removes others", async () => {
    const list = await h.request("GET", "/v1/members?order=asc", { key: tenant.key });
    expect(list.status).toBe(200);
    const [owner] = data<MemberBody[]>(list.body);
    expect(owner).toMatchObject({ email: null, name: "Owner", role: "owner" });

    const invited = await h.request("POST", "/v1/members", {
      key: tenant.key,
      body: { email: "Grace@Example.com", role: "developer" },
    });
    expect(invited.status).toBe(201);
    const grace = data<MemberBody>(invited.body);
    expect(grace).toEqual({
      id: expect.stringMatching(/^usr_[0-9A-Z]{26}$/),
      email: "grace@example.com",
      name: "Grace",
      role: "developer",
      createdAt: expect.any(String),
    });
    expect((await h.request("GET", `/v1/members/${grace.id}`, { key: tenant.key })).body).toEqual({
      success: true,
      data: grace,
    });

    const changed = await h.request("PATCH", `/v1/members/${grace.id}`, {
      key: tenant.key,
      body: { role: "admin", name: "Grace Hopper" },
    });
    expect(changed.status).toBe(200);
    expect(data<MemberBody>(changed.body)).toEqual({ ...grace, role: "admin", name: "Grace Hopper" });

    const page = await h.request("GET", "/v1/members?limit=1", { key: tenant.key });
    expect(page.body).toMatchObject({ pagination: { limit: 1, hasMore: true } });
    expect(data<MemberBody[]>(page.body).map((m) => m.id)).toEqual([grace.id]);
    const next = await h.request("GET", `/v1/members?limit=1&before=${grace.id}`, { key: tenant.key });
    expect(data<MemberBody[]>(next.body).map((m) => m.id)).toEqual([owner!.id]);

    const removed = await h.request("DELETE", `/v1/members/${grace.id}`, { key: tenant.key });
    expect(removed.body).toEqual({ success: true, data: { id: grace.id, removed: true } });
    const gone = await h.request<ErrorBody>("GET", `/v1/members/${grace.id}`, { key: tenant.key });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("MEMBER_NOT_FOUND");
  });

  it("refuses bad invitations and changes with a clear 4xx", async () => {
    const bad = await h.request<ErrorBody>("POST", "/v1/members", {
      key: tenant.key,
      body: { email: "not-an-email", role: "boss" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details?.map((d) => d.field).sort()).toEqual(["email", "role"]);
    await h.request("POST", "/v1/members", {
      key: tenant.key,
      body: { email: "twice@example.com", role: "viewer" },
    });
    const twice = await h.request<ErrorBody>("POST", "/v1/members", {
      key: tenant.key,
      body: { email: "TWICE@example.com", role: "admin" },
    });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("MEMBER_EXISTS");
    const empty = await h.request<ErrorBody>("PATCH", "/v1/members/usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1", {
      key: tenant.key,
      body: {},
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain("at least one of email, name and role");
    for (const id of ["usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1", "nope"]) {
      const missing = await h.request<ErrorBody>("DELETE", `/v1/members/${id}`, { key: tenant.key });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe("MEMBER_NOT_FOUND");
    }
  });

  it("keeps the last owner: neither removed nor demoted (409 LAST_OWNER)", async () => {
    const fresh = await h.tenant();
    const [owner] = data<MemberBody[]>((await h.request("GET", "/v1/members", { key: fresh.key })).body);
    const demote = await h.request<ErrorBody>("PATCH", `/v1/members/${owner!.id}`, {
      key: fresh.key,
      body: { role: "admin" },
    });
    expect(demote.status).toBe(409);
    expect(demote.body.error.code).toBe("LAST_OWNER");
    expect(demote.body.error.message).toContain("make another member an owner first");
    const remove = await h.request<ErrorBody>("DELETE", `/v1/members/${owner!.id}`, { key: fresh.key });
    expect(remove.status).toBe(409);
    expect(remove.body.error.code).toBe("LAST_OWNER");
  });

  it("treats another account's member as missing", async () => {
    const other = await h.tenant();
    const theirs = await addMember(h, other.accountId, "viewer");
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { role: "admin" }],
      ["DELETE", undefined],
    ] as const) {
      const res = await h.request<ErrorBody>(method, `/v1/members/${theirs}`, { key: tenant.key, body });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("MEMBER_NOT_FOUND");
    }
  });

  it("needs members:read to read and members:write to change, and a key to call at all", async () => {
    const { key: reader } = await tenant.keyWith(["members:read"]);
    expect((await h.request("GET", "/v1/members", { key: reader })).status).toBe(200);
    const write = await h.request<ErrorBody>("POST", "/v1/members", {
      key: reader,
      body: { email: "x@example.com", role: "viewer" },
    });
    expect(write.status).toBe(403);
    expect(write.body.error.message).toContain("members:write");
    expect((await h.request("GET", "/v1/members")).status).toBe(401);
  });
});

describe("console sessions act with their member's role", () => {
  it("says who is signed in, with the role's scopes, and follows a role change", async () => {
    const tenant = await h.tenant();
    const dev = await addMember(h, tenant.accountId, "developer", "dev@example.com");
    const session = await signInAs(h, tenant.accountId, dev);
    const described = await session.request("GET", "/console/session");
    expect(data<{ member: unknown; scopes: string[] }>(described.body)).toMatchObject({
      member: { id: dev, email: "dev@example.com", role: "developer" },
      scopes: expect.arrayContaining(["agents:write", "messages:send", "members:read"]),
    });
    expect(data<{ scopes: string[] }>(described.body).scopes).not.toContain("keys:manage");

    const keys = await session.request<ErrorBody>("GET", "/v1/api-keys");
    expect(keys.status).toBe(403);
    expect(keys.body.error.message).toContain("Your role 'developer'");

    await h.request("PATCH", `/v1/members/${dev}`, { key: tenant.key, body: { role: "admin" } });
    // Sessions are trusted for AUTH_CACHE_TTL_MS (under a second) before they are verified again.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await session.request("GET", "/v1/api-keys")).status).toBe(200);

    await h.request("DELETE", `/v1/members/${dev}`, { key: tenant.key });
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await session.request("GET", "/v1/agents")).status).toBe(401);
  });

  it("signs a link without a member in as the account's first owner, with every scope", async () => {
    const tenant = await h.tenant();
    const session = await signInAs(h, tenant.accountId);
    const described = data<{ member: { role: string }; scopes: string[] }>(
      (await session.request("GET", "/console/session")).body,
    );
    expect(described.member.role).toBe("owner");
    expect(described.scopes).toContain("members:write");
  });

  it("lets an admin manage members but not owners, and no one but an owner make one", async () => {
    const tenant = await h.tenant();
    const admin = await signInAs(h, tenant.accountId, await addMember(h, tenant.accountId, "admin"));
    const viewer = await addMember(h, tenant.accountId, "viewer");
    expect((await admin.request("PATCH", `/v1/members/${viewer}`, { role: "developer" })).status).toBe(200);
    const raise = await admin.request<ErrorBody>("PATCH", `/v1/members/${viewer}`, { role: "owner" });
    expect(raise.status).toBe(403);
    expect(raise.body.error.message).toContain("Only an owner");
    const invite = await admin.request<ErrorBody>("POST", "/v1/members", {
      email: "o@example.com",
      role: "owner",
    });
    expect(invite.status).toBe(403);
    const [owner] = data<MemberBody[]>((await admin.request("GET", "/v1/members?order=asc")).body);
    expect((await admin.request("DELETE", `/v1/members/${owner!.id}`)).status).toBe(403);
    const ownerSession = await signInAs(h, tenant.accountId);
    expect((await ownerSession.request("PATCH", `/v1/members/${viewer}`, { role: "owner" })).status).toBe(
      200,
    );
  });
});

describe("API keys made by members", () => {
  it("record the member who made them, and cannot exceed the member's role", async () => {
    const tenant = await h.tenant();
    const adminId = await addMember(h, tenant.accountId, "admin");
    const admin = await signInAs(h, tenant.accountId, adminId);
    const made = await admin.request<{
      data: { createdBy: string; scopes: string[]; fullAccess: boolean; key: string };
    }>("POST", "/v1/api-keys", { name: "ci", scopes: ["agents:read", "keys:manage"] });
    expect(made.status).toBe(201);
    expect(made.body.data.createdBy).toBe(adminId);

    // Without scopes, an admin's key gets the admin's scopes, never full access.
    const bare = await admin.request<{ data: { scopes: string[]; fullAccess: boolean } }>(
      "POST",
      "/v1/api-keys",
      {
        name: "bare",
      },
    );
    expect(bare.body.data.fullAccess).toBe(false);
    expect(bare.body.data.scopes).toContain("members:write");

    // A key made by that key names the same member.
    const chained = await h.request<{ data: { createdBy: string } }>("POST", "/v1/api-keys", {
      key: made.body.data.key,
      body: { name: "chained", scopes: ["agents:read"] },
    });
    expect(chained.body.data.createdBy).toBe(adminId);

    const listed = await h.request<{ data: { name: string; createdBy: string | null }[] }>(
      "GET",
      "/v1/api-keys",
      {
        key: tenant.key,
      },
    );
    expect(listed.body.data.find((k) => k.name === "ci")?.createdBy).toBe(adminId);
    expect(listed.body.data.find((k) => k.name === "test")?.createdBy).toBeNull();

    const dev = await signInAs(h, tenant.accountId, await addMember(h, tenant.accountId, "developer"));
    // A developer may not manage keys at all; an admin may not grant what admins lack.
    expect((await dev.request("POST", "/v1/api-keys", { scopes: ["agents:read"] })).status).toBe(403);
    const owner = await signInAs(h, tenant.accountId);
    const full = await owner.request<{ data: { fullAccess: boolean } }>("POST", "/v1/api-keys", {
      name: "full",
    });
    expect(full.body.data.fullAccess).toBe(true);
  });
});
