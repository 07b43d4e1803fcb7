import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * docs/api/connectors.md, "Clients", and docs/api/agents.md, "Warnings": a write whose `clients` names a platform
 * no connector runs, or a run platform whose agent secrets are missing, is kept with a warning per item saying
 * what happens and what to do; create, PATCH and character import (and its dry run) alike.
 */

type Warning = { field: string; issue: string };
type Written = { data: { id: string; clients: unknown[] }; warnings: Warning[] };

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  h = await startHarness({ LOCAL_MODEL_PATH: "/nonexistent/model.gguf" });
  tenant = await h.tenant();
});
afterAll(() => h.close());

const NOT_RUN = (type: string) =>
  `"${type}" is kept but not run by this server: only telegram, discord and slack are; it is listed as inert and receives no messages. Remove it, or name one of those platforms`;
const NO_SECRET = (type: string, name: string) =>
  `${type} is kept but not connected until the agent has its secrets: set the agent secret ${name} (PUT /v1/agents/{agentId}/secrets/${name}) to connect it`;
const NO_SLACK_SECRETS =
  "slack is kept but not connected until the agent has its secrets: set the agent secrets SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (PUT /v1/agents/{agentId}/secrets/{name}, once each) to connect it";

async function create(body: Record<string, unknown>) {
  const res = await h.request<Written>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Clients", ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function patch(id: string, body: Record<string, unknown>) {
  const res = await h.request<Written>("PATCH", `/v1/agents/${id}`, { key: tenant.key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function putSecret(id: string, name: string) {
  const res = await h.request("PUT", `/v1/agents/${id}/secrets/${name}`, {
    key: tenant.key,
    body: { value: `value-of-${name}` },
  });
  expect(res.status).toBe(200);
}

describe("clients warnings on create", () => {
  it("warns of each platform no connector runs and of each run platform, which a new agent has no secrets for", async () => {
    const clients = [
      "twitter",
      { type: "farcaster", handle: "@eliza" },
      "telegram",
      { type: "discord" },
      "slack",
    ];
    const { data, warnings } = await create({ clients });
    expect(data.clients).toEqual(clients);
    expect(warnings).toEqual([
      { field: "clients[0]", issue: NOT_RUN("twitter") },
      { field: "clients[1]", issue: NOT_RUN("farcaster") },
      { field: "clients[2]", issue: NO_SECRET("telegram", "TELEGRAM_BOT_TOKEN") },
      { field: "clients[3]", issue: NO_SECRET("discord", "DISCORD_BOT_TOKEN") },
      { field: "clients[4]", issue: NO_SLACK_SECRETS },
    ]);
  });

  it("has no warnings for an agent without clients", async () => {
    expect((await create({})).warnings).toEqual([]);
    expect((await create({ clients: [] })).warnings).toEqual([]);
  });
});

describe("clients warnings on PATCH", () => {
  it("reads the agent's secrets: none for run platforms holding theirs, only the missing ones otherwise", async () => {
    // Inactive, so that no connector tries the made-up tokens.
    const { data } = await create({ clients: ["telegram"] });
    expect((await patch(data.id, { status: "inactive" })).warnings).toEqual([
      { field: "clients[0]", issue: NO_SECRET("telegram", "TELEGRAM_BOT_TOKEN") },
    ]);

    await putSecret(data.id, "TELEGRAM_BOT_TOKEN");
    await putSecret(data.id, "SLACK_BOT_TOKEN");
    expect(
      (await patch(data.id, { clients: ["telegram", { type: "slack", respondIn: "all" }] })).warnings,
    ).toEqual([{ field: "clients[1]", issue: NO_SECRET("slack", "SLACK_SIGNING_SECRET") }]);

    await putSecret(data.id, "SLACK_SIGNING_SECRET");
    await putSecret(data.id, "DISCORD_BOT_TOKEN");
    expect(
      (await patch(data.id, { clients: ["telegram", "discord", { type: "slack", respondIn: "all" }] }))
        .warnings,
    ).toEqual([]);
  });

  it("warns of the stored clients on a PATCH that does not send them", async () => {
    const { data } = await create({ clients: ["discord", "twitter"] });
    await patch(data.id, { status: "inactive" });
    await putSecret(data.id, "DISCORD_BOT_TOKEN");
    expect((await patch(data.id, { name: "Renamed" })).warnings).toEqual([
      { field: "clients[1]", issue: NOT_RUN("twitter") },
    ]);
    expect((await patch(data.id, { clients: ["discord"] })).warnings).toEqual([]);
  });
});

describe("clients warnings for a key that may write agents but not manage secrets", () => {
  it("are the same: the secrets' names are read for the warning, not by the caller", async () => {
    const { data } = await create({ clients: ["telegram", "discord"] });
    await patch(data.id, { status: "inactive" });
    await putSecret(data.id, "TELEGRAM_BOT_TOKEN");
    const { key } = await tenant.keyWith(["agents:write"]);
    const res = await h.request<Written>("PATCH", `/v1/agents/${data.id}`, { key, body: { name: "Writer" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.warnings).toEqual([
      { field: "clients[1]", issue: NO_SECRET("discord", "DISCORD_BOT_TOKEN") },
    ]);
    const secrets = await h.request("GET", `/v1/agents/${data.id}/secrets`, { key });
    expect(secrets.status).toBe(403);
  });
});

describe("clients warnings on character import", () => {
  const importFile = (body: unknown, query = "") =>
    h.request<Written>("POST", `/v1/agents/import${query}`, { key: tenant.key, body });

  it.each([
    ["", 201],
    ["?dryRun=true", 200],
  ] as const)("names the file's clients by their path (%s)", async (query, status) => {
    const res = await importFile({ name: "Eliza", clients: ["discord", "twitter"] }, query);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.data.clients).toEqual(["discord", "twitter"]);
    expect(res.body.warnings).toEqual([
      { field: "clients[0]", issue: NO_SECRET("discord", "DISCORD_BOT_TOKEN") },
      { field: "clients[1]", issue: NOT_RUN("twitter") },
    ]);
  });

  it("names settings.agentry.clients when the clients come from there", async () => {
    const res = await importFile({
      name: "Eliza",
      settings: { agentry: { clients: [{ type: "farcaster" }] } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.warnings).toEqual([
      { field: "settings.agentry.clients[0]", issue: NOT_RUN("farcaster") },
    ]);
  });
});
