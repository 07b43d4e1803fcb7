import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

type AgentJson = Record<string, unknown> & { id: string; updatedAt: string };

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await h.tenant();
});
afterAll(() => h.close());

async function newAgent(name = "Agent"): Promise<AgentJson> {
  const res = await h.request<{ data: AgentJson }>("POST", "/v1/agents", { key: tenant.key, body: { name } });
  expect(res.status).toBe(201);
  return res.body.data;
}

const get = (path: string, headers: Record<string, string> = {}, key = tenant.key) =>
  h.request<{ data: AgentJson } & ErrorBody>("GET", path, { key, headers });

const patch = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  h.request<{ data: AgentJson } & ErrorBody>("PATCH", `/v1/agents/${id}`, { key: tenant.key, body, headers });

const remove = (id: string, headers: Record<string, string> = {}) =>
  h.request<ErrorBody>("DELETE", `/v1/agents/${id}`, { key: tenant.key, headers });

describe("GET /v1/agents/{id} with If-None-Match", () => {
  it("answers the agent's version as a weak ETag, and 304 without a body while it is current", async () => {
    const agent = await newAgent();
    const read = await get(`/v1/agents/${agent.id}`);
    expect(read.status).toBe(200);
    const etag = read.headers.get("etag");
    expect(etag).toBe(`W/"${agent.updatedAt}"`);

    for (const tag of [etag!, `"${agent.updatedAt}"`, `W/"other", ${etag}`, "*"]) {
      const unchanged = await get(`/v1/agents/${agent.id}`, { "if-none-match": tag });
      expect(unchanged.status).toBe(304);
      expect(unchanged.body).toEqual({});
      expect(unchanged.headers.get("etag")).toBe(etag);
      expect(unchanged.headers.get("x-request-id")).toBeTruthy();
    }

    const updated = await patch(agent.id, { name: "Renamed" });
    const changed = await get(`/v1/agents/${agent.id}`, { "if-none-match": etag! });
    expect(changed.status).toBe(200);
    expect(changed.body.data.name).toBe("Renamed");
    expect(changed.headers.get("etag")).toBe(`W/"${updated.body.data.updatedAt}"`);
    expect(changed.headers.get("etag")).not.toBe(etag);
  });

  it("answers 404 for another account's agent, whatever the tag", async () => {
    const agent = await newAgent();
    const other = await h.tenant();
    const res = await get(`/v1/agents/${agent.id}`, { "if-none-match": "*" }, other.key);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("AGENT_NOT_FOUND");
  });
});

describe("GET /v1/agents with If-None-Match", () => {
  it("gives a page an ETag that changes when one of its agents, or the page's agents, change", async () => {
    const own = await h.tenant();
    const list = (headers: Record<string, string> = {}) => get("/v1/agents?limit=2", headers, own.key);
    const created = async () =>
      (await h.request<{ data: AgentJson }>("POST", "/v1/agents", { key: own.key, body: { name: "p" } })).body
        .data;
    const first = await created();
    await created();

    const page = await list();
    expect(page.status).toBe(200);
    const etag = page.headers.get("etag")!;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect((await list({ "if-none-match": etag })).status).toBe(304);

    // Changed: an agent of the page.
    await h.request("PATCH", `/v1/agents/${first.id}`, { key: own.key, body: { name: "q" } });
    const afterChange = await list({ "if-none-match": etag });
    expect(afterChange.status).toBe(200);
    const second = afterChange.headers.get("etag")!;
    expect(second).not.toBe(etag);

    // Changed: a new agent moves the page (newest first) and the total.
    await created();
    const afterCreate = await list({ "if-none-match": second });
    expect(afterCreate.status).toBe(200);
    expect(afterCreate.headers.get("etag")).not.toBe(second);
  });
});

describe("PATCH and DELETE /v1/agents/{id} with If-Match", () => {
  it("updates while the ETag is current, answering the new one, and refuses a stale one with 412", async () => {
    const agent = await newAgent("v1");
    const etag = `W/"${agent.updatedAt}"`;
    const first = await patch(agent.id, { name: "v2" }, { "if-match": etag });
    expect(first.status).toBe(200);
    expect(first.headers.get("etag")).toBe(`W/"${first.body.data.updatedAt}"`);

    const stale = await patch(agent.id, { name: "v3" }, { "if-match": etag });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe("PRECONDITION_FAILED");
    expect(stale.body.error.message).toContain(`GET /v1/agents/${agent.id}`);
    expect((await get(`/v1/agents/${agent.id}`)).body.data.name).toBe("v2");

    // The quoted value without W/ names the same version; * is any.
    const strong = await patch(agent.id, { name: "v3" }, { "if-match": `"${first.body.data.updatedAt}"` });
    expect(strong.status).toBe(200);
    expect((await patch(agent.id, { name: "v4" }, { "if-match": "*" })).status).toBe(200);
  });

  it("refuses a tag that is no version with 412 and a list of tags with 400, changing nothing", async () => {
    const agent = await newAgent("kept");
    const garbage = await patch(agent.id, { name: "x" }, { "if-match": '"not-a-version"' });
    expect(garbage.status).toBe(412);
    expect(garbage.body.error.code).toBe("PRECONDITION_FAILED");
    const two = await patch(agent.id, { name: "x" }, { "if-match": `W/"${agent.updatedAt}", W/"b"` });
    expect(two.status).toBe(400);
    expect(two.body.error.code).toBe("INVALID_REQUEST");
    expect(two.body.error.message).toContain("If-Match");
    expect((await get(`/v1/agents/${agent.id}`)).body.data).toEqual(agent);
  });

  it("lets exactly one of concurrent PATCHes with the same If-Match through", async () => {
    const agent = await newAgent("base");
    const etag = `W/"${agent.updatedAt}"`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => patch(agent.id, { name: `writer ${i}` }, { "if-match": etag })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = answers.find((answer) => answer.status === 200)!;
    expect((await get(`/v1/agents/${agent.id}`)).body.data).toEqual(winner.body.data);
  });

  it("deletes only while the ETag is current", async () => {
    const agent = await newAgent();
    const updated = await patch(agent.id, { name: "changed" });
    const stale = await remove(agent.id, { "if-match": `W/"${agent.updatedAt}"` });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe("PRECONDITION_FAILED");
    expect((await get(`/v1/agents/${agent.id}`)).status).toBe(200);

    const done = await remove(agent.id, { "if-match": `W/"${updated.body.data.updatedAt}"` });
    expect(done.status).toBe(200);
    expect((await get(`/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await remove(agent.id, { "if-match": `W/"${updated.body.data.updatedAt}"` })).status).toBe(404);
  });
});
