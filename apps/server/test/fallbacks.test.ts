import {
  type FakeProviderServer,
  type OpenAIChatBody,
  startFakeAnthropic,
  startFakeOpenAI,
} from "@agentry/conversation/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

let openai: FakeProviderServer<OpenAIChatBody>;
let anthropic: Awaited<ReturnType<typeof startFakeAnthropic>>;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  anthropic = await startFakeAnthropic({ apiKey: "sk-test-anthropic" });
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    ANTHROPIC_BASE_URL: anthropic.baseURL,
    ANTHROPIC_API_KEY: "sk-test-anthropic",
    DEFAULT_MODEL_PROVIDER: "openai",
    LOCAL_ENABLED: "false",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
  await anthropic.close();
});
beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

const FALLBACKS = [{ modelProvider: "anthropic", model: "claude-fallback" }];

async function newAgent(settings: Record<string, unknown> = { fallbacks: FALLBACKS }): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Resilient", modelProvider: "openai", model: "gpt-4o-mini", settings },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

interface Reply {
  text: string;
  model: string;
  modelProvider: string;
}

const send = (agentId: string, text = "hello") =>
  h.request<{ data: Reply } & ErrorBody>("POST", `/v1/agents/${agentId}/messages`, {
    key: tenant.key,
    body: { text },
  });

const status = async (agentId: string) =>
  (await h.request<{ data: { status: string } }>("GET", `/v1/agents/${agentId}`, { key: tenant.key })).body
    .data.status;

describe("settings.fallbacks", () => {
  it("answers with the next model in line when the agent's own is unavailable, and says which answered", async () => {
    const agentId = await newAgent();
    openai.failWith(503);
    anthropic.reply("From the fallback.");
    const res = await send(agentId);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      text: "From the fallback.",
      modelProvider: "anthropic",
      model: "claude-fallback",
    });
    const usage = await h.request<{ data: { totals: { groups: { model: string; messages: number }[] } } }>(
      "GET",
      `/v1/agents/${agentId}/usage?groupBy=model`,
      { key: tenant.key },
    );
    expect(usage.body.data.totals.groups).toEqual([
      expect.objectContaining({ model: "claude-fallback", messages: 1 }),
    ]);
  });

  it("streams from the fallback when the agent's own model refuses the stream before it starts", async () => {
    const agentId = await newAgent();
    openai.failWith(503);
    anthropic.reply("streamed from the fallback");
    const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "go", stream: true }),
    });
    const { events } = parseEventStream(await res.text());
    expect(events.at(-1)).toMatchObject({
      event: "message.completed",
      data: { text: "streamed from the fallback", modelProvider: "anthropic" },
    });
  });

  it("does not fall back when the agent's own provider rejects its configuration (502)", async () => {
    const agentId = await newAgent();
    openai.failWith(401);
    const res = await send(agentId);
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("MODEL_ERROR");
    expect(anthropic.requests).toHaveLength(0);
    expect(await status(agentId)).toBe("error");
  });

  it("passes a fallback that fails on to the next, and answers the agent's own failure when all fail", async () => {
    const agentId = await newAgent({
      fallbacks: [
        { modelProvider: "anthropic", model: "first" },
        { modelProvider: "anthropic", model: "second" },
      ],
    });
    openai.failWith(503);
    anthropic.failWith(401).failWith(529);
    const res = await send(agentId);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("AGENT_UNAVAILABLE");
    expect(anthropic.requests.map((r) => (r.body as { model: string }).model)).toEqual(["first", "second"]);
    // Only the agent's own model speaks for its status: a fallback's rejected credentials do not put it in error.
    expect(await status(agentId)).toBe("active");
  });

  it("leaves an agent in error when a fallback answers for its failing model", async () => {
    const agentId = await newAgent();
    openai.failWith(401);
    await send(agentId);
    expect(await status(agentId)).toBe("error");
    openai.failWith(503);
    anthropic.reply("covering");
    expect((await send(agentId)).body.data.modelProvider).toBe("anthropic");
    expect(await status(agentId)).toBe("error");
    openai.reply("recovered");
    expect((await send(agentId)).body.data.modelProvider).toBe("openai");
    expect(await status(agentId)).toBe("active");
  });

  it("refuses fallbacks of the wrong shape, or naming a provider this server has no client for", async () => {
    for (const [fallbacks, field] of [
      ["anthropic", "settings.fallbacks"],
      [[{ modelProvider: "anthropic" }, {}, {}, {}], "settings.fallbacks"],
      [[{ modelProvider: "mistral" }], "settings.fallbacks[0].modelProvider"],
      [[{ modelProvider: "anthropic", model: "" }], "settings.fallbacks[0].model"],
      [[{ modelProvider: "anthropic", weight: 2 }], "settings.fallbacks[0].weight"],
    ] as const) {
      const res = await h.request<ErrorBody>("POST", "/v1/agents", {
        key: tenant.key,
        body: { name: "Bad", settings: { fallbacks } },
      });
      expect(res.status, JSON.stringify(fallbacks)).toBe(400);
      expect(res.body.error.details?.map((d) => d.field)).toContain(field);
    }
    const ok = await h.request("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Good", settings: { fallbacks: [{ modelProvider: "anthropic", model: null }] } },
    });
    expect(ok.status).toBe(201);
    // A provider with a client but no configuration here (local is off) is taken, as for the agent's own choice.
    const unconfigured = await h.request("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Local later", settings: { fallbacks: [{ modelProvider: "local" }] } },
    });
    expect(unconfigured.status).toBe(201);
  });
});
