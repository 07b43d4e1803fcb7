import type { AgentCard, Message, StreamResponse, Task } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, PUBLIC_BASE_URL, startHarness, type Tenant } from "./harness.js";
import type { MessageJson } from "./history-helpers.js";

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
});
beforeEach(() => openai.reset());

async function newAgent(body: Record<string, unknown> = {}, key = tenant.key): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key,
    body: {
      name: "Ada",
      bio: ["Counts things.", "Never rounds."],
      modelProvider: "openai",
      model: "gpt-4o-mini",
      ...body,
    },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/**
 * The fetch the SDK's client uses: the API key as bearer token, and the deployment's public address (which the
 * card names) reached at the test server's own.
 */
const fetchWith =
  (key: string): typeof fetch =>
  (input, init) => {
    const url = String(input instanceof Request ? input.url : input).replace(PUBLIC_BASE_URL, h.url);
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${key}`);
    return fetch(url, { ...init, headers });
  };

/** The official A2A client, from the agent's card URL. */
async function clientFor(agentId: string, key = tenant.key): Promise<Client> {
  const fetchImpl = fetchWith(key);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  return factory.createFromUrl(`${PUBLIC_BASE_URL}/v1/a2a/${agentId}/`);
}

const userMessage = (text: string, contextId = ""): Message => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId: "",
  role: Role.ROLE_USER,
  parts: [
    { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const send = (client: Client, text: string, contextId = "") =>
  client.sendMessage({
    tenant: "",
    message: userMessage(text, contextId),
    configuration: undefined,
    metadata: undefined,
  });

const replyText = (task: Task) =>
  task.artifacts
    .flatMap((artifact) => artifact.parts)
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("");

describe("A2A at /v1/a2a/{agentId}", () => {
  it("serves the agent's card: name, bio, url, skills from plugins, bearer security, streaming", async () => {
    const agentId = await newAgent({ plugins: ["time"] });
    const client = await clientFor(agentId);
    const card: AgentCard = await client.getAgentCard();
    expect(card.name).toBe("Ada");
    expect(card.description).toBe("Counts things. Never rounds.");
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.supportedInterfaces.map((i) => [i.url, i.protocolBinding])).toContainEqual([
      `${PUBLIC_BASE_URL}/v1/a2a/${agentId}`,
      "JSONRPC",
    ]);
    expect(card.skills.map((skill) => skill.id)).toEqual(["time"]);
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({
      $case: "httpAuthSecurityScheme",
      value: { scheme: "bearer" },
    });

    // A client that names no protocol version gets the 0.3 card, with its url and security scheme.
    const legacy = await h.request<Record<string, unknown>>(
      "GET",
      `/v1/a2a/${agentId}/.well-known/agent-card.json`,
      { key: tenant.key },
    );
    expect(legacy.status).toBe(200);
    expect(legacy.body).toMatchObject({
      name: "Ada",
      url: `${PUBLIC_BASE_URL}/v1/a2a/${agentId}`,
      capabilities: { streaming: true },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    });
  });

  it("sends a message as a task, keeps contextId as the room, and gets the task back", async () => {
    const agentId = await newAgent();
    const client = await clientFor(agentId);
    openai.reply("Seven.");
    const task = (await send(client, "How many?", "ctx-1")) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.contextId).toBe("ctx-1");
    expect(replyText(task)).toBe("Seven.");
    const messageId = task.artifacts[0]!.artifactId;
    expect(messageId).toMatch(/^msg_/);

    const got = await client.getTask({ tenant: "", id: task.id });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(got)).toBe("Seven.");

    openai.reply("Eight.");
    const second = (await send(client, "And now?", "ctx-1")) as Task;
    expect(second.id).not.toBe(task.id);
    const history = await h.request<{ data: MessageJson[] }>(
      "GET",
      `/v1/agents/${agentId}/messages?roomId=ctx-1&order=asc`,
      { key: tenant.key },
    );
    expect(history.body.data.map((m) => [m.role, m.text, m.roomId])).toEqual([
      ["user", "How many?", "ctx-1"],
      ["assistant", "Seven.", "ctx-1"],
      ["user", "And now?", "ctx-1"],
      ["assistant", "Eight.", "ctx-1"],
    ]);
    expect(history.body.data[1]!.id).toBe(messageId);
    // The second turn's prompt holds the first exchange: the context is the room's conversation.
    expect(JSON.stringify(openai.requests[1]!.body.messages)).toContain("Seven.");
  });

  it("takes a message as long as the API allows (bodies up to 1 MiB, as on every route)", async () => {
    const agentId = await newAgent();
    const client = await clientFor(agentId);
    openai.reply("Read it all.");
    // 99,000 characters, twice as many bytes: past the 100 kB an SDK parser would take by default.
    const long = "é".repeat(99_000);
    const task = (await send(client, long)) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(JSON.stringify(openai.requests[0]!.body.messages)).toContain(long);
  });

  it("streams a task's events: the reply's text as it comes, then whole, then the completion", async () => {
    const agentId = await newAgent();
    const client = await clientFor(agentId);
    openai.reply("Streamed answer.", { chunks: ["Streamed", " answer", "."] });
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({
      tenant: "",
      message: userMessage("Stream it"),
      configuration: undefined,
      metadata: undefined,
    })) {
      events.push(event);
    }
    expect(events[0]?.payload?.$case).toBe("task");
    const last = events.at(-1)!.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const pieces = events.flatMap((event) =>
      event.payload?.$case === "artifactUpdate"
        ? [
            {
              append: event.payload.value.append,
              lastChunk: event.payload.value.lastChunk,
              text: event.payload.value.artifact?.parts
                .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
                .join(""),
            },
          ]
        : [],
    );
    expect(pieces).toEqual([
      { append: false, lastChunk: false, text: "Streamed" },
      { append: true, lastChunk: false, text: " answer" },
      { append: true, lastChunk: false, text: "." },
      { append: false, lastChunk: true, text: "Streamed answer." },
    ]);
    const taskId = events[0]!.payload!.$case === "task" ? events[0]!.payload!.value.id : "";
    expect(replyText(await client.getTask({ tenant: "", id: taskId }))).toBe("Streamed answer.");
  });

  it("cancels a running task: the model call stops and nothing is kept", async () => {
    const agentId = await newAgent();
    const client = await clientFor(agentId);
    openai.delay(5_000).reply("Too late.");
    const stream = client.sendMessageStream({
      tenant: "",
      message: userMessage("Take your time", "ctx-cancel"),
      configuration: undefined,
      metadata: undefined,
    });
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe("task");
    const taskId = first.value!.payload!.$case === "task" ? first.value!.payload!.value.id : "";
    await openai.nextRequest();
    const cancelled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);
    const got = await client.getTask({ tenant: "", id: taskId });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const history = await h.request<{ data: MessageJson[] }>(
      "GET",
      `/v1/agents/${agentId}/messages?roomId=ctx-cancel`,
      { key: tenant.key },
    );
    expect(history.body.data.filter((m) => m.role === "assistant" && m.text === "Too late.")).toEqual([]);
  });

  it("needs a valid key with messages:send, and keeps tasks within their account and agent", async () => {
    const agentId = await newAgent();
    const noKey = await h.request<{ error: { code: string } }>("POST", `/v1/a2a/${agentId}`, {
      body: { jsonrpc: "2.0", id: 1, method: "message/send", params: {} },
    });
    expect(noKey.status).toBe(401);
    const readOnly = await tenant.keyWith(["agents:read"]);
    const refused = await clientFor(agentId, readOnly.key);
    await expect(send(refused, "Hi")).rejects.toThrow();
    expect(openai.requests).toHaveLength(0);

    const client = await clientFor(agentId);
    openai.reply("Mine.");
    const task = (await send(client, "Hi")) as Task;
    const otherAgent = await clientFor(await newAgent({ name: "Bea" }));
    await expect(otherAgent.getTask({ tenant: "", id: task.id })).rejects.toThrow(/not found/i);
    const other = await h.tenant();
    const foreign = await h.request<{ error: { code: string } }>(
      "GET",
      `/v1/a2a/${agentId}/.well-known/agent-card.json`,
      {
        key: other.key,
      },
    );
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("AGENT_NOT_FOUND");
  });

  it("spends the REST operations' limits: a card is a read, a task a message", async () => {
    const limited = await h.tenant({ limits: { getPerMinute: 1, messagesPerMinute: 1 } });
    const agentId = await newAgent({}, limited.key);
    const card = () =>
      h.request<{ error: { code: string } }>("GET", `/v1/a2a/${agentId}/.well-known/agent-card.json`, {
        key: limited.key,
      });
    expect((await card()).status).toBe(200);
    const refused = await card();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("RATE_LIMIT_EXCEEDED");

    const legacy = new LegacyJsonRpcTransport({
      endpoint: `${PUBLIC_BASE_URL}/v1/a2a/${agentId}`,
      fetchImpl: fetchWith(limited.key),
    });
    const message = { tenant: "", configuration: undefined, metadata: undefined };
    openai.reply("Once.");
    const first = (await legacy.sendMessage({ ...message, message: userMessage("One") })) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = (await legacy.sendMessage({ ...message, message: userMessage("Two") })) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    const why = second.status?.message?.parts[0]?.content;
    expect(why?.$case === "text" && why.value).toMatch(/^RATE_LIMIT_EXCEEDED: /);
    expect(openai.requests).toHaveLength(1);
  });

  it("answers the 0.3 methods too: message/send, message/stream, tasks/get, tasks/cancel", async () => {
    const agentId = await newAgent();
    const methods: string[] = [];
    const fetchImpl: typeof fetch = (input, init) => {
      methods.push((JSON.parse(String(init?.body)) as { method: string }).method);
      return fetchWith(tenant.key)(input, init);
    };
    const legacy = new LegacyJsonRpcTransport({
      endpoint: `${PUBLIC_BASE_URL}/v1/a2a/${agentId}`,
      fetchImpl,
    });
    openai.reply("Old but gold.");
    const task = (await legacy.sendMessage({
      tenant: "",
      message: userMessage("Hello from 0.3", "ctx-03"),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(task)).toBe("Old but gold.");
    expect((await legacy.getTask({ tenant: "", id: task.id })).status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );

    openai.reply("Streamed the old way.");
    const events: StreamResponse[] = [];
    for await (const event of legacy.sendMessageStream({
      tenant: "",
      message: userMessage("Stream, 0.3", "ctx-03"),
      configuration: undefined,
      metadata: undefined,
    })) {
      events.push(event);
    }
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    openai.delay(5_000).reply("Never.");
    const stream = legacy.sendMessageStream({
      tenant: "",
      message: userMessage("Slowly", "ctx-03"),
      configuration: undefined,
      metadata: undefined,
    });
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === "task" ? first.value.payload.value.id : "";
    await openai.nextRequest();
    const cancelled = await legacy.cancelTask({ tenant: "", id: taskId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    for await (const _ of stream) {
      // drained to its end
    }
    expect(methods).toEqual([
      "message/send",
      "tasks/get",
      "message/stream",
      "message/stream",
      "tasks/cancel",
    ]);
  });
});
