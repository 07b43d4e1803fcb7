import { Catalogue } from "@agentry/plugin-kit";
import { builtinPlugins } from "@agentry/plugins";
import { PluginService, type SendMessageResponse, type StreamMessageResponse } from "@agentry/proto";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LONG_ANSWER, testModelPath } from "./fixtures/local-model.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

/**
 * The conversation service with no hosted provider configured: agents that name no provider are answered by
 * the real local model.
 */
let h: Harness;
beforeAll(async () => {
  const modelPath = await testModelPath();
  h = await startHarness({
    // The built-in plugins; the calculator's tool runs offline.
    plugins: {
      catalogue: new Catalogue(builtinPlugins),
      service: createClient(
        PluginService,
        createRouterTransport(() => {}),
      ),
      fetch: () => Promise.reject(new Error("no network in tests")),
    },
    providers: () => ({
      local: { modelPath, threads: 1, maxQueue: 1, gpu: false, contextSize: 2048, maxTokens: 6 },
      timeoutMs: 60_000,
      firstTokenTimeoutMs: 30_000,
    }),
  });
}, 120_000);
afterAll(() => h.close());

async function drain(stream: AsyncIterable<StreamMessageResponse>) {
  const events: { event: StreamMessageResponse["event"]; at: number }[] = [];
  try {
    for await (const response of stream) events.push({ event: response.event, at: performance.now() });
    return { events, error: undefined };
  } catch (error) {
    return { events, error: await failure(Promise.reject(error)) };
  }
}

describe("the local model as the zero-configuration default", () => {
  it("answers an agent that names no provider", async () => {
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: agent({ settings: { maxTokens: 12 } }),
      text: "Hello! Who are you?",
    });
    expect(reply?.modelProvider).toBe("local");
    expect(reply?.model).toBe("SmolLM2-135M-Instruct.Q4_1");
    expect(reply?.text.trim().length).toBeGreaterThan(0);
    expect(reply?.usage?.outputTokens).toBeGreaterThan(0);
    expect(reply?.usage?.outputTokens).toBeLessThanOrEqual(12);
    expect(reply?.usage?.inputTokens).toBeGreaterThan(10);
    expect(reply?.usage?.totalTokens).toBe(
      (reply?.usage?.inputTokens ?? 0) + (reply?.usage?.outputTokens ?? 0),
    );
  });

  it("bounds the reply of an agent that sets no maxTokens by LOCAL_MAX_TOKENS", async () => {
    const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: LONG_ANSWER });
    expect(reply?.modelProvider).toBe("local");
    expect(reply?.usage?.outputTokens).toBe(6);
    expect(reply?.finishReason).toBe("length");
  });

  it("streams the reply: started, the deltas as they come, completed with their concatenation", async () => {
    const a = agent({ settings: { maxTokens: 16 } });
    const { events, error } = await drain(
      h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: LONG_ANSWER, userId: "s" }),
    );
    expect(error).toBeUndefined();
    const cases = events.map((e) => e.event.case);
    expect(cases[0]).toBe("started");
    expect(cases.at(-1)).toBe("completed");
    const deltas = events.filter((e) => e.event.case === "delta");
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.at(-1)!.at - deltas[0]!.at).toBeGreaterThan(50);
    const completed = events.at(-1)!.event;
    if (completed.case !== "completed") throw new Error("no completed event");
    expect(completed.value.text).toBe(
      deltas.map((d) => (d.event.case === "delta" ? d.event.value.text : "")).join(""),
    );
    expect(completed.value.usage?.outputTokens).toBeGreaterThanOrEqual(deltas.length);
    const { turns } = await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id, userId: "s" });
    expect(turns.map((t) => t.text)).toEqual([LONG_ANSWER, completed.value.text]);
  });

  it("keeps the conversation's context: earlier turns are in the prompt", async () => {
    const a = agent({ settings: { temperature: 0, maxTokens: 24 } });
    const first = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "Hi! My name is Zoe and my favourite colour is green.",
      userId: "zoe",
    });
    const second = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "What is my name?",
      userId: "zoe",
    });
    const stranger = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "What is my name?",
      userId: "someone-else",
    });
    const firstUsage = first.reply!.usage!;
    // The second prompt holds the first message and its reply before the question.
    expect(second.reply!.usage!.inputTokens).toBeGreaterThan(
      firstUsage.inputTokens + firstUsage.outputTokens,
    );
    expect(stranger.reply!.usage!.inputTokens).toBeLessThan(firstUsage.inputTokens);
    // And the model uses it (greedy decoding, so the same answer every run).
    expect(second.reply!.text).toContain("Zoe");
    expect(stranger.reply!.text).not.toContain("Zoe");
  });

  it.each([false, true])(
    "calls a plugin's tool when toolChoice requires it, then answers in text (stream: %s)",
    async (stream) => {
      const a = agent({
        plugins: ["calculator"],
        settings: { toolChoice: "required", maxTokens: 24 },
      });
      const input = { accountId: ACCOUNT, agent: a, text: "What is 1234 * 5678?", userId: `tools-${stream}` };
      let reply: SendMessageResponse["reply"];
      if (stream) {
        const { events, error } = await drain(h.client.streamMessage(input));
        expect(error).toBeUndefined();
        const cases = events.map((e) => e.event.case);
        expect(cases.slice(0, 3)).toEqual(["started", "toolCall", "toolResult"]);
        expect(cases.at(-1)).toBe("completed");
        const completed = events.at(-1)!.event;
        if (completed.case !== "completed") throw new Error("no completed event");
        reply = completed.value;
      } else {
        reply = (await h.client.sendMessage(input)).reply;
      }
      // The real model made the call: the grammar admits only the offered tool and arguments of its schema.
      expect(reply?.toolCalls).toHaveLength(1);
      const [call] = reply!.toolCalls;
      expect(call!.name).toBe("calculator__calculate");
      expect(typeof (JSON.parse(call!.argumentsJson) as { expression?: unknown }).expression).toBe("string");
      // What the expression was is the model's choice; its outcome went back to the model, which then answered.
      expect(call!.ok ? call!.outputJson : call!.error).not.toBe("");
      expect(reply!.text.trim().length).toBeGreaterThan(0);
      expect(reply!.usage!.outputTokens).toBeGreaterThan(reply!.text.length > 0 ? 1 : 0);
    },
    120_000,
  );

  it("queues concurrent messages, one generation at a time in arrival order", async () => {
    const a = agent({ settings: { maxTokens: 16 } });
    const stream = (userId: string) =>
      drain(h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: LONG_ANSWER, userId }));
    const [one, two] = await Promise.all([stream("q1"), stream("q2")]);
    expect(one.error).toBeUndefined();
    expect(two.error).toBeUndefined();
    const deltaTimes = (run: typeof one) =>
      run.events.filter((e) => e.event.case === "delta").map((e) => e.at);
    const [early, late] = deltaTimes(one)[0]! < deltaTimes(two)[0]! ? [one, two] : [two, one];
    // The later one produced nothing until the earlier one had produced everything.
    expect(deltaTimes(late)[0]!).toBeGreaterThan(deltaTimes(early).at(-1)!);
  });

  it("stops generating when the caller goes away, and records the call as cancelled", async () => {
    const a = agent({ settings: { maxTokens: 2000 } });
    const controller = new AbortController();
    const seen: string[] = [];
    const startedAt = performance.now();
    await expect(async () => {
      for await (const response of h.client.streamMessage(
        { accountId: ACCOUNT, agent: a, text: LONG_ANSWER },
        { signal: controller.signal },
      )) {
        seen.push(response.event.case ?? "");
        if (seen.filter((c) => c === "delta").length === 3) controller.abort();
      }
    }).rejects.toThrow();
    expect(seen).toEqual(["started", "delta", "delta", "delta"]);

    // With a queue of one, the next message waits for the generation before it: it is answered at once only
    // because the 2000-token generation stopped.
    const next = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: agent({ settings: { maxTokens: 4 } }),
      text: "Hi",
    });
    expect(next.reply?.usage?.outputTokens).toBeLessThanOrEqual(4);
    expect(performance.now() - startedAt).toBeLessThan(15_000);
    const calls = await h.conversation.store.listCalls(ACCOUNT, a.id);
    expect(calls.map((c) => [c.outcome, c.provider])).toEqual([["cancelled", "local"]]);
  });

  it("refuses with AGENT_UNAVAILABLE and Retry-After when the queue is full", async () => {
    const a = agent({ settings: { maxTokens: 24 } });
    const send = (userId: string) =>
      h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: LONG_ANSWER, userId }).then(
        (response) => ({ reply: response.reply, error: undefined }),
        async (error: unknown) => ({ reply: undefined, error: await failure(Promise.reject(error)) }),
      );
    // One generates, one waits (a queue of one), the third finds it full.
    const results = await Promise.all([send("f1"), send("f2"), send("f3")]);
    const refused = results.filter((r) => r.error);
    expect(results.filter((r) => r.reply).length).toBe(2);
    expect(refused.length).toBe(1);
    expect(refused[0]!.error!.code).toBe("AGENT_UNAVAILABLE");
    expect(refused[0]!.error!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });
});

describe("a local model that cannot be had", () => {
  it("fails with MODEL_ERROR that names LOCAL_MODEL_PATH and the hosted alternatives", async () => {
    const missing = await startHarness({
      providers: () => ({ local: { modelPath: "/nonexistent/model.gguf" } }),
    });
    try {
      const error = await failure(
        missing.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "hi" }),
      );
      expect(error.code).toBe("MODEL_ERROR");
      expect(error.message).toContain("LOCAL_MODEL_PATH is /nonexistent/model.gguf, but it does not exist");
      for (const variable of [
        "DEFAULT_MODEL_PROVIDER",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
      ]) {
        expect(error.message).toContain(variable);
      }
      const streamed = await drain(
        missing.client.streamMessage({ accountId: ACCOUNT, agent: agent(), text: "hi" }),
      );
      expect(streamed.events).toEqual([]);
      expect(streamed.error?.code).toBe("MODEL_ERROR");
    } finally {
      await missing.close();
    }
  });
});
