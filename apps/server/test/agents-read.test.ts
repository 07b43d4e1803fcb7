import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

interface AgentJson {
  id: string;
  name: string;
  status: string;
  createdAt: string;
}
interface ListBody {
  success: boolean;
  data: AgentJson[];
  pagination: { page: number; limit: number; total: number; totalPages: number; hasMore: boolean };
}

let h: Harness;
let tenant: Tenant;
const created: AgentJson[] = [];

beforeAll(async () => {
  h = await startHarness();
  tenant = await h.tenant();
  // Names chosen so that code-point order differs from case-insensitive order.
  for (const name of ["delta", "Bravo", "alpha", "Charlie", "echo"]) {
    const res = await h.request<{ data: AgentJson }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name },
    });
    created.push(res.body.data);
  }
  await h.request("PATCH", `/v1/agents/${created[1]!.id}`, { key: tenant.key, body: { status: "inactive" } });
  await h.request("PATCH", `/v1/agents/${created[3]!.id}`, { key: tenant.key, body: { status: "inactive" } });
});
afterAll(() => h.close());

const list = (query = "", key = tenant.key) => h.request<ListBody>("GET", `/v1/agents${query}`, { key });

describe("GET /v1/agents happy", () => {
  it("lists newest first by default with pagination metadata", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.map((a) => a.name)).toEqual(["echo", "Charlie", "alpha", "Bravo", "delta"]);
    expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 5, totalPages: 1, hasMore: false });
  });

  it("pages", async () => {
    const first = await list("?limit=2&page=1&order=asc");
    const second = await list("?limit=2&page=2&order=asc");
    const third = await list("?limit=2&page=3&order=asc");
    const beyond = await list("?limit=2&page=4&order=asc");
    expect(first.body.data.map((a) => a.name)).toEqual(["delta", "Bravo"]);
    expect(second.body.data.map((a) => a.name)).toEqual(["alpha", "Charlie"]);
    expect(third.body.data.map((a) => a.name)).toEqual(["echo"]);
    expect(first.body.pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3, hasMore: true });
    expect(third.body.pagination.hasMore).toBe(false);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination).toEqual({ page: 4, limit: 2, total: 5, totalPages: 3, hasMore: false });
  });

  it("sorts by name in code-point order", async () => {
    const res = await list("?sortBy=name&order=asc");
    expect(res.body.data.map((a) => a.name)).toEqual(["Bravo", "Charlie", "alpha", "delta", "echo"]);
  });

  it("sorts by status, ties broken by id", async () => {
    const res = await list("?sortBy=status&order=asc");
    const statuses = res.body.data.map((a) => a.status);
    expect(statuses).toEqual(["active", "active", "active", "inactive", "inactive"]);
    const actives = res.body.data.filter((a) => a.status === "active").map((a) => a.id);
    expect(actives).toEqual([...actives].sort());
  });

  it("filters by status", async () => {
    const res = await list("?status=inactive");
    expect(res.body.data.map((a) => a.name).sort()).toEqual(["Bravo", "Charlie"]);
    expect(res.body.pagination.total).toBe(2);
    expect((await list("?status=error")).body.data).toEqual([]);
  });

  it("shows only the caller's account", async () => {
    const other = await h.tenant();
    const res = await list("", other.key);
    expect(res.body.data).toEqual([]);
    expect(res.body.pagination.total).toBe(0);
  });
});

describe("GET /v1/agents errors", () => {
  it.each([
    ["?page=0", "page"],
    ["?page=-1", "page"],
    ["?page=1.5", "page"],
    ["?limit=0", "limit"],
    ["?limit=101", "limit"],
    ["?limit=abc", "limit"],
    ["?status=deleted", "status"],
    ["?sortBy=updatedAt", "sortBy"],
    ["?order=up", "order"],
    ["?page=1&page=2", "page"],
    ["?colour=blue", "colour"],
  ])("%s is 400 naming %s", async (query, field) => {
    const res = await h.request<ErrorBody>("GET", `/v1/agents${query}`, { key: tenant.key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("INVALID_REQUEST");
    expect(res.body.error.details?.[0]?.field).toBe(field);
  });
});

describe("GET /v1/agents/{id}", () => {
  it("returns the full record", async () => {
    const target = created[0]!;
    const res = await h.request<{ success: boolean; data: Record<string, unknown> }>(
      "GET",
      `/v1/agents/${target.id}`,
      {
        key: tenant.key,
      },
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(
      [
        "apiEndpoint",
        "bio",
        "clients",
        "createdAt",
        "goals",
        "id",
        "knowledge",
        "model",
        "modelProvider",
        "name",
        "personality",
        "plugins",
        "settings",
        "status",
        "statusReason",
        "updatedAt",
      ].sort(),
    );
    expect(res.body.data.id).toBe(target.id);
  });

  it("answers 404 AGENT_NOT_FOUND for a missing or malformed id", async () => {
    for (const id of ["agt_01JAAAAAAAAAAAAAAAAAAAAAAA", "nope", "agt_"]) {
      const res = await h.request<ErrorBody>("GET", `/v1/agents/${id}`, { key: tenant.key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("AGENT_NOT_FOUND");
    }
  });

  it("answers another account exactly as a missing agent", async () => {
    const other = await h.tenant();
    const theirs = await h.request<ErrorBody>("GET", `/v1/agents/${created[0]!.id}`, { key: other.key });
    const missing = await h.request<ErrorBody>("GET", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", {
      key: other.key,
    });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe(missing.body.error.code);
    expect(theirs.body.error.message.replace(created[0]!.id, "ID")).toBe(
      missing.body.error.message.replace("agt_01JAAAAAAAAAAAAAAAAAAAAAAA", "ID"),
    );
  });

  it("needs agents:read", async () => {
    const writeOnly = await tenant.keyWith(["agents:write"]);
    const res = await h.request<ErrorBody>("GET", `/v1/agents/${created[0]!.id}`, { key: writeOnly.key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
    const listed = await h.request<ErrorBody>("GET", "/v1/agents", { key: writeOnly.key });
    expect(listed.status).toBe(403);
  });
});
