import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import OpenAI, {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";

// OpenAI's own SDK against the real server, whose agents' model is a local fake speaking OpenAI's wire format.

let provider: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  provider = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  h = await startHarness({
    OPENAI_BASE_URL: provider.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await provider.close();
});
beforeEach(() => provider.reset());

/** OpenAI's client as its users make it: the base URL and an API key; no retries, so a refusal shows at once. */
const client = (apiKey = tenant.key) => new OpenAI({ baseURL: `${h.url}/v1`, apiKey, maxRetries: 0 });

async function newAgent(key = tenant.key, body: Record<string, unknown> = {}): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key,
    body: { name: "Ada", bio: ["Counts things"], ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

interface StoredMessage {
  id: string;
  role: string;
  text: string;
  userId: string | null;
  roomId: string | null;
}

async function storedMessages(agentId: string, userId: string): Promise<StoredMessage[]> {
  const res = await h.request<{ data: StoredMessage[] }>(
    "GET",
    `/v1/agents/${agentId}/messages?userId=${userId}&roomId=openai&order=asc`,
    { key: tenant.key },
  );
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("POST /v1/chat/completions", () => {
  it("answers a chat completion with the agent's reply, its usage and finish_reason, and records the turn", async () => {
    const agentId = await newAgent();
    provider.answer({ text: "Seven engines.", usage: { input: 31, output: 4 } });
    const completion = await client().chat.completions.create({
      model: agentId,
      messages: [
        { role: "system", content: "Answer in two words." },
        { role: "user", content: "How many engines?" },
        { role: "assistant", content: "Which ones?" },
        { role: "user", content: [{ type: "text", text: "All of them." }] },
      ],
      user: "u-json",
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe(agentId);
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]!.message).toMatchObject({ role: "assistant", content: "Seven engines." });
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.usage).toEqual({ prompt_tokens: 31, completion_tokens: 4, total_tokens: 35 });

    // The model saw the agent's system prompt, then the request's instructions, then exactly its messages.
    const sent = provider.lastRequest.body.messages;
    expect(sent[0]!.role).toBe("system");
    expect(sent[0]!.content).toMatch(/^You are Ada\./);
    expect(sent[0]!.content).toMatch(/Answer in two words\.$/);
    expect(sent.slice(1).map((m) => [m.role, m.content])).toEqual([
      ["user", "How many engines?"],
      ["assistant", "Which ones?"],
      ["user", "All of them."],
    ]);

    // History keeps the turn (its last user message and the reply) under the user, in room "openai".
    const stored = await storedMessages(agentId, "u-json");
    expect(stored.map((m) => [m.role, m.text])).toEqual([
      ["user", "All of them."],
      ["assistant", "Seven engines."],
    ]);
    expect(stored[1]!.id).toBe(completion.id);

    const usage = await h.request<{ data: { totals: { messages: number; inputTokens: number } } }>(
      "GET",
      `/v1/agents/${agentId}/usage?userId=u-json`,
      { key: tenant.key },
    );
    expect(usage.body.data.totals).toMatchObject({ messages: 1, inputTokens: 31 });
  });

  it("adds nothing stored to the context: the request's messages are the whole conversation", async () => {
    const agentId = await newAgent();
    await client().chat.completions.create({
      model: agentId,
      messages: [{ role: "user", content: "Remember the number 42." }],
      user: "u-context",
    });
    await client().chat.completions.create({
      model: agentId,
      messages: [{ role: "user", content: "Which number?" }],
      user: "u-context",
    });
    const sent = provider.lastRequest.body.messages;
    expect(sent.map((m) => m.role)).toEqual(["system", "user"]);
    expect(sent[1]!.content).toBe("Which number?");
    expect(await storedMessages(agentId, "u-context")).toHaveLength(4);
  });

  it("streams chat.completion.chunk events ending in [DONE], with usage when asked", async () => {
    const agentId = await newAgent();
    provider.answer({
      text: "One two three",
      chunks: ["One ", "two ", "three"],
      usage: { input: 12, output: 3 },
    });
    const stream = await client().chat.completions.create({
      model: agentId,
      messages: [{ role: "user", content: "Count." }],
      stream: true,
      stream_options: { include_usage: true },
      user: "u-stream",
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.model === agentId)).toBe(
      true,
    );
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe("One two three");
    const finishing = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finishing.map((chunk) => chunk.choices[0]!.finish_reason)).toEqual(["stop"]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);

    const stored = await storedMessages(agentId, "u-stream");
    expect(stored.map((m) => m.text)).toEqual(["Count.", "One two three"]);
    expect(stored[1]!.id).toBe(last.id);
  });

  it("sends the raw stream as OpenAI does: data lines only, no usage without include_usage, then [DONE]", async () => {
    const agentId = await newAgent();
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: agentId, messages: [{ role: "user", content: "Hi" }], stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = (await res.text()).split("\n\n").filter(Boolean);
    expect(frames.every((frame) => frame.startsWith("data: "))).toBe(true);
    expect(frames.at(-1)).toBe("data: [DONE]");
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.slice(6)) as Record<string, unknown>);
    expect(chunks.every((chunk) => !("usage" in chunk))).toBe(true);
  });

  it("answers a completion retried with its Idempotency-Key as the first, JSON and stream alike", async () => {
    const agentId = await newAgent();
    const messages = [{ role: "user" as const, content: "Once only." }];
    const headers = { "Idempotency-Key": `oa-json-${Date.now()}` };
    const first = await client().chat.completions.create({ model: agentId, messages }, { headers });
    const again = await client().chat.completions.create({ model: agentId, messages }, { headers });
    expect(again).toEqual(first);

    const streamHeaders = { "Idempotency-Key": `oa-stream-${Date.now()}` };
    const read = async () => {
      const stream = await client().chat.completions.create(
        { model: agentId, messages, stream: true },
        { headers: streamHeaders },
      );
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      return chunks;
    };
    const streamed = await read();
    expect(await read()).toEqual(streamed);
    expect(provider.requests).toHaveLength(2);
  });

  it("answers an error retried with its Idempotency-Key in OpenAI's shape, as the first time", async () => {
    const model = "agt_00000000000000000000000000";
    const messages = [{ role: "user" as const, content: "Anyone there?" }];
    const headers = { "Idempotency-Key": `oa-error-${Date.now()}` };
    const attempt = () => client().chat.completions.create({ model, messages }, { headers });
    const first = await attempt().catch((error: unknown) => error);
    const again = await attempt().catch((error: unknown) => error);
    for (const error of [first, again]) {
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({
        status: 404,
        type: "not_found_error",
        code: "AGENT_NOT_FOUND",
        param: "model",
      });
    }
    expect((again as NotFoundError).headers.get("idempotent-replayed")).toBe("true");
    expect((again as NotFoundError).error).toEqual((first as NotFoundError).error);
  });

  it("raises OpenAI's typed errors: bad key, unknown model, tools, scope", async () => {
    const agentId = await newAgent();
    const messages = [{ role: "user" as const, content: "Hi" }];

    const unauthenticated = client("agentry_sk_not_a_key").chat.completions.create({
      model: agentId,
      messages,
    });
    await expect(unauthenticated).rejects.toBeInstanceOf(AuthenticationError);
    await expect(unauthenticated).rejects.toMatchObject({
      status: 401,
      type: "authentication_error",
      code: "UNAUTHORIZED",
    });

    const unknown = client().chat.completions.create({ model: "agt_00000000000000000000000000", messages });
    await expect(unknown).rejects.toBeInstanceOf(NotFoundError);
    await expect(unknown).rejects.toMatchObject({ status: 404, code: "AGENT_NOT_FOUND", param: "model" });
    await expect(client().chat.completions.create({ model: "gpt-4o", messages })).rejects.toBeInstanceOf(
      NotFoundError,
    );

    const withTools = client().chat.completions.create({
      model: agentId,
      messages,
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
    });
    await expect(withTools).rejects.toBeInstanceOf(BadRequestError);
    await expect(withTools).rejects.toMatchObject({ status: 400, code: "INVALID_REQUEST", param: "tools" });

    const endsWithAssistant = client().chat.completions.create({
      model: agentId,
      messages: [...messages, { role: "assistant", content: "Hello" }],
    });
    await expect(endsWithAssistant).rejects.toBeInstanceOf(BadRequestError);

    const readOnly = await tenant.keyWith(["agents:read"]);
    const refused = client(readOnly.key).chat.completions.create({ model: agentId, messages });
    await expect(refused).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(refused).rejects.toMatchObject({ status: 403, type: "permission_error" });
    expect(provider.requests).toHaveLength(0);
  });

  it("spends the agent's message bucket: past it, RateLimitError with Retry-After", async () => {
    const limited = await h.tenant({ limits: { messagesPerMinute: 1 } });
    const agentId = await newAgent(limited.key);
    const other = await newAgent(limited.key);
    const messages = [{ role: "user" as const, content: "Hi" }];
    await client(limited.key).chat.completions.create({ model: agentId, messages });
    const refused = client(limited.key).chat.completions.create({ model: agentId, messages });
    await expect(refused).rejects.toBeInstanceOf(RateLimitError);
    const error = (await refused.catch((caught: unknown) => caught)) as RateLimitError;
    expect(error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(error.headers?.get("retry-after"))).toBeGreaterThan(0);
    // The bucket is that agent's own, as a message's is.
    await expect(
      client(limited.key).chat.completions.create({ model: other, messages }),
    ).resolves.toBeDefined();
  });

  it("says finish_reason length when the reply was cut at its token limit", async () => {
    const agentId = await newAgent();
    provider.answer({ text: "Cut short", finishReason: "length" });
    const completion = await client().chat.completions.create({
      model: agentId,
      messages: [{ role: "user", content: "Go on." }],
    });
    expect(completion.choices[0]!.finish_reason).toBe("length");
  });

  it("ends a stream that fails after it started with OpenAI's error event, which the SDK raises", async () => {
    const agentId = await newAgent();
    provider.answer({ text: "one two three four", chunks: ["one ", "two ", "three ", "four"], cutAfter: 2 });
    const stream = await client().chat.completions.create({
      model: agentId,
      messages: [{ role: "user", content: "Count." }],
      stream: true,
      user: "u-cut",
    });
    const received: string[] = [];
    const reading = (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? "");
    })();
    await expect(reading).rejects.toBeInstanceOf(APIError);
    // A connection to the provider cut mid-reply is this API's 503 AGENT_UNAVAILABLE, sent as the stream's error event.
    await expect(reading).rejects.toMatchObject({ type: "server_error", code: "AGENT_UNAVAILABLE" });
    expect(received.join("")).toBe("one two ");
    // Nothing of a failed turn is kept as a reply.
    expect((await storedMessages(agentId, "u-cut")).filter((m) => m.role === "assistant")).toEqual([]);
  });

  it("refuses an inactive agent 409, and holds the agent's concurrency slot while a completion runs", async () => {
    const limited = await h.tenant({ limits: { concurrentMessages: 1 } });
    const agentId = await newAgent(limited.key);
    const messages = [{ role: "user" as const, content: "Hi" }];
    provider.answer({ text: "Slowly.", delayMs: 800 });
    const slow = client(limited.key).chat.completions.create({ model: agentId, messages });
    await expect.poll(() => provider.requests.length).toBe(1);
    await expect(
      client(limited.key).chat.completions.create({ model: agentId, messages }),
    ).rejects.toBeInstanceOf(RateLimitError);
    await expect(slow).resolves.toMatchObject({ object: "chat.completion" });

    const patched = await h.request("PATCH", `/v1/agents/${agentId}`, {
      key: limited.key,
      body: { status: "inactive" },
    });
    expect(patched.status).toBe(200);
    const inactive = client(limited.key).chat.completions.create({ model: agentId, messages });
    await expect(inactive).rejects.toBeInstanceOf(ConflictError);
    await expect(inactive).rejects.toMatchObject({ status: 409, code: "AGENT_INACTIVE", param: "model" });
  });

  it("answers a provider failure 502 in OpenAI's shape", async () => {
    const agentId = await newAgent();
    provider.failWith(400, { message: "context too long" });
    const failed = client().chat.completions.create({
      model: agentId,
      messages: [{ role: "user", content: "Hi" }],
    });
    await expect(failed).rejects.toMatchObject({ status: 502, code: "MODEL_ERROR", type: "server_error" });
  });
});

describe("GET /v1/models", () => {
  it("lists the account's active agents as models, and reads one", async () => {
    const own = await h.tenant();
    const active = await newAgent(own.key);
    const inactive = await newAgent(own.key);
    const patched = await h.request("PATCH", `/v1/agents/${inactive}`, {
      key: own.key,
      body: { status: "inactive" },
    });
    expect(patched.status).toBe(200);
    const models = [];
    for await (const model of client(own.key).models.list()) models.push(model);
    expect(models.map((model) => model.id)).toEqual([active]);
    expect(models[0]).toMatchObject({ object: "model", owned_by: own.accountId });
    expect(models[0]!.created).toBeGreaterThan(1_700_000_000);

    await expect(client(own.key).models.retrieve(active)).resolves.toMatchObject({
      id: active,
      object: "model",
    });
    await expect(client(own.key).models.retrieve(inactive)).resolves.toMatchObject({ id: inactive });
    // Another account's agent is no model of this one.
    await expect(client().models.retrieve(active)).rejects.toBeInstanceOf(NotFoundError);
    const writeOnly = await own.keyWith(["messages:send"]);
    await expect(client(writeOnly.key).models.list()).rejects.toBeInstanceOf(PermissionDeniedError);
  });
});
