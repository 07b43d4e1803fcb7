import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

type AgentJson = { id: string; modelProvider: string | null; model: string | null };
type Warning = { field: string; issue: string };
type Json = Record<string, unknown>;

/** The model the local provider runs when LOCAL_MODEL_PATH names this file; never loaded here. */
const LOCAL_MODEL = "tiny-chat.Q8_0";

async function create(h: Harness, tenant: Tenant, body: Json) {
  return h.request<{ data: AgentJson; warnings: Warning[] } & ErrorBody>("POST", "/v1/agents", {
    key: tenant.key,
    body,
  });
}

async function patch(h: Harness, tenant: Tenant, id: string, body: Json) {
  return h.request<{ data: AgentJson; warnings: Warning[] } & ErrorBody>("PATCH", `/v1/agents/${id}`, {
    key: tenant.key,
    body,
  });
}

async function created(h: Harness, tenant: Tenant, body: Json): Promise<AgentJson> {
  const res = await create(h, tenant, { name: "A", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

function expectRefused(res: { status: number; body: ErrorBody }, field: string, issue: RegExp): void {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("INVALID_REQUEST");
  expect(res.body.error.details).toEqual([{ field, issue: expect.stringMatching(issue) }]);
}

describe("a deployment whose default provider is local", () => {
  let h: Harness;
  let tenant: Tenant;
  beforeAll(async () => {
    h = await startHarness({
      OPENAI_API_KEY: "sk-unused",
      DEFAULT_MODEL_PROVIDER: "local",
      LOCAL_MODEL_PATH: `/models/${LOCAL_MODEL}.gguf`,
    });
    tenant = await h.tenant();
  });
  afterAll(() => h.close());

  it("accepts the local model, named or by default, and any model of a hosted provider", async () => {
    expect(await created(h, tenant, {})).toMatchObject({ modelProvider: null, model: null });
    expect(await created(h, tenant, { model: LOCAL_MODEL })).toMatchObject({ model: LOCAL_MODEL });
    expect(await created(h, tenant, { modelProvider: "local", model: ` ${LOCAL_MODEL}\n` })).toMatchObject({
      modelProvider: "local",
      model: LOCAL_MODEL,
    });
    expect(await created(h, tenant, { modelProvider: "openai", model: "whatever-comes-next" })).toMatchObject(
      {
        modelProvider: "openai",
      },
    );
  });

  it("refuses another model for local, named or by default, saying which it serves", async () => {
    expectRefused(
      await create(h, tenant, { name: "A", modelProvider: "local", model: "gpt-4o" }),
      "model",
      new RegExp(`^must be one of the models local serves: ${LOCAL_MODEL.replace(".", "\\.")}$`),
    );
    expectRefused(
      await create(h, tenant, { name: "A", model: "gpt-4o" }),
      "model",
      /the default provider, local, serves: tiny-chat/,
    );
    // The exact name: the provider's own leniency about case is not the contract.
    expectRefused(
      await create(h, tenant, { name: "A", model: LOCAL_MODEL.toUpperCase() }),
      "model",
      /serves/,
    );
  });

  it("takes a provider it has no configuration for, with a warning naming the variable to set", async () => {
    const res = await create(h, tenant, { name: "A", modelProvider: "anthropic", model: "claude-any" });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ modelProvider: "anthropic", model: "claude-any" });
    expect(res.body.warnings).toEqual([
      {
        field: "modelProvider",
        issue: expect.stringMatching(/^anthropic is not configured .*ANTHROPIC_API_KEY/),
      },
    ]);
    const configured = await create(h, tenant, { name: "A", modelProvider: "openai" });
    expect(configured.body.warnings).toEqual([]);

    // An update warns while the agent's provider is one with no configuration, whatever the PATCH sends.
    const renamed = await patch(h, tenant, res.body.data.id, { name: "B" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.warnings).toEqual([
      { field: "modelProvider", issue: expect.stringMatching(/ANTHROPIC_API_KEY/) },
    ]);
    const moved = await patch(h, tenant, res.body.data.id, { modelProvider: "openai" });
    expect(moved.body.warnings).toEqual([]);
  });

  it("refuses any other provider name, naming the accepted ones", async () => {
    expectRefused(
      await create(h, tenant, { name: "A", modelProvider: "llama_local" }),
      "modelProvider",
      /^must be one of: openai, anthropic, local$/,
    );
  });

  it("checks a PATCH against the half of the pair it does not send", async () => {
    const local = await created(h, tenant, { modelProvider: "local" });
    expectRefused(
      await patch(h, tenant, local.id, { model: "gpt-4o" }),
      "model",
      /local, the agent's provider,/,
    );
    expect((await patch(h, tenant, local.id, { model: LOCAL_MODEL })).status).toBe(200);
    expect((await patch(h, tenant, local.id, { model: null })).status).toBe(200);

    const hosted = await created(h, tenant, { modelProvider: "openai", model: "gpt-4o" });
    expectRefused(
      await patch(h, tenant, hosted.id, { modelProvider: "local" }),
      "model",
      /^is "gpt-4o", which local does not serve .*send a model with modelProvider, or null for tiny-chat/,
    );
    expectRefused(
      await patch(h, tenant, hosted.id, { modelProvider: null }),
      "model",
      /the default provider, local/,
    );
    const moved = await patch(h, tenant, hosted.id, { modelProvider: "local", model: null });
    expect(moved.body.data).toMatchObject({ modelProvider: "local", model: null });
    expect((await patch(h, tenant, hosted.id, { modelProvider: "openai", model: "o3" })).status).toBe(200);
    expect((await patch(h, tenant, hosted.id, { name: "Renamed" })).status).toBe(200);
  });

  it("answers 404 before checking the model of an agent that does not exist", async () => {
    const res = await patch(h, tenant, "agt_01JAAAAAAAAAAAAAAAAAAAAAAA", { model: "gpt-4o" });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("AGENT_NOT_FOUND");
  });

  it("says so in the document it serves, which refuses what the gateway refuses", async () => {
    const doc = (await (await fetch(`${h.url}/v1/openapi.json`)).json()) as {
      components: { schemas: Record<string, Json> };
    };
    const createSchema = doc.components.schemas.CreateAgentRequest!;
    const properties = createSchema.properties as Record<string, Json>;
    expect(properties.modelProvider!.enum).toEqual(["openai", "anthropic", "local"]);
    expect(properties.modelProvider!.description).toMatch(
      /This deployment is configured for `openai`, `local`; its default is `local`\./,
    );
    expect(properties.model!.description).toMatch(/Here `local` serves only `tiny-chat.Q8_0`\./);
    const pattern = (((createSchema.allOf as Json[])[0]!.then as Json).properties as Record<string, Json>)
      .model!.pattern as string;
    expect(new RegExp(pattern, "u").test(` ${LOCAL_MODEL} `)).toBe(true);
    expect(new RegExp(pattern, "u").test(`${LOCAL_MODEL}x`)).toBe(false);
    expect((createSchema.allOf as Json[]).map((rule) => rule.if)).toEqual([
      { required: ["modelProvider"], properties: { modelProvider: { const: "local" } } },
      { not: { required: ["modelProvider"] } },
    ]);
    const update = doc.components.schemas.UpdateAgentRequest!;
    expect((update.allOf as Json[])[1]!.if).toEqual({
      required: ["modelProvider"],
      properties: { modelProvider: { const: null } },
    });
  });
});

describe("a deployment that serves no local model (LOCAL_ENABLED=false)", () => {
  let h: Harness;
  let tenant: Tenant;
  beforeAll(async () => {
    h = await startHarness({ OPENAI_API_KEY: "sk-unused", LOCAL_ENABLED: "false" });
    tenant = await h.tenant();
  });
  afterAll(() => h.close());

  it("takes local with a warning naming what enables it, and its document says it is not configured", async () => {
    const local = await create(h, tenant, { name: "A", modelProvider: "local" });
    expect(local.status).toBe(201);
    expect(local.body.warnings).toEqual([
      {
        field: "modelProvider",
        issue: expect.stringMatching(/^local is not configured .*LOCAL_ENABLED=true/),
      },
    ]);
    expect(await created(h, tenant, { model: "SmolLM2-135M-Instruct" })).toMatchObject({
      modelProvider: null,
    });
    const doc = (await (await fetch(`${h.url}/v1/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, Json>; allOf?: unknown }> };
    };
    const createSchema = doc.components.schemas.CreateAgentRequest!;
    expect(createSchema.properties.modelProvider!.enum).toEqual(["openai", "anthropic", "local"]);
    expect(createSchema.properties.modelProvider!.description).toMatch(/configured for `openai`;/);
    expect(createSchema.allOf).toBeUndefined();
  });
});

describe("a conversation service in another process", () => {
  let dataDir: string;
  let conversation: ServiceProcess;
  let h: Harness;
  let tenant: Tenant;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agentry-models-"));
    conversation = await startDeployable("services/conversation", {
      DATA_DIR: dataDir,
      CONVERSATION_PORT: "0",
      LOCAL_MODEL_PATH: `/models/${LOCAL_MODEL}.gguf`,
    });
    h = await startHarness({ CONVERSATION_URL: conversation.url, RPC_TIMEOUT_MS: "2000" });
    tenant = await h.tenant();
  });
  afterAll(async () => {
    await h?.close();
    await conversation?.stop("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  });

  it("tells the gateway what it serves over HTTP/2", async () => {
    expectRefused(
      await create(h, tenant, { name: "A", model: "gpt-4o" }),
      "model",
      /default provider, local/,
    );
    const hosted = await create(h, tenant, { name: "A", modelProvider: "openai" });
    expect(hosted.status).toBe(201);
    expect(hosted.body.warnings).toEqual([
      { field: "modelProvider", issue: expect.stringMatching(/OPENAI_API_KEY/) },
    ]);
  });
});

describe("a conversation service that cannot be reached", () => {
  it("leaves agent writes unchecked rather than failing them, as agent routes keep working", async () => {
    const port = await closedPort();
    const h = await startHarness({ CONVERSATION_URL: `http://127.0.0.1:${port}`, RPC_TIMEOUT_MS: "500" });
    try {
      const tenant = await h.tenant();
      const res = await create(h, tenant, { name: "A", modelProvider: "local", model: "anything" });
      expect(res.status).toBe(201);
      const doc = (await (await fetch(`${h.url}/v1/openapi.json`)).json()) as {
        components: { schemas: Record<string, { properties: Record<string, Json> }> };
      };
      expect(doc.components.schemas.CreateAgentRequest!.properties.modelProvider!.enum).toEqual([
        "openai",
        "anthropic",
        "local",
      ]);
    } finally {
      await h.close();
    }
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
