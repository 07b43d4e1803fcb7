import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

/**
 * Tool approvals through the REST API of the all-in-one server: `requireApproval` on an agent's plugin item, a
 * stream that pauses, the message in `requires_action`, `POST …/approve`, and its errors.
 */
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

async function newAgent(plugins: unknown[]): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Teller", modelProvider: "openai", model: "gpt-4o-mini", plugins },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

interface MessageState {
  id: string;
  status: string;
  pendingToolCalls?: { id: string; tool: string; arguments: string }[];
  approvalExpiresAt?: string;
  text?: string;
  toolCalls?: { id: string; ok: boolean; output?: unknown; error?: string }[];
}

const read = async (agentId: string, messageId: string) =>
  (
    await h.request<{ data: MessageState }>("GET", `/v1/agents/${agentId}/messages/${messageId}`, {
      key: tenant.key,
    })
  ).body.data;

const approve = (agentId: string, messageId: string, body: unknown) =>
  h.request<{ data: MessageState; error: { code: string; message: string } }>(
    "POST",
    `/v1/agents/${agentId}/messages/${messageId}/approve`,
    { key: tenant.key, body },
  );

describe("tool approvals over REST", () => {
  it("refuses requireApproval naming a tool the plugin does not have, naming it", async () => {
    const res = await h.request<{ error: { code: string; details: { field: string; issue: string }[] } }>(
      "POST",
      "/v1/agents",
      {
        key: tenant.key,
        body: { name: "Teller", plugins: [{ name: "calculator", requireApproval: ["calculate", "divide"] }] },
      },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("INVALID_REQUEST");
    expect(res.body.error.details).toEqual([
      {
        field: "plugins[0].requireApproval[1]",
        issue: expect.stringContaining('"divide" is not a tool of plugin "calculator" (calculate)'),
      },
    ]);
  });

  it("pauses a stream with tool.approval_required, runs the call once approved, and refuses a second answer", async () => {
    const agentId = await newAgent([{ name: "calculator", requireApproval: true }]);
    openai.callTools([{ id: "c1", name: "calculator__calculate", arguments: { expression: "6 * 7" } }]);
    const response = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "What is 6 times 7?", stream: true }),
    });
    const { events } = parseEventStream(await response.text());
    expect(events.map((event) => event.event)).toEqual([
      "message.started",
      "tool.call",
      "tool.approval_required",
    ]);
    const messageId = (events[0]!.data as { id: string }).id;
    expect(events[2]!.data).toEqual({
      messageId,
      pendingToolCalls: [{ id: "c1", tool: "calculator__calculate", arguments: '{"expression":"6 * 7"}' }],
    });
    expect(openai.requests).toHaveLength(1);

    const paused = await read(agentId, messageId);
    expect(paused).toMatchObject({ id: messageId, status: "requires_action" });
    expect(paused.pendingToolCalls).toEqual([
      { id: "c1", tool: "calculator__calculate", arguments: '{"expression":"6 * 7"}' },
    ]);
    expect(Date.parse(paused.approvalExpiresAt!) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    const runs = async (status: string) =>
      (
        await h.request<{ data: { id: string; status: string }[] }>(
          "GET",
          `/v1/agents/${agentId}/runs?status=${status}`,
          { key: tenant.key },
        )
      ).body.data;
    expect(await runs("requires_action")).toMatchObject([{ id: messageId, status: "requires_action" }]);
    expect(await runs("pending")).toEqual([]);

    const unknown = await approve(agentId, messageId, { toolCallIds: ["c9"], approve: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('"c9"');
    const empty = await approve(agentId, messageId, { toolCallIds: [], approve: true });
    expect(empty.status).toBe(400);

    openai.reply("It is 42.");
    const approved = await approve(agentId, messageId, { toolCallIds: ["c1"], approve: true });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.data).toMatchObject({ id: messageId, status: "pending" });
    await vi.waitFor(async () => expect((await read(agentId, messageId)).status).toBe("completed"), {
      timeout: 10_000,
      interval: 50,
    });
    const done = await read(agentId, messageId);
    expect(done.text).toBe("It is 42.");
    expect(done.toolCalls).toMatchObject([
      { id: "c1", ok: true, output: { expression: "6 * 7", result: "42" } },
    ]);
    expect(openai.requests).toHaveLength(2);

    const again = await approve(agentId, messageId, { toolCallIds: ["c1"], approve: true });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("MESSAGE_NOT_AWAITING_APPROVAL");
    const missing = await approve(agentId, "msg_01JNOSUCHMESSAGE0000000000", {
      toolCallIds: ["c1"],
      approve: true,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("MESSAGE_NOT_FOUND");
  });

  it("answers a JSON send that pauses with 202 requires_action, and a refusal reaches the model", async () => {
    const agentId = await newAgent([{ name: "calculator", requireApproval: ["calculate"] }]);
    openai.callTools([{ id: "c2", name: "calculator__calculate", arguments: { expression: "1 / 0" } }]);
    const sent = await h.request<{ data: MessageState }>("POST", `/v1/agents/${agentId}/messages`, {
      key: tenant.key,
      body: { text: "Divide one by zero" },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.data).toMatchObject({
      status: "requires_action",
      pendingToolCalls: [{ id: "c2", tool: "calculator__calculate" }],
    });
    openai.reply("I will not, then.");
    const refused = await approve(agentId, sent.body.data.id, {
      toolCallIds: ["c2"],
      approve: false,
      reason: "no dividing by zero",
    });
    expect(refused.status).toBe(200);
    await vi.waitFor(async () => expect((await read(agentId, sent.body.data.id)).status).toBe("completed"), {
      timeout: 10_000,
      interval: 50,
    });
    const done = await read(agentId, sent.body.data.id);
    expect(done.toolCalls).toMatchObject([
      { id: "c2", ok: false, error: "The person refused this tool call: no dividing by zero" },
    ]);
  });

  it("needs messages:send to answer", async () => {
    const agentId = await newAgent([{ name: "calculator", requireApproval: true }]);
    const reader = await tenant.keyWith(["history:read"]);
    const res = await h.request<{ error: { code: string } }>(
      "POST",
      `/v1/agents/${agentId}/messages/msg_01JNOSUCHMESSAGE0000000000/approve`,
      { key: reader.key, body: { toolCallIds: ["c1"], approve: true } },
    );
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
  });
});
