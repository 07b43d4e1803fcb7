import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publicSettings } from "@agentry/core";
import { type Agent, AgentStatus, AgentView } from "@agentry/proto";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampDate, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, PUBLIC_BASE_URL, startHarness, type Tenant } from "./harness.js";

/*
 * An agent read is written from the registry's text of its public record (AgentView PUBLIC). These tests hold it
 * to the bytes the gateway wrote before, when it presented the Struct form itself: `presentedBefore` is that
 * presentation as it was, applied to what a registry answers in the Struct form.
 */

const STATUS_NAMES: Record<AgentStatus, string> = {
  [AgentStatus.UNSPECIFIED]: "active",
  [AgentStatus.ACTIVE]: "active",
  [AgentStatus.INACTIVE]: "inactive",
  [AgentStatus.ERROR]: "error",
};

function jsonArray(value: Value | undefined): JsonValue[] {
  if (!value) return [];
  const json = toJson(ValueSchema, value);
  return Array.isArray(json) ? json : [];
}

function isoTime(value: Parameters<typeof timestampDate>[0] | undefined): string {
  return value ? timestampDate(value).toISOString() : new Date(0).toISOString();
}

/** The public JSON of an agent in the Struct form, as the gateway presented it before. */
function presentedBefore(agent: Agent): Record<string, unknown> {
  const spec = agent.spec;
  return {
    id: agent.id,
    name: spec?.name ?? "",
    bio: [...(spec?.bio ?? [])],
    personality: spec?.personality ?? {},
    knowledge: [...(spec?.knowledge ?? [])],
    goals: [...(spec?.goals ?? [])],
    clients: jsonArray(spec?.clients),
    settings: publicSettings((spec?.settings ?? {}) as JsonObject),
    modelProvider: spec?.modelProvider ?? null,
    model: spec?.model ?? null,
    plugins: jsonArray(spec?.plugins),
    status: STATUS_NAMES[agent.status],
    statusReason: agent.statusReason
      ? {
          code: agent.statusReason.code,
          message: agent.statusReason.message,
          at: isoTime(agent.statusReason.time),
        }
      : null,
    createdAt: isoTime(agent.createTime),
    updatedAt: isoTime(agent.updateTime),
    apiEndpoint: `${PUBLIC_BASE_URL}/v1/agents/${agent.id}/messages`,
  };
}

/** Fields that make the encoding work: nesting, numbers, keys JavaScript orders itself, escapes, non-ASCII. */
const RICH = {
  name: 'Ada \u2028 "quoted" \u00e9\ud83d\ude00',
  bio: ["Mathematician", "line\nbreak"],
  personality: { tone: "precise", "2": ["b"], "10": { deep: [1, 2.5, -0, 1e21, null, true] }, "": "" },
  knowledge: ["engines"],
  goals: ["compute"],
  clients: ["matrix", { type: "irc", respondIn: "all" }],
  settings: { temperature: 0.25, memory: false, secrets: { OPENAI_API_KEY: "sk-never-shown" } },
  modelProvider: "openai",
  model: "gpt-4o-mini",
  plugins: [{ name: "calculator", enabled: false, config: { precision: 3 } }, "time"],
};

/** The routes' answers against the presentation of before, in the deployment `h` runs. */
function readsAsBefore(setup: () => { h: Harness; tenant: Tenant }) {
  async function raw(
    path: string,
    key: string,
  ): Promise<{ text: string; etag: string | null; type: string }> {
    const { h } = setup();
    const response = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    return {
      text: await response.text(),
      etag: response.headers.get("etag"),
      type: response.headers.get("content-type") ?? "",
    };
  }

  /** The agent as a registry answers it in the Struct form (a read without a view). */
  async function structForm(accountId: string, id: string): Promise<Agent> {
    const { agent } = await setup().h.gateway.context.agents.getAgent({ accountId, id });
    expect(agent?.publicJson).toBe("");
    return agent!;
  }

  it("answers GET /v1/agents/{id} with the bytes and ETag of before", async () => {
    const { h, tenant } = setup();
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: RICH,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.id;
    // A second version, and a status reason, so that the text follows the agent's changes.
    await h.request("PATCH", `/v1/agents/${id}`, { key: tenant.key, body: { goals: ["teach"] } });
    const read = await raw(`/v1/agents/${id}`, tenant.key);
    const before = presentedBefore(await structForm(tenant.accountId, id));
    expect(read.text).toBe(JSON.stringify({ success: true, data: before }));
    expect(read.type).toBe("application/json; charset=utf-8");
    expect(read.etag).toBe(`W/"${before.updatedAt}"`);
    expect(read.text).not.toContain("sk-never-shown");
    expect(JSON.parse(read.text).data.goals).toEqual(["teach"]);
  });

  it("answers GET /v1/agents with the bytes and ETag of before", async () => {
    const { h, tenant } = setup();
    for (const name of ["one", "two", "three"]) {
      await h.request("POST", "/v1/agents", { key: tenant.key, body: { ...RICH, name } });
    }
    const page = await raw("/v1/agents?limit=2&page=1", tenant.key);
    const parsed = JSON.parse(page.text) as { data: { id: string }[]; pagination: JsonValue };
    const items = await Promise.all(parsed.data.map((agent) => structForm(tenant.accountId, agent.id)));
    expect(page.text).toBe(
      JSON.stringify({ success: true, data: items.map(presentedBefore), pagination: parsed.pagination }),
    );
    expect(page.type).toBe("application/json; charset=utf-8");
    const again = await fetch(`${h.url}/v1/agents?limit=2&page=1`, {
      headers: { authorization: `Bearer ${tenant.key}`, "if-none-match": page.etag! },
    });
    expect(again.status).toBe(304);
  });
}

describe("agent reads as text, all-in-one", () => {
  let h: Harness;
  let tenant: Tenant;
  beforeAll(async () => {
    h = await startHarness();
    tenant = await h.tenant();
  });
  afterAll(() => h.close());

  readsAsBefore(() => ({ h, tenant }));

  it("answers the same bytes when a registry of the earlier release answers, which ignores the view", async () => {
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: RICH,
    });
    const id = created.body.data.id;
    const path = `/v1/agents/${id}`;
    const current = [await raw(path), await raw("/v1/agents?limit=5")];
    // An earlier registry knows no view: it answers every read in the Struct form, without public_json.
    const agents = h.gateway.context.agents;
    const { getAgent, listAgents } = agents;
    const asked: AgentView[] = [];
    agents.getAgent = (request, options) => {
      asked.push(request.view ?? AgentView.UNSPECIFIED);
      return getAgent({ ...request, view: AgentView.UNSPECIFIED }, options);
    };
    agents.listAgents = (request, options) => {
      asked.push(request.view ?? AgentView.UNSPECIFIED);
      return listAgents({ ...request, view: AgentView.UNSPECIFIED }, options);
    };
    try {
      expect([await raw(path), await raw("/v1/agents?limit=5")]).toEqual(current);
      expect(asked).toEqual([AgentView.PUBLIC, AgentView.PUBLIC]);
    } finally {
      Object.assign(agents, { getAgent, listAgents });
    }
  });

  async function raw(path: string) {
    const response = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${tenant.key}` } });
    return { status: response.status, etag: response.headers.get("etag"), text: await response.text() };
  }
});

describe("agent reads as text, gateway and registry in separate processes (HTTP/2)", () => {
  let dataDir: string;
  let registry: DeployableProcess;
  let h: Harness;
  let tenant: Tenant;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agentry-split-json-"));
    registry = await startDeployable("services/registry", {
      DATA_DIR: dataDir,
      REGISTRY_PORT: "0",
      SECRETS_KEY: Buffer.alloc(32, 1).toString("base64"),
    });
    h = await startHarness({ REGISTRY_URL: registry.url, RPC_TIMEOUT_MS: "5000" });
    tenant = await h.tenant();
  });
  afterAll(async () => {
    await h?.close();
    await registry?.stop("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  });

  readsAsBefore(() => ({ h, tenant }));
});
