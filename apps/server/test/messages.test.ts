import { ensureModel, sharedModelDir } from "@agentry/conversation";
import {
  type FakeProviderServer,
  type OpenAIChatBody,
  startFakeAnthropic,
  startFakeOpenAI,
} from "@agentry/conversation/testing";
import { silentLogger } from "@agentry/logging";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

let openai: FakeProviderServer<OpenAIChatBody>;
let anthropic: Awaited<ReturnType<typeof startFakeAnthropic>>;
let h: Harness;
let tenant: Tenant;

interface Reply {
  id: string;
  agentId: string;
  userId: string | null;
  roomId: string | null;
  text: string;
  model: string;
  modelProvider: string;
  finishReason: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  latencyMs: number;
  createdAt: string;
}

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  anthropic = await startFakeAnthropic({ apiKey: "sk-test-anthropic" });
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    ANTHROPIC_BASE_URL: anthropic.baseURL,
    ANTHROPIC_API_KEY: "sk-test-anthropic",
    DEFAULT_MODEL_PROVIDER: "openai",
    PROVIDER_FIRST_TOKEN_TIMEOUT_MS: "1500",
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

async function newAgent(body: Record<string, unknown> = {}): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: {
      name: "Ada",
      bio: ["Counts things"],
      personality: { tone: "dry" },
      knowledge: ["engines"],
      goals: ["help"],
      ...body,
    },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

const send = (agentId: string, body: unknown, key = tenant.key) =>
  h.request<{ success: boolean; data: Reply } & ErrorBody>("POST", `/v1/agents/${agentId}/messages`, {
    key,
    body,
  });

async function stream(agentId: string, body: Record<string, unknown>) {
  const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  return { res, text: await res.text() };
}

const agentStatus = async (id: string) =>
  (
    await h.request<{ data: { status: string; statusReason: { code: string; message: string } | null } }>(
      "GET",
      `/v1/agents/${id}`,
      { key: tenant.key },
    )
  ).body.data;

describe("POST /v1/agents/{id}/messages happy", () => {
  it("answers with the reply object", async () => {
    const agentId = await newAgent();
    openai.reply("Hello there.");
    const res = await send(agentId, { text: "Hi", userId: "u1", roomId: "r1" });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({
      agentId,
      userId: "u1",
      roomId: "r1",
      text: "Hello there.",
      modelProvider: "openai",
      model: "gpt-4o-mini",
      finishReason: expect.any(String),
    });
    expect(res.body.data.id).toMatch(/^msg_/);
    expect(res.body.data.usage.totalTokens).toBe(
      res.body.data.usage.inputTokens + res.body.data.usage.outputTokens,
    );
    expect(res.body.data.usage.outputTokens).toBeGreaterThan(0);
    expect(res.body.data.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("builds the prompt from the agent's profile and the caller's context, which is not kept", async () => {
    const agentId = await newAgent({ name: "Grace" });
    await send(agentId, { text: "first", context: { locale: "fr-FR", plan: "gold" } });
    const first = openai.requests.at(-1)!.body;
    const system = JSON.stringify(first.messages.filter((m) => m.role === "system"));
    for (const part of ["Grace", "Counts things", "dry", "engines", "help", "fr-FR", "gold"])
      expect(system).toContain(part);
    await send(agentId, { text: "second" });
    expect(JSON.stringify(openai.requests.at(-1)!.body)).not.toContain("fr-FR");
  });

  it("keeps context per user and room, never across them", async () => {
    const agentId = await newAgent();
    await send(agentId, { text: "my secret is 4417", userId: "alice", roomId: "kitchen" });
    await send(agentId, { text: "what is my secret?", userId: "alice", roomId: "kitchen" });
    expect(JSON.stringify(openai.requests.at(-1)!.body.messages)).toContain("4417");
    for (const other of [{ userId: "bob", roomId: "kitchen" }, { userId: "alice", roomId: "hall" }, {}]) {
      await send(agentId, { text: "what is the secret?", ...other });
      expect(JSON.stringify(openai.requests.at(-1)!.body.messages)).not.toContain("4417");
    }
    const otherAgent = await newAgent();
    await send(otherAgent, { text: "secret?", userId: "alice", roomId: "kitchen" });
    expect(JSON.stringify(openai.requests.at(-1)!.body.messages)).not.toContain("4417");
  });

  it("uses the agent's own provider and model", async () => {
    const agentId = await newAgent({ modelProvider: "anthropic", model: "claude-test" });
    anthropic.reply("From Claude.");
    const res = await send(agentId, { text: "Hi" });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      text: "From Claude.",
      modelProvider: "anthropic",
      model: "claude-test",
    });
    expect(anthropic.requests).toHaveLength(1);
  });
});

describe("POST /v1/agents/{id}/messages stream", () => {
  it("streams started, deltas and one completed event, numbered, with anti-buffering headers", async () => {
    const agentId = await newAgent();
    openai.reply("one two three four", { chunkDelayMs: 5 });
    const { res, text } = await stream(agentId, { text: "count", userId: "u" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("cache-control")).toMatch(/no-cache/);
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const { events } = parseEventStream(text);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    expect(events[0]).toMatchObject({
      event: "message.started",
      data: { agentId, userId: "u", roomId: null },
    });
    const deltas = events
      .filter((e) => e.event === "message.delta")
      .map((e) => (e.data as { text: string }).text);
    expect(deltas.length).toBeGreaterThan(1);
    const terminal = events.filter((e) => e.event === "message.completed" || e.event === "error");
    expect(terminal).toHaveLength(1);
    expect(events.at(-1)?.event).toBe("message.completed");
    const completed = events.at(-1)!.data as Reply;
    expect(completed.text).toBe("one two three four");
    expect(deltas.join("")).toBe(completed.text);
    expect(completed.id).toBe((events[0]!.data as { id: string }).id);
  });

  it("ends a cut stream with one error event and stores no half reply", async () => {
    const agentId = await newAgent();
    openai.reply("alpha beta gamma delta", { cutAfter: 2 });
    const { res, text } = await stream(agentId, { text: "go" });
    expect(res.status).toBe(200);
    const { events } = parseEventStream(text);
    expect(events.at(-1)).toMatchObject({ event: "error", data: { code: "AGENT_UNAVAILABLE" } });
    expect(events.filter((e) => e.event === "message.completed" || e.event === "error")).toHaveLength(1);
    await send(agentId, { text: "again" });
    expect(JSON.stringify(openai.requests.at(-1)!.body.messages)).not.toContain("alpha");
  });

  it("answers an early provider failure as an ordinary JSON error", async () => {
    const agentId = await newAgent();
    openai.failWith(503, { headers: { "retry-after": "3" } });
    const { res, text } = await stream(agentId, { text: "go" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(JSON.parse(text).error.code).toBe("AGENT_UNAVAILABLE");
  });

  it("cancels the provider call when the caller disconnects, storing nothing", async () => {
    const agentId = await newAgent();
    openai.reply("slow words arrive one by one here", { chunkDelayMs: 200 });
    const controller = new AbortController();
    const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "tell me", stream: true, userId: "leaver" }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const upstream = openai.requests.at(-1)!;
    await expect(upstream.outcome).resolves.toBe("aborted");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await send(agentId, { text: "still there?", userId: "leaver" });
    expect(JSON.stringify(openai.requests.at(-1)!.body.messages)).not.toContain("tell me");
  });
});

describe("POST /v1/agents/{id}/messages failures and status", () => {
  it("puts the agent in error on rejected credentials, and a success clears it", async () => {
    const agentId = await newAgent();
    openai.failWith(401);
    const res = await send(agentId, { text: "Hi" });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("MODEL_ERROR");
    expect(res.body.error.message).not.toContain("sk-test-openai");
    const broken = await agentStatus(agentId);
    expect(broken.status).toBe("error");
    expect(broken.statusReason).toMatchObject({
      code: "MODEL_ERROR",
      message: expect.any(String),
      at: expect.any(String),
    });
    const ok = await send(agentId, { text: "Hi again" });
    expect(ok.status).toBe(200);
    expect(await agentStatus(agentId)).toMatchObject({ status: "active", statusReason: null });
  });

  it("puts the agent in error for an unknown model", async () => {
    const agentId = await newAgent();
    openai.failWith(404, { type: "model_not_found" });
    expect((await send(agentId, { text: "Hi" })).body.error.code).toBe("MODEL_ERROR");
    expect((await agentStatus(agentId)).status).toBe("error");
  });

  it("answers 503 with Retry-After for a rate-limited provider and leaves the status alone", async () => {
    const agentId = await newAgent();
    openai.failWith(429, { headers: { "retry-after": "7" } });
    const res = await send(agentId, { text: "Hi" });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("AGENT_UNAVAILABLE");
    expect(res.headers.get("retry-after")).toBe("7");
    expect((await agentStatus(agentId)).status).toBe("active");
  });

  it("answers 503 when the provider is too slow to start", async () => {
    const agentId = await newAgent();
    openai.reply("late", { delayMs: 3000 });
    const { res, text } = await stream(agentId, { text: "Hi" });
    expect(res.status).toBe(503);
    expect(JSON.parse(text).error.code).toBe("AGENT_UNAVAILABLE");
    expect((await agentStatus(agentId)).status).toBe("active");
  });

  it("refuses an inactive agent with 409 AGENT_INACTIVE", async () => {
    const agentId = await newAgent();
    await h.request("PATCH", `/v1/agents/${agentId}`, { key: tenant.key, body: { status: "inactive" } });
    const res = await send(agentId, { text: "Hi" });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("AGENT_INACTIVE");
    expect(openai.requests).toHaveLength(0);
  });

  it("validates the request", async () => {
    const agentId = await newAgent();
    for (const [body, field] of [
      [{}, "text"],
      [{ text: "" }, "text"],
      [{ text: "x".repeat(100_001) }, "text"],
      [{ text: "x", stream: "yes" }, "stream"],
      [{ text: "x", context: [] }, "context"],
      [{ text: "x", userId: 5 }, "userId"],
      [{ text: "x", mood: "happy" }, "mood"],
    ] as const) {
      const res = await send(agentId, body);
      expect(res.status).toBe(400);
      expect(res.body.error.details?.[0]?.field).toBe(field);
    }
  });

  it("answers 404 for a missing agent and another account's agent", async () => {
    const agentId = await newAgent();
    const other = await h.tenant();
    expect((await send(agentId, { text: "Hi" }, other.key)).body.error.code).toBe("AGENT_NOT_FOUND");
    expect((await send("agt_01JAAAAAAAAAAAAAAAAAAAAAAA", { text: "Hi" })).status).toBe(404);
    expect(openai.requests).toHaveLength(0);
  });

  it("needs messages:send", async () => {
    const agentId = await newAgent();
    const noSend = await tenant.keyWith(["agents:read", "agents:write"]);
    const res = await send(agentId, { text: "Hi" }, noSend.key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
  });
});

describe("deleting an agent", () => {
  it("purges its conversations", async () => {
    const agentId = await newAgent();
    await send(agentId, { text: "remember 9931", userId: "u" });
    const conversations = h.gateway.context.conversations;
    const before = await conversations.listTurns({ accountId: tenant.accountId, agentId, userId: "u" });
    expect(before.turns.length).toBe(2);
    expect((await h.request("DELETE", `/v1/agents/${agentId}`, { key: tenant.key })).status).toBe(200);
    let after = before;
    for (let i = 0; i < 50 && after.turns.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await conversations.listTurns({ accountId: tenant.accountId, agentId, userId: "u" });
    }
    expect(after.turns).toEqual([]);
    expect((await send(agentId, { text: "hello?", userId: "u" })).status).toBe(404);
  });
});

describe("no provider configured", () => {
  it("answers with the local model, streamed or not", async () => {
    // The model from the per-machine cache (CI fills it first); a fresh machine would fetch it on first use.
    const model = await ensureModel({ dir: sharedModelDir() }, { logger: silentLogger() });
    // Loading the model competes with every other suite for the CPU; the provider bounds are not under test here.
    const bare = await startHarness({
      LOCAL_MODEL_PATH: model.path,
      LOCAL_THREADS: "1",
      PROVIDER_FIRST_TOKEN_TIMEOUT_MS: "120000",
      PROVIDER_TIMEOUT_MS: "120000",
    });
    try {
      const t = await bare.tenant();
      const created = await bare.request<{ data: { id: string } }>("POST", "/v1/agents", {
        key: t.key,
        body: { name: "A", settings: { maxTokens: 8 } },
      });
      const path = `/v1/agents/${created.body.data.id}/messages`;
      const res = await bare.request<{ data: Reply }>("POST", path, { key: t.key, body: { text: "Hi" } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ modelProvider: "local", model: "SmolLM2-135M-Instruct.Q4_1" });
      expect(res.body.data.text.trim().length).toBeGreaterThan(0);
      expect(res.body.data.usage.outputTokens).toBeGreaterThan(0);
      expect(res.body.data.usage.outputTokens).toBeLessThanOrEqual(8);

      const streamed = await fetch(`${bare.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "Hi again", stream: true }),
      });
      const { events } = parseEventStream(await streamed.text());
      expect(events[0]?.event).toBe("message.started");
      expect(events.at(-1)?.event).toBe("message.completed");
      const deltas = events
        .filter((e) => e.event === "message.delta")
        .map((e) => (e.data as { text: string }).text);
      expect(deltas.length).toBeGreaterThan(0);
      expect((events.at(-1)!.data as Reply).text).toBe(deltas.join(""));
    } finally {
      await bare.close();
    }
  }, 180_000);

  it("fails with MODEL_ERROR saying what to do when the local model cannot be had", async () => {
    const bare = await startHarness({ LOCAL_MODEL_PATH: "/nonexistent/model.gguf" });
    try {
      const t = await bare.tenant();
      const created = await bare.request<{ data: { id: string } }>("POST", "/v1/agents", {
        key: t.key,
        body: { name: "A" },
      });
      const res = await bare.request<ErrorBody>("POST", `/v1/agents/${created.body.data.id}/messages`, {
        key: t.key,
        body: { text: "Hi" },
      });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe("MODEL_ERROR");
      expect(res.body.error.message).toMatch(
        /LOCAL_MODEL_PATH is \/nonexistent\/model\.gguf, but it does not exist/,
      );
      expect(res.body.error.message).toMatch(/DEFAULT_MODEL_PROVIDER/);
      expect(res.body.error.message).toMatch(/OPENAI_API_KEY/);
      expect(res.body.error.message).toMatch(/ANTHROPIC_API_KEY/);
    } finally {
      await bare.close();
    }
  });
});
