import { createServer } from "node:net";
import type { Agent, StreamMessageResponse } from "@agentry/proto";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { isLastingFailure, loadConversationConfig } from "../src/index.js";
import { ACCOUNT, ANTHROPIC_KEY, agent, failure, type Harness, OPENAI_KEY, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    providers: (urls) => ({
      defaultProvider: "openai",
      openai: { apiKey: OPENAI_KEY, baseURL: urls.openai },
      anthropic: { apiKey: ANTHROPIC_KEY, baseURL: urls.anthropic },
      timeoutMs: 600,
      firstTokenTimeoutMs: 250,
    }),
  });
});
afterAll(() => h.close());

type Provider = "openai" | "anthropic";
const fake = (provider: Provider) => (provider === "openai" ? h.openai : h.anthropic);
const agentOf = (provider: Provider) => agent({ modelProvider: provider });

async function stored(a: Agent) {
  const { turns } = await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id });
  return { turns, calls: await h.conversation.store.listCalls(ACCOUNT, a.id) };
}

/** Runs a stream to its end and returns the events it gave and the error it ended with, if any. */
async function drain(stream: AsyncIterable<StreamMessageResponse>) {
  const events: StreamMessageResponse["event"][] = [];
  try {
    for await (const response of stream) events.push(response.event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error: await failure(Promise.reject(error)) };
  }
}

const refusals: [Provider, number, Record<string, string>, string, number | undefined, RegExp][] = [
  [
    "openai",
    401,
    {},
    "MODEL_ERROR",
    undefined,
    /rejected the credentials \(HTTP 401\)\. Check OPENAI_API_KEY/,
  ],
  ["openai", 403, {}, "MODEL_ERROR", undefined, /refused access \(HTTP 403\)/],
  ["openai", 404, {}, "MODEL_ERROR", undefined, /does not know the model "gpt-4o-mini" \(HTTP 404\)/],
  ["openai", 400, {}, "MODEL_ERROR", undefined, /rejected the request as invalid \(HTTP 400\)/],
  ["openai", 422, {}, "MODEL_ERROR", undefined, /rejected the request as invalid \(HTTP 422\)/],
  ["openai", 429, { "retry-after": "7" }, "AGENT_UNAVAILABLE", 7, /rate-limiting/],
  ["openai", 429, { "retry-after-ms": "1500" }, "AGENT_UNAVAILABLE", 2, /rate-limiting/],
  ["openai", 500, {}, "AGENT_UNAVAILABLE", undefined, /failed \(HTTP 500\)/],
  ["openai", 503, { "retry-after": "3" }, "AGENT_UNAVAILABLE", 3, /overloaded \(HTTP 503\)/],
  [
    "anthropic",
    401,
    {},
    "MODEL_ERROR",
    undefined,
    /rejected the credentials \(HTTP 401\)\. Check ANTHROPIC_API_KEY/,
  ],
  ["anthropic", 404, {}, "MODEL_ERROR", undefined, /does not know the model "claude-haiku-5-5"/],
  ["anthropic", 400, {}, "MODEL_ERROR", undefined, /rejected the request as invalid \(HTTP 400\)/],
  ["anthropic", 429, { "retry-after": "11" }, "AGENT_UNAVAILABLE", 11, /rate-limiting/],
  ["anthropic", 500, {}, "AGENT_UNAVAILABLE", undefined, /failed \(HTTP 500\)/],
  ["anthropic", 529, {}, "AGENT_UNAVAILABLE", undefined, /overloaded \(HTTP 529\)/],
];

describe("provider refusals", () => {
  it.each(refusals)(
    "%s %i %j → %s (retry after %s)",
    async (provider, status, headers, code, retryAfter, message) => {
      const a = agentOf(provider);
      fake(provider).failWith(status, { headers });
      const error = await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
      expect(error.code).toBe(code);
      expect(error.retryAfterSeconds).toBe(retryAfter);
      expect(error.message).toMatch(message);
      expect(isLastingFailure(error.code)).toBe(code === "MODEL_ERROR");

      // Streamed, the same refusal comes before any event.
      fake(provider).failWith(status, { headers });
      const streamed = await drain(h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
      expect(streamed.events).toEqual([]);
      expect(streamed.error?.code).toBe(code);
      expect(streamed.error?.retryAfterSeconds).toBe(retryAfter);

      const { turns, calls } = await stored(a);
      expect(turns).toEqual([]);
      expect(calls.map((c) => [c.outcome, c.errorCode, c.stream])).toEqual([
        ["failed", code, false],
        ["failed", code, true],
      ]);
    },
  );

  it("never passes on the key or a secret from the provider's message", async () => {
    const a = agentOf("openai");
    h.openai.failWith(400, {
      message: `Invalid 'max_tokens' for key ${OPENAI_KEY}; Authorization: Bearer abc.def.ghi; other sk-proj-LEAKED123456`,
    });
    const error = await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
    expect(error.code).toBe("MODEL_ERROR");
    expect(error.message).toContain("Invalid 'max_tokens'");
    expect(error.message).not.toContain(OPENAI_KEY);
    expect(error.message).not.toContain("abc.def.ghi");
    expect(error.message).not.toContain("LEAKED");

    h.openai.failWith(401);
    const rejected = await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
    expect(rejected.message).not.toContain("sk-fake");
    const calls = await h.conversation.store.listCalls(ACCOUNT, a.id);
    expect(JSON.stringify(calls)).not.toContain(OPENAI_KEY);
  });

  it("reports credentials the provider does not accept as MODEL_ERROR", async () => {
    const wrong = await startHarness({
      providers: (urls) => ({ openai: { apiKey: "sk-wrong-key-000000", baseURL: urls.openai } }),
    });
    try {
      const error = await failure(
        wrong.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "hi" }),
      );
      expect(error.code).toBe("MODEL_ERROR");
      expect(error.message).not.toContain("sk-wrong-key-000000");
      expect(wrong.openai.lastRequest.headers.authorization).toBe("Bearer sk-wrong-key-000000");
    } finally {
      await wrong.close();
    }
  });

  it("reports a provider that cannot be reached as AGENT_UNAVAILABLE", async () => {
    const port = await closedPort();
    const unreachable = await startHarness({
      providers: () => ({ openai: { apiKey: OPENAI_KEY, baseURL: `http://127.0.0.1:${port}/v1` } }),
    });
    try {
      const error = await failure(
        unreachable.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "hi" }),
      );
      expect(error.code).toBe("AGENT_UNAVAILABLE");
      expect(error.message).toMatch(/could not be reached/);
    } finally {
      await unreachable.close();
    }
  });
});

describe("timeouts", () => {
  it.each(["openai", "anthropic"] as const)(
    "%s: a reply slower than PROVIDER_TIMEOUT_MS is AGENT_UNAVAILABLE and the upstream request is abandoned",
    async (provider) => {
      const a = agentOf(provider);
      fake(provider).reply("too late", { delayMs: 5_000 });
      const next = fake(provider).nextRequest();
      const error = await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
      expect(error.code).toBe("AGENT_UNAVAILABLE");
      expect(error.message).toMatch(/did not complete the reply within 600 ms/);
      expect(isLastingFailure(error.code)).toBe(false);
      expect(await (await next).outcome).toBe("aborted");
      expect((await stored(a)).turns).toEqual([]);
    },
  );

  it.each(["openai", "anthropic"] as const)(
    "%s: a stream with no answer within PROVIDER_FIRST_TOKEN_TIMEOUT_MS is AGENT_UNAVAILABLE, before any event",
    async (provider) => {
      const a = agentOf(provider);
      fake(provider).reply("too late", { delayMs: 5_000 });
      const next = fake(provider).nextRequest();
      const { events, error } = await drain(
        h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "hi" }),
      );
      expect(events).toEqual([]);
      expect(error?.code).toBe("AGENT_UNAVAILABLE");
      expect(error?.message).toMatch(/did not start answering within 250 ms/);
      expect(await (await next).outcome).toBe("aborted");
    },
  );

  it("a stream that opens but shows no text in time is cut by the first-token timeout", async () => {
    const a = agentOf("openai");
    h.openai.reply("slow words", { chunkDelayMs: 400 });
    const next = h.openai.nextRequest();
    const { events, error } = await drain(
      h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "hi" }),
    );
    expect(events.map((e) => e.case)).toEqual(["started"]);
    expect(error?.code).toBe("AGENT_UNAVAILABLE");
    expect(error?.message).toMatch(/did not start answering/);
    expect(await (await next).outcome).toBe("aborted");
    const { turns, calls } = await stored(a);
    expect(turns).toEqual([]);
    expect(calls.map((c) => [c.outcome, c.errorCode])).toEqual([["failed", "AGENT_UNAVAILABLE"]]);
  });

  it("a stream whose text keeps coming past PROVIDER_TIMEOUT_MS is AGENT_UNAVAILABLE and stores nothing", async () => {
    // Its own service, whose first-token limit cannot interfere however slow the machine.
    const slow = await startHarness({
      providers: (urls) => ({
        anthropic: { apiKey: ANTHROPIC_KEY, baseURL: urls.anthropic },
        timeoutMs: 600,
        firstTokenTimeoutMs: 10_000,
      }),
    });
    onTestFinished(() => slow.close());
    const a = agentOf("anthropic");
    slow.anthropic.reply("one two three four five six seven eight nine ten eleven twelve", {
      chunkDelayMs: 60,
    });
    const next = slow.anthropic.nextRequest();
    const { events, error } = await drain(
      slow.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "hi" }),
    );
    expect(events[0]?.case).toBe("started");
    expect(events.filter((e) => e.case === "delta").length).toBeGreaterThan(0);
    expect(events.some((e) => e.case === "completed")).toBe(false);
    expect(error?.code).toBe("AGENT_UNAVAILABLE");
    expect(error?.message).toMatch(/did not complete the reply within 600 ms/);
    expect(await (await next).outcome).toBe("aborted");
    expect((await slow.client.listTurns({ accountId: ACCOUNT, agentId: a.id })).turns).toEqual([]);
  });
});

describe("cancellation and broken connections", () => {
  // Generous limits: nothing here may race the timeouts, however slow the machine.
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  const fake = (provider: Provider) => (provider === "openai" ? h.openai : h.anthropic);
  const stored = async (a: Agent) => ({
    turns: (await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id })).turns,
    calls: await h.conversation.store.listCalls(ACCOUNT, a.id),
  });

  it.each(["openai", "anthropic"] as const)(
    "%s: when the caller goes away the upstream request is aborted and nothing is stored",
    async (provider) => {
      const a = agentOf(provider);
      fake(provider).reply("never read", { delayMs: 5_000 });
      const next = fake(provider).nextRequest();
      const controller = new AbortController();
      const pending = h.client.sendMessage(
        { accountId: ACCOUNT, agent: a, text: "hi" },
        { signal: controller.signal },
      );
      const request = await next;
      controller.abort();
      await expect(pending).rejects.toThrow();
      expect(await request.outcome).toBe("aborted");

      fake(provider).reply("one two three four five six", { chunkDelayMs: 100 });
      const streamed = fake(provider).nextRequest();
      const streamController = new AbortController();
      const seen: string[] = [];
      await expect(async () => {
        for await (const response of h.client.streamMessage(
          { accountId: ACCOUNT, agent: a, text: "hi" },
          { signal: streamController.signal },
        )) {
          seen.push(response.event.case ?? "");
          if (response.event.case === "delta") streamController.abort();
        }
      }).rejects.toThrow();
      expect(seen).toEqual(["started", "delta"]);
      expect(await (await streamed).outcome).toBe("aborted");

      await waitFor(async () => (await stored(a)).calls.length === 2);
      const { turns, calls } = await stored(a);
      expect(turns).toEqual([]);
      expect(calls.map((c) => [c.outcome, c.stream])).toEqual([
        ["cancelled", false],
        ["cancelled", true],
      ]);
    },
  );

  it.each(["openai", "anthropic"] as const)(
    "%s: a stream cut in the middle ends with AGENT_UNAVAILABLE and stores nothing",
    async (provider) => {
      const a = agentOf(provider);
      fake(provider).reply("one two three four", { cutAfter: 2 });
      const next = fake(provider).nextRequest();
      const { events, error } = await drain(
        h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "hi" }),
      );
      expect(events.map((e) => e.case)).toEqual(["started", "delta", "delta"]);
      expect(error?.code).toBe("AGENT_UNAVAILABLE");
      expect(error?.message).toMatch(/ended before the reply was complete/);
      expect(await (await next).outcome).toBe("cut");

      fake(provider).cutAfter(0);
      const whole = await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
      expect(whole.code).toBe("AGENT_UNAVAILABLE");

      const { turns, calls } = await stored(a);
      expect(turns).toEqual([]);
      expect(calls.map((c) => [c.outcome, c.errorCode])).toEqual([
        ["failed", "AGENT_UNAVAILABLE"],
        ["failed", "AGENT_UNAVAILABLE"],
      ]);

      // The conversation goes on from where it was: the cut reply is not part of it.
      await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "again" });
      const body = fake(provider).lastRequest.body as { messages: unknown[] };
      expect(body.messages.length).toBe(provider === "openai" ? 2 : 1);
    },
  );
});

describe("provider resolution", () => {
  it("with no provider configured, uses the local model; a hosted provider it names fails saying what to set", async () => {
    // A model path that does not exist keeps this test offline: the local model's own tests use the real one.
    const bare = await startHarness({
      providers: () => ({ local: { modelPath: "/nonexistent/model.gguf" } }),
    });
    try {
      const a = agent();
      const error = await failure(bare.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
      expect(error.code).toBe("MODEL_ERROR");
      expect(error.message).toMatch(/^LOCAL_MODEL_PATH is \/nonexistent\/model\.gguf/);
      for (const variable of [
        "DEFAULT_MODEL_PROVIDER",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
      ]) {
        expect(error.message).toContain(variable);
      }
      const calls = await bare.conversation.store.listCalls(ACCOUNT, a.id);
      expect(calls.map((c) => [c.provider, c.outcome, c.errorCode])).toEqual([
        ["local", "failed", "MODEL_ERROR"],
      ]);

      const named = await failure(
        bare.client.sendMessage({
          accountId: ACCOUNT,
          agent: agent({ modelProvider: "anthropic" }),
          text: "hi",
        }),
      );
      expect(named.code).toBe("MODEL_ERROR");
      expect(named.message).toContain("ANTHROPIC_API_KEY");
    } finally {
      await bare.close();
    }
  });

  it("uses whichever provider has a key when DEFAULT_MODEL_PROVIDER is unset", async () => {
    const onlyAnthropic = await startHarness({
      providers: (urls) => ({ anthropic: { apiKey: ANTHROPIC_KEY, baseURL: urls.anthropic } }),
    });
    try {
      const { reply } = await onlyAnthropic.client.sendMessage({
        accountId: ACCOUNT,
        agent: agent(),
        text: "hi",
      });
      expect(reply?.modelProvider).toBe("anthropic");
      expect(onlyAnthropic.anthropic.requests.length).toBe(1);
      const error = await failure(
        onlyAnthropic.client.sendMessage({
          accountId: ACCOUNT,
          agent: agent({ modelProvider: "openai" }),
          text: "hi",
        }),
      );
      expect(error.code).toBe("MODEL_ERROR");
      expect(error.message).toContain("OPENAI_API_KEY");
    } finally {
      await onlyAnthropic.close();
    }
  });

  it("serves an OpenAI-compatible server given only OPENAI_BASE_URL, with the configured default model", async () => {
    const local = await startHarness({
      providers: (urls) => ({ openai: { baseURL: urls.openai, model: "llama3.2" } }),
    });
    try {
      // The fake demands a key, as OpenAI does; a keyless server is what OPENAI_BASE_URL alone is for.
      local.openai.reset();
      const error = await failure(
        local.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "hi" }),
      );
      expect(error.code).toBe("MODEL_ERROR");
      expect(local.openai.lastRequest.body.model).toBe("llama3.2");
      expect(local.openai.lastRequest.headers.authorization).toBe("Bearer unused");
    } finally {
      await local.close();
    }
  });

  it("lists the providers it serves: hosted ones take any model, local only the one it runs", async () => {
    const listed = await h.client.listProviders({});
    expect(listed.defaultProvider).toBe("openai");
    expect(listed.providers.map((p) => [p.name, p.defaultModel, p.models])).toEqual([
      ["openai", "gpt-4o-mini", []],
      ["anthropic", "claude-haiku-5-5", []],
      ["local", "SmolLM2-135M-Instruct", ["SmolLM2-135M-Instruct"]],
    ]);
    const bare = await startHarness({
      providers: () => ({ local: { modelPath: "/models/tiny-chat.Q8_0.gguf" } }),
    });
    try {
      const only = await bare.client.listProviders({});
      expect(only.defaultProvider).toBe("local");
      expect(only.providers.map((p) => [p.name, p.defaultModel, p.models])).toEqual([
        ["local", "tiny-chat.Q8_0", ["tiny-chat.Q8_0"]],
      ]);
    } finally {
      await bare.close();
    }
  });

  it("serves no local model with LOCAL_ENABLED=false, and says why to an agent that names it", async () => {
    const hosted = await startHarness({
      providers: (urls) => ({
        openai: { apiKey: OPENAI_KEY, baseURL: urls.openai },
        local: { enabled: false },
      }),
    });
    try {
      const listed = await hosted.client.listProviders({});
      expect(listed.providers.map((p) => p.name)).toEqual(["openai"]);
      expect(listed.defaultProvider).toBe("openai");
      const error = await failure(
        hosted.client.sendMessage({
          accountId: ACCOUNT,
          agent: agent({ modelProvider: "local" }),
          text: "hi",
        }),
      );
      expect(error.code).toBe("MODEL_ERROR");
      expect(error.message).toContain("LOCAL_ENABLED=false");
    } finally {
      await hosted.close();
    }
  });

  it("refuses LOCAL_ENABLED=false at start when it leaves no provider, or when the default is local", () => {
    expect(() => loadConversationConfig({ LOCAL_ENABLED: "false" })).toThrow(
      /LOCAL_ENABLED: false leaves no/,
    );
    expect(() =>
      loadConversationConfig({
        LOCAL_ENABLED: "false",
        OPENAI_API_KEY: "k",
        DEFAULT_MODEL_PROVIDER: "local",
      }),
    ).toThrow(/DEFAULT_MODEL_PROVIDER: is local/);
    expect(loadConversationConfig({ LOCAL_ENABLED: "0", OPENAI_API_KEY: "k" }).providers.local?.enabled).toBe(
      false,
    );
    expect(loadConversationConfig({}).providers.local?.enabled).toBe(true);
  });

  it("reports an unknown provider as unsupported", async () => {
    const unknown = await failure(
      h.client.sendMessage({ accountId: ACCOUNT, agent: agent({ modelProvider: "cohere" }), text: "hi" }),
    );
    expect(unknown.code).toBe("MODEL_ERROR");
    expect(unknown.message).toMatch(/"cohere" is not supported/);
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

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 2_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
