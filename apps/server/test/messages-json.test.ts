import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { type Agent, AgentView } from "@agentry/proto";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

/*
 * A message's agent is read from the registry in the JSON view and passed on to the conversation service as it
 * came: its free-form JSON fields as text, with no Struct or Value message on either hop. These tests hold the
 * turn to what the agent says (personality in the prompt, settings, plugins' tools), all-in-one and with every
 * service in a process of its own, and with a registry of the earlier release, which answers the Struct form.
 */

const AGENT = {
  name: "Ada",
  personality: { tone: "meticulous", traits: ["curious"] },
  settings: { temperature: 0.25, maxTokens: 321 },
  plugins: ["calculator", { name: "time", enabled: false }],
};

type Sent = { view: AgentView[]; agents: Agent[] };

/** Records the view of every agent read and the agent of every message the gateway sends on. */
function watch(h: Harness): Sent & { restore(): void } {
  const sent: Sent = { view: [], agents: [] };
  const { agents, conversations } = h.gateway.context;
  const { getAgent } = agents;
  const { sendMessage, streamMessage, startMessage } = conversations;
  agents.getAgent = (request, options) => {
    sent.view.push(request.view ?? AgentView.UNSPECIFIED);
    return getAgent(request, options);
  };
  conversations.sendMessage = (request, options) => {
    sent.agents.push(request.agent as Agent);
    return sendMessage(request, options);
  };
  conversations.streamMessage = (request, options) => {
    sent.agents.push(request.agent as Agent);
    return streamMessage(request, options);
  };
  conversations.startMessage = (request, options) => {
    sent.agents.push(request.agent as Agent);
    return startMessage(request, options);
  };
  return {
    ...sent,
    restore() {
      Object.assign(agents, { getAgent });
      Object.assign(conversations, { sendMessage, streamMessage, startMessage });
    },
  };
}

/** The turn as the provider was asked for it: the agent's personality, settings and plugins all in it. */
function expectTurnOfAgent(body: OpenAIChatBody): void {
  const system = body.messages.find((message) => message.role === "system")?.content ?? "";
  expect(system).toContain("meticulous");
  expect(system).toContain("curious");
  expect(body.temperature).toBe(0.25);
  expect(body.max_completion_tokens ?? body.max_tokens).toBe(321);
  expect((body.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name)).toEqual([
    "calculator__calculate",
  ]);
}

function messagesOfAgent(
  setup: () => { h: Harness; tenant: Tenant; openai: FakeProviderServer<OpenAIChatBody> },
) {
  let agentId: string;
  beforeEach(async () => {
    const { h, tenant, openai } = setup();
    openai.reset();
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: AGENT,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    agentId = created.body.data.id;
  });

  async function send(body: Record<string, unknown>, path = `/v1/agents/${agentId}/messages`) {
    const { h, tenant } = setup();
    return fetch(`${h.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  }

  it("sends the agent's JSON fields as text only, for a reply, a stream and a completion", async () => {
    const { h, openai } = setup();
    const sent = watch(h);
    try {
      openai.reply("Plain.");
      const plain = await send({ text: "Hello" });
      expect(plain.status).toBe(200);
      expect(((await plain.json()) as { data: { text: string } }).data.text).toBe("Plain.");
      expectTurnOfAgent(openai.lastRequest.body);

      openai.reply("Streamed.");
      const streamed = await send({ text: "Hello", stream: true });
      expect(streamed.status).toBe(200);
      const { events } = parseEventStream(await streamed.text());
      expect(events.at(-1)?.event).toBe("message.completed");
      expectTurnOfAgent(openai.lastRequest.body);

      openai.reply("Completed.");
      const completion = await send(
        { model: agentId, messages: [{ role: "user", content: "Hello" }] },
        "/v1/chat/completions",
      );
      expect(completion.status).toBe(200);
      expectTurnOfAgent(openai.lastRequest.body);

      expect(sent.view).toEqual([AgentView.JSON, AgentView.JSON, AgentView.JSON]);
      expect(sent.agents).toHaveLength(3);
      for (const agent of sent.agents) {
        const spec = agent.spec!;
        expect(JSON.parse(spec.personalityJson)).toEqual(AGENT.personality);
        expect(JSON.parse(spec.settingsJson)).toEqual(AGENT.settings);
        expect(JSON.parse(spec.pluginsJson)).toEqual(AGENT.plugins);
        expect(JSON.parse(spec.clientsJson)).toEqual([]);
        // No Struct or Value form beside the text.
        expect(spec.personality).toBeUndefined();
        expect(spec.settings).toBeUndefined();
        expect(spec.plugins).toBeUndefined();
        expect(spec.clients).toBeUndefined();
      }
    } finally {
      sent.restore();
    }
  });

  it("answers a background message, whose run records the agent, from the same fields", async () => {
    const { h, tenant, openai } = setup();
    openai.reply("Later.");
    const accepted = await send({ text: "Hello", background: true });
    expect(accepted.status).toBe(202);
    const { id } = ((await accepted.json()) as { data: { id: string } }).data;
    let status = "pending";
    let text = "";
    for (let i = 0; i < 200 && status === "pending"; i++) {
      const read = await h.request<{ data: { status: string; text?: string } }>(
        "GET",
        `/v1/agents/${agentId}/messages/${id}`,
        { key: tenant.key },
      );
      status = read.body.data.status;
      text = read.body.data.text ?? "";
      if (status === "pending") await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(status).toBe("completed");
    expect(text).toBe("Later.");
    expectTurnOfAgent(openai.lastRequest.body);
  });

  it("sends what a registry of the earlier release answers, the Struct form, and the turn reads it alike", async () => {
    const { h, openai } = setup();
    const agents = h.gateway.context.agents;
    const { getAgent } = agents;
    // An earlier registry knows no view: it answers every read in the Struct form.
    agents.getAgent = (request, options) => getAgent({ ...request, view: AgentView.UNSPECIFIED }, options);
    const sent = watch(h);
    try {
      openai.reply("Plain.");
      expect((await send({ text: "Hello" })).status).toBe(200);
      expectTurnOfAgent(openai.lastRequest.body);
      openai.reply("Streamed.");
      const streamed = await send({ text: "Hello", stream: true });
      expect(parseEventStream(await streamed.text()).events.at(-1)?.event).toBe("message.completed");
      expectTurnOfAgent(openai.lastRequest.body);
      expect(sent.agents.map((agent) => agent.spec?.personalityJson)).toEqual(["", ""]);
      expect(sent.agents.map((agent) => agent.spec?.personality)).toEqual([
        AGENT.personality,
        AGENT.personality,
      ]);
    } finally {
      sent.restore();
      Object.assign(agents, { getAgent });
    }
  });
}

describe("a message's agent as JSON text, all-in-one", () => {
  let openai: FakeProviderServer<OpenAIChatBody>;
  let h: Harness;
  let tenant: Tenant;
  beforeAll(async () => {
    openai = await startFakeOpenAI();
    h = await startHarness({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: openai.baseURL,
      DEFAULT_MODEL_PROVIDER: "openai",
    });
    tenant = await h.tenant();
  });
  afterAll(async () => {
    await h?.close();
    await openai?.close();
  });

  messagesOfAgent(() => ({ h, tenant, openai }));
});

describe("a message's agent as JSON text, registry and conversation service in processes of their own (HTTP/2)", () => {
  let dataDir: string;
  let openai: FakeProviderServer<OpenAIChatBody>;
  let registry: DeployableProcess;
  let conversation: DeployableProcess;
  let h: Harness;
  let tenant: Tenant;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agentry-split-messages-"));
    openai = await startFakeOpenAI();
    registry = await startDeployable("services/registry", {
      DATA_DIR: join(dataDir, "registry"),
      REGISTRY_PORT: "0",
      SECRETS_KEY: Buffer.alloc(32, 1).toString("base64"),
    });
    // It reads the plugins' secrets from the registry for a turn's tools.
    conversation = await startDeployable("services/conversation", {
      DATA_DIR: join(dataDir, "conversation"),
      CONVERSATION_PORT: "0",
      LOCAL_ENABLED: "false",
      DEFAULT_MODEL_PROVIDER: "openai",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: openai.baseURL,
      REGISTRY_URL: registry.url,
    });
    h = await startHarness({
      REGISTRY_URL: registry.url,
      CONVERSATION_URL: conversation.url,
      RPC_TIMEOUT_MS: "5000",
    });
    tenant = await h.tenant();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await Promise.all([conversation?.stop("SIGKILL"), registry?.stop("SIGKILL")]);
    await openai?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  messagesOfAgent(() => ({ h, tenant, openai }));
});
