import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

type AgentJson = Record<string, unknown> & { id: string; updatedAt: string; createdAt: string };

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  // The agents name hosted providers, which must be configured to be accepted; nothing here calls them.
  h = await startHarness({ OPENAI_API_KEY: "sk-unused", ANTHROPIC_API_KEY: "sk-unused" });
  tenant = await h.tenant();
});
afterAll(() => h.close());

async function newAgent(body: Record<string, unknown> = { name: "Agent" }): Promise<AgentJson> {
  const res = await h.request<{ data: AgentJson }>("POST", "/v1/agents", { key: tenant.key, body });
  expect(res.status).toBe(201);
  return res.body.data;
}

const patch = (id: string, body: unknown, key = tenant.key) =>
  h.request<{ success: boolean; data: AgentJson } & ErrorBody>("PATCH", `/v1/agents/${id}`, { key, body });

describe("PATCH /v1/agents/{id} happy", () => {
  it("changes only the supplied fields", async () => {
    const agent = await newAgent({
      name: "Before",
      bio: ["one"],
      goals: ["g"],
      modelProvider: "anthropic",
      model: "m",
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const res = await patch(agent.id, { name: "After", bio: ["two", "three"] });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: "After",
      bio: ["two", "three"],
      goals: ["g"],
      modelProvider: "anthropic",
      model: "m",
      createdAt: agent.createdAt,
    });
    expect(Date.parse(res.body.data.updatedAt)).toBeGreaterThan(Date.parse(agent.updatedAt));
    const read = await h.request<{ data: AgentJson }>("GET", `/v1/agents/${agent.id}`, { key: tenant.key });
    expect(read.body.data).toEqual(res.body.data);
  });

  it("resets modelProvider and model with null", async () => {
    const agent = await newAgent({ name: "A", modelProvider: "openai", model: "gpt-4o" });
    const res = await patch(agent.id, { modelProvider: null, model: null });
    expect(res.body.data).toMatchObject({ modelProvider: null, model: null });
  });

  it("sets inactive and active, keeping data, with other fields in the same request", async () => {
    const agent = await newAgent({ name: "A", knowledge: ["k"] });
    const off = await patch(agent.id, { status: "inactive", name: "Sleeping" });
    expect(off.body.data).toMatchObject({ status: "inactive", name: "Sleeping", knowledge: ["k"] });
    const on = await patch(agent.id, { status: "active" });
    expect(on.body.data).toMatchObject({ status: "active", name: "Sleeping" });
  });

  it("replaces objects and arrays whole", async () => {
    const agent = await newAgent({ name: "A", settings: { a: 1, b: 2 }, clients: ["discord"] });
    const res = await patch(agent.id, { settings: { c: 3 }, clients: [] });
    expect(res.body.data).toMatchObject({ settings: { c: 3 }, clients: [] });
  });
});

describe("PATCH /v1/agents/{id} errors", () => {
  it("refuses status error with a reason", async () => {
    const agent = await newAgent();
    const res = await patch(agent.id, { status: "error" });
    expect(res.status).toBe(400);
    expect(res.body.error.details?.[0]).toEqual({
      field: "status",
      issue: expect.stringContaining("set by the service"),
    });
  });

  it("refuses unknown fields, service fields and wrong types", async () => {
    const agent = await newAgent();
    for (const body of [
      { colour: "x" },
      { id: "agt_x" },
      { createdAt: "now" },
      { name: 1 },
      { bio: "x" },
      { status: "paused" },
    ]) {
      const res = await patch(agent.id, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("INVALID_REQUEST");
    }
  });

  it("answers 404 for a missing agent", async () => {
    const res = await patch("agt_01JAAAAAAAAAAAAAAAAAAAAAAA", { name: "x" });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("AGENT_NOT_FOUND");
  });
});

describe("PATCH /v1/agents/{id} security", () => {
  it("cannot touch another account's agent and leaves it unchanged", async () => {
    const agent = await newAgent({ name: "Mine" });
    const other = await h.tenant();
    const res = await patch(agent.id, { name: "Theirs" }, other.key);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("AGENT_NOT_FOUND");
    const read = await h.request<{ data: AgentJson }>("GET", `/v1/agents/${agent.id}`, { key: tenant.key });
    expect(read.body.data.name).toBe("Mine");
  });

  it("needs agents:write", async () => {
    const agent = await newAgent();
    const readOnly = await tenant.keyWith(["agents:read"]);
    const res = await patch(agent.id, { name: "x" }, readOnly.key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
  });
});

describe("DELETE /v1/agents/{id}", () => {
  it("deletes permanently", async () => {
    const agent = await newAgent();
    const res = await h.request<{ success: boolean; data: unknown }>("DELETE", `/v1/agents/${agent.id}`, {
      key: tenant.key,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { id: agent.id, deleted: true } });
    const read = await h.request<ErrorBody>("GET", `/v1/agents/${agent.id}`, { key: tenant.key });
    expect(read.status).toBe(404);
    const again = await h.request<ErrorBody>("DELETE", `/v1/agents/${agent.id}`, { key: tenant.key });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("AGENT_NOT_FOUND");
    const listed = await h.request<{ data: AgentJson[] }>("GET", "/v1/agents?limit=100", { key: tenant.key });
    expect(listed.body.data.map((a) => a.id)).not.toContain(agent.id);
  });

  it("frees quota", async () => {
    const small = await h.tenant({ maxAgents: 1 });
    const first = await h.request<{ data: AgentJson }>("POST", "/v1/agents", {
      key: small.key,
      body: { name: "a" },
    });
    expect((await h.request("POST", "/v1/agents", { key: small.key, body: { name: "b" } })).status).toBe(403);
    await h.request("DELETE", `/v1/agents/${first.body.data.id}`, { key: small.key });
    expect((await h.request("POST", "/v1/agents", { key: small.key, body: { name: "b" } })).status).toBe(201);
  });

  it("needs agents:delete and refuses another account", async () => {
    const agent = await newAgent();
    const noDelete = await tenant.keyWith(["agents:read", "agents:write"]);
    const forbidden = await h.request<ErrorBody>("DELETE", `/v1/agents/${agent.id}`, { key: noDelete.key });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("FORBIDDEN");
    const other = await h.tenant();
    const hidden = await h.request<ErrorBody>("DELETE", `/v1/agents/${agent.id}`, { key: other.key });
    expect(hidden.status).toBe(404);
    expect((await h.request("GET", `/v1/agents/${agent.id}`, { key: tenant.key })).status).toBe(200);
  });
});
