import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

/* A second message while its conversation has one in progress, through the REST API: onConflict and
 * settings.concurrentMessages, validated, and each mode's answer. */

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
beforeEach(() => {
  openai.reset();
});

interface Message {
  id: string;
  status?: string;
  text?: string;
  finishReason?: string;
}

async function newAgent(settings: Record<string, unknown> = {}): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Ada", settings },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

function send(agentId: string, body: Record<string, unknown>) {
  return h.request<{ data: Message }>("POST", `/v1/agents/${agentId}/messages`, { key: tenant.key, body });
}

async function settled(agentId: string, id: string): Promise<Message> {
  let read: Message = { id };
  await expect
    .poll(
      async () => {
        read = (
          await h.request<{ data: Message }>("GET", `/v1/agents/${agentId}/messages/${id}`, {
            key: tenant.key,
          })
        ).body.data;
        return read.status;
      },
      { timeout: 15_000 },
    )
    .not.toBe("pending");
  return read;
}

const slow = { chunks: Array.from({ length: 60 }, (_, i) => `w${i} `), chunkDelayMs: 50 };

describe("conflicts", () => {
  it("refuses an unknown onConflict and settings.concurrentMessages with 400 naming the field", async () => {
    const agentId = await newAgent();
    const bad = await send(agentId, { text: "hi", onConflict: "later" });
    expect(bad.status).toBe(400);
    expect((bad.body as unknown as ErrorBody).error.details?.[0]).toMatchObject({ field: "onConflict" });
    const create = await h.request("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Ada", settings: { concurrentMessages: "sometimes" } },
    });
    expect(create.status).toBe(400);
    expect(JSON.stringify(create.body)).toContain("settings.concurrentMessages");
    const patch = await h.request("PATCH", `/v1/agents/${agentId}`, {
      key: tenant.key,
      body: { settings: { concurrentMessages: 3 } },
    });
    expect(patch.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });

  it("reject: 409 CONVERSATION_BUSY in the envelope, for a JSON send, a stream and a background send", async () => {
    const agentId = await newAgent({ concurrentMessages: "reject" });
    openai.answer(slow);
    const first = await send(agentId, { text: "first", userId: "u", background: true });
    expect(first.status).toBe(202);
    await expect.poll(() => openai.requests.length).toBe(1);
    for (const extra of [{}, { stream: true }, { background: true }]) {
      const busy = await send(agentId, { text: "again", userId: "u", ...extra });
      expect(busy.status).toBe(409);
      const { error } = busy.body as unknown as ErrorBody;
      expect(error.code).toBe("CONVERSATION_BUSY");
      expect(error.message).toMatch(/once it has ended/);
    }
    // Per send, onConflict overrides the agent's setting.
    const queued = await send(agentId, { text: "after it", userId: "u", onConflict: "enqueue" });
    expect(queued.status).toBe(200);
    expect(queued.body.data.text).toBe("Echo: after it");
    expect((await settled(agentId, first.body.data.id)).status).toBe("completed");
  }, 30_000);

  it("interrupt: a stream in progress ends with its partial reply, finishReason cancelled; the new message is answered", async () => {
    const agentId = await newAgent();
    openai.answer(slow);
    const streaming = fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "ramble", stream: true }),
    }).then(async (res) => ({ status: res.status, text: await res.text() }));
    await expect.poll(() => openai.requests.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await send(agentId, { text: "stop", onConflict: "interrupt" });
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ text: "Echo: stop", finishReason: "stop" });
    const stream = await streaming;
    expect(stream.status).toBe(200);
    const { events } = parseEventStream(stream.text);
    const last = events.at(-1)!;
    expect(last.event).toBe("message.completed");
    const reply = last.data as Message;
    expect(reply.finishReason).toBe("cancelled");
    expect(reply.text).toBe(
      events
        .filter((event) => event.event === "message.delta")
        .map((event) => (event.data as { text: string }).text)
        .join(""),
    );
    expect(reply.text!.length).toBeGreaterThan(0);
  }, 30_000);

  it("interrupt: a background message in progress reads cancelled, with the text it had", async () => {
    const agentId = await newAgent();
    openai.answer(slow);
    const first = await send(agentId, { text: "ramble", background: true });
    await expect.poll(() => openai.requests.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await send(agentId, { text: "stop", background: true, onConflict: "interrupt" });
    expect(second.status).toBe(202);
    const cancelled = await settled(agentId, first.body.data.id);
    expect(cancelled).toMatchObject({ status: "cancelled", finishReason: "cancelled" });
    expect(cancelled.text!.startsWith("w0 ")).toBe(true);
    expect((await settled(agentId, second.body.data.id)).status).toBe("completed");
  }, 30_000);
});
