import { Catalogue, definePlugin, defineTool } from "@agentry/plugin-kit";
import { PluginService, type StreamMessageResponse } from "@agentry/proto";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { PluginRuntime } from "../src/index.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

/** What the test plugins saw, for the tests to assert on. */
const seen = {
  secrets: [] as Record<string, string>[],
  revealed: [] as string[][],
  searches: [] as { accountId: string; agentId: string; query: string; limit: number }[],
  hangAborted: 0,
  waiting: undefined as (() => void) | undefined,
  waitAborted: undefined as Promise<void> | undefined,
};

const clock = definePlugin({
  name: "clock",
  version: "1.0.0",
  description: "The time.",
  config: z.object({ prefix: z.string().default("") }),
  secrets: ["CLOCK_TOKEN"],
  tools: [
    defineTool({
      name: "now",
      description: "The current time in a time zone.",
      input: z.object({ zone: z.string() }),
      async run({ zone }, context) {
        seen.secrets.push({ ...context.secrets });
        const config = context.config as { prefix: string };
        return { zone, time: `${config.prefix}${context.host.now().toISOString()}` };
      },
    }),
  ],
});

const lab = definePlugin({
  name: "lab",
  version: "1.0.0",
  description: "Tools that misbehave on purpose.",
  config: z.object({}),
  secrets: ["LAB_KEY"],
  tools: [
    defineTool({
      name: "add",
      description: "Adds two numbers.",
      input: z.object({ a: z.number(), b: z.number() }),
      async run({ a, b }) {
        return a + b;
      },
    }),
    defineTool({
      name: "hang",
      description: "Never answers.",
      input: z.object({}),
      timeoutMs: 150,
      run(_, context) {
        context.signal.addEventListener("abort", () => {
          seen.hangAborted += 1;
        });
        return new Promise(() => {});
      },
    }),
    defineTool({
      name: "boom",
      description: "Throws.",
      input: z.object({}),
      async run(_, context) {
        throw new Error(`the lab exploded (key ${context.secrets.LAB_KEY})`);
      },
    }),
    defineTool({
      name: "leak",
      description: "Answers with its secret.",
      input: z.object({}),
      run: async (_, context) => ({ key: context.secrets.LAB_KEY, note: "kept" }),
    }),
    defineTool({
      name: "wait",
      description: "Answers when its signal aborts.",
      input: z.object({}),
      run(_, context) {
        seen.waitAborted = new Promise<void>((resolve) => {
          context.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        seen.waiting?.();
        return new Promise(() => {});
      },
    }),
    defineTool({
      name: "search",
      description: "Searches the agent's knowledge.",
      input: z.object({ query: z.string() }),
      async run({ query }, context) {
        return context.host.searchKnowledge(query, 3, context.signal);
      },
    }),
  ],
});

const SECRETS: Record<string, string> = {
  CLOCK_TOKEN: "clock-secret-value",
  LAB_KEY: "lab-secret-value-123",
  OTHER: "never-revealed",
};

const pluginService = createClient(
  PluginService,
  createRouterTransport(({ service }) => {
    service(PluginService, {
      revealSecrets(request) {
        seen.revealed.push([...request.names]);
        return {
          values: Object.fromEntries(request.names.filter((n) => n in SECRETS).map((n) => [n, SECRETS[n]!])),
        };
      },
      searchKnowledge(request) {
        const { accountId, agentId, query, limit } = request;
        seen.searches.push({ accountId, agentId, query, limit });
        return { hits: [{ index: 1, text: "Ada wrote the first program." }] };
      },
    });
  }),
);

const runtime: PluginRuntime = {
  catalogue: new Catalogue([clock, lab]),
  service: pluginService,
  fetch: () => Promise.reject(new Error("no network in tests")),
  now: () => new Date("2026-06-01T12:00:00.000Z"),
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ plugins: runtime });
});
afterAll(() => h.close());
beforeEach(() => {
  h.openai.reset();
  h.anthropic.reset();
  seen.secrets.length = 0;
  seen.revealed.length = 0;
  seen.searches.length = 0;
  seen.hangAborted = 0;
});

type Event = StreamMessageResponse["event"];

async function collect(stream: AsyncIterable<StreamMessageResponse>): Promise<Event[]> {
  const all: Event[] = [];
  for await (const response of stream) all.push(response.event);
  return all;
}

/** Sends a message as a stream or not; the reply, and the stream's events when streamed. */
async function send(
  stream: boolean,
  a: ReturnType<typeof agent>,
  text: string,
): Promise<{ reply: NonNullable<Extract<Event, { case: "completed" }>["value"]>; events: Event[] }> {
  if (!stream) {
    const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text, userId: "u1" });
    return { reply: reply!, events: [] };
  }
  const events = await collect(h.client.streamMessage({ accountId: ACCOUNT, agent: a, text, userId: "u1" }));
  const last = events.at(-1);
  if (last?.case !== "completed") throw new Error(`the stream ended with ${last?.case}`);
  return { reply: last.value, events };
}

const fakeOf = (provider: "openai" | "anthropic") => (provider === "openai" ? h.openai : h.anthropic);

/** The tool results the provider was sent in its last request, as [callId, content, isError]. */
function sentResults(provider: "openai" | "anthropic"): [string, string, boolean][] {
  if (provider === "openai") {
    return h.openai.lastRequest.body.messages
      .filter((m) => m.role === "tool")
      .map((m) => [m.tool_call_id!, String(m.content), String(m.content).startsWith("Error: ")]);
  }
  const last = h.anthropic.lastRequest.body.messages.at(-1)!;
  if (typeof last.content === "string") return [];
  return last.content
    .filter((block) => block.type === "tool_result")
    .map((block) => [block.tool_use_id!, String(block.content), block.is_error === true]);
}

const modes = [
  ["openai", false],
  ["openai", true],
  ["anthropic", false],
  ["anthropic", true],
] as const;

describe("a turn with tools", () => {
  it.each(modes)(
    "%s (stream: %s): one call, its result to the model, then text",
    async (provider, stream) => {
      const fake = fakeOf(provider);
      const a = agent({ modelProvider: provider, plugins: [{ name: "clock", config: { prefix: "at " } }] });
      fake.callTools([{ id: "call_1", name: "clock__now", arguments: { zone: "Europe/Paris" } }], {
        usage: { input: 30, output: 5 },
      });
      fake.answer({ chunks: ["It is ", "noon."], usage: { input: 50, output: 3 } });

      const { reply, events } = await send(stream, a, "What time is it in Paris?");

      const output = '{"zone":"Europe/Paris","time":"at 2026-06-01T12:00:00.000Z"}';
      expect(reply.text).toBe("It is noon.");
      expect(reply.usage).toMatchObject({ inputTokens: 80, outputTokens: 8, totalTokens: 88 });
      expect(
        reply.toolCalls.map(({ id, name, argumentsJson, ok, outputJson, error }) => ({
          id,
          name,
          argumentsJson,
          ok,
          outputJson,
          error,
        })),
      ).toEqual([
        {
          id: "call_1",
          name: "clock__now",
          argumentsJson: '{"zone":"Europe/Paris"}',
          ok: true,
          outputJson: output,
          error: "",
        },
      ]);
      // The model was offered the tool, then given its result.
      expect(fake.requests).toHaveLength(2);
      const offered = (fake.requests[0]!.body as { tools: { name?: string; function?: { name: string } }[] })
        .tools;
      expect(offered.map((tool) => tool.name ?? tool.function?.name)).toEqual(["clock__now"]);
      expect(sentResults(provider)).toEqual([["call_1", output, false]]);
      // Only the secrets the active plugins declare are revealed, and each plugin sees its own.
      expect(seen.revealed).toEqual([["CLOCK_TOKEN"]]);
      expect(seen.secrets).toEqual([{ CLOCK_TOKEN: "clock-secret-value" }]);

      if (stream) {
        expect(events.map((e) => e.case)).toEqual([
          "started",
          "toolCall",
          "toolResult",
          "delta",
          "delta",
          "completed",
        ]);
        const call = events[1]!;
        const result = events[2]!;
        if (call.case !== "toolCall" || result.case !== "toolResult") throw new Error("unexpected events");
        expect(call.value).toMatchObject({
          id: "call_1",
          name: "clock__now",
          argumentsJson: '{"zone":"Europe/Paris"}',
        });
        expect(result.value).toMatchObject({ id: "call_1", ok: true, outputJson: output });
      }

      // The history keeps the calls with the reply.
      const { messages } = await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id });
      expect(messages[0]!.id).toBe(reply.id);
      expect(messages[0]!.toolCalls.map((c) => [c.id, c.ok, c.outputJson])).toEqual([
        ["call_1", true, output],
      ]);
      expect(messages[1]!.toolCalls).toEqual([]);
    },
  );

  it.each(modes)(
    "%s (stream: %s): parallel calls run together, each result reported",
    async (provider, stream) => {
      const fake = fakeOf(provider);
      const a = agent({ modelProvider: provider, plugins: ["clock", "lab"] });
      fake.callTools(
        [
          { id: "call_a", name: "lab__add", arguments: { a: 2, b: 3 } },
          { id: "call_b", name: "clock__now", arguments: { zone: "UTC" } },
          { id: "call_c", name: "lab__search", arguments: { query: "program" } },
        ],
        { text: "Checking. ", usage: { input: 10, output: 2 } },
      );
      fake.answer({ text: "Done.", usage: { input: 20, output: 1 } });

      const { reply, events } = await send(stream, a, "Add and tell the time");

      expect(reply.text).toBe("Checking. Done.");
      expect(reply.usage).toMatchObject({ inputTokens: 30, outputTokens: 3, totalTokens: 33 });
      expect(reply.toolCalls.map((c) => [c.id, c.name, c.ok])).toEqual([
        ["call_a", "lab__add", true],
        ["call_b", "clock__now", true],
        ["call_c", "lab__search", true],
      ]);
      expect(reply.toolCalls[0]!.outputJson).toBe("5");
      expect(JSON.parse(reply.toolCalls[2]!.outputJson)).toEqual([
        { index: 1, text: "Ada wrote the first program." },
      ]);
      expect(seen.searches).toEqual([{ accountId: ACCOUNT, agentId: a.id, query: "program", limit: 3 }]);
      expect(seen.revealed).toEqual([["CLOCK_TOKEN", "LAB_KEY"]]);
      expect(sentResults(provider).map(([id, , isError]) => [id, isError])).toEqual([
        ["call_a", false],
        ["call_b", false],
        ["call_c", false],
      ]);
      if (stream) {
        const cases = events.map((e) => e.case);
        expect(cases.slice(0, 5)).toEqual(["started", "delta", "toolCall", "toolCall", "toolCall"]);
        expect(cases.slice(5, 8).sort()).toEqual(["toolResult", "toolResult", "toolResult"]);
        expect(cases.slice(8)).toEqual(["delta", "completed"]);
      }
    },
  );

  it.each([false, true])("ends in text after maxToolSteps rounds (stream: %s)", async (stream) => {
    const a = agent({ modelProvider: "openai", plugins: ["lab"], settings: { maxToolSteps: 2 } });
    h.openai.callTools([{ id: "c1", name: "lab__add", arguments: { a: 1, b: 1 } }]);
    h.openai.callTools([{ id: "c2", name: "lab__add", arguments: { a: 2, b: 2 } }]);
    // Told to call no tool, a model may still try: the call is not run and the turn ends.
    h.openai.callTools([{ id: "c3", name: "lab__add", arguments: { a: 3, b: 3 } }], { text: "Enough." });

    const { reply } = await send(stream, a, "Keep adding");

    expect(h.openai.requests.map((r) => r.body.tool_choice)).toEqual(["auto", "auto", "none"]);
    expect(reply.toolCalls.map((c) => c.id)).toEqual(["c1", "c2"]);
    expect(reply.text).toBe("Enough.");
  });

  it.each(modes)(
    "%s (stream: %s): toolChoice required makes the first round call a tool, and later rounds free",
    async (provider, stream) => {
      const fake = fakeOf(provider);
      const a = agent({ modelProvider: provider, plugins: ["lab"], settings: { toolChoice: "required" } });
      fake.callTools([{ id: "r1", name: "lab__add", arguments: { a: 1, b: 2 } }]);
      fake.answer({ chunks: ["Three."] });

      const { reply } = await send(stream, a, "Add one and two");

      expect(reply.toolCalls.map((c) => c.id)).toEqual(["r1"]);
      const choices = fake.requests.map((r) => (r.body as { tool_choice?: unknown }).tool_choice);
      expect(choices).toEqual(
        provider === "openai" ? ["required", "auto"] : [{ type: "any" }, { type: "auto" }],
      );
    },
  );

  it("refuses a toolChoice other than auto or required", async () => {
    const error = await failure(
      h.client.sendMessage({
        accountId: ACCOUNT,
        agent: agent({ modelProvider: "openai", plugins: ["lab"], settings: { toolChoice: "always" } }),
        text: "Hi",
      }),
    );
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message).toContain("settings.toolChoice must be one of auto, required");
    expect(h.openai.requests).toHaveLength(0);
  });

  it("offers no tools with maxToolSteps 0, or to an agent whose plugins are disabled or not installed", async () => {
    for (const spec of [
      { plugins: ["lab"], settings: { maxToolSteps: 0 } },
      { plugins: [{ name: "lab", enabled: false }, "gone"] },
      {},
    ]) {
      h.openai.reply("Plain.");
      const { reply } = await send(false, agent({ modelProvider: "openai", ...spec }), "Hi");
      expect(reply.toolCalls).toEqual([]);
      expect(h.openai.lastRequest.body).not.toHaveProperty("tools");
    }
    expect(seen.revealed).toEqual([]);
  });

  it.each(modes)(
    "%s (stream: %s): a hanging tool hits its deadline and the turn completes",
    async (provider, stream) => {
      const fake = fakeOf(provider);
      const a = agent({ modelProvider: provider, plugins: ["lab"] });
      fake.callTools([
        { id: "h1", name: "lab__hang", arguments: {} },
        { id: "h2", name: "lab__add", arguments: { a: 1, b: 2 } },
      ]);
      fake.reply("The first tool is stuck; 1 + 2 = 3.");
      const started = Date.now();

      const { reply } = await send(stream, a, "Try both");

      expect(Date.now() - started).toBeLessThan(3_000);
      expect(reply.text).toBe("The first tool is stuck; 1 + 2 = 3.");
      expect(reply.toolCalls.map((c) => [c.id, c.ok, c.error])).toEqual([
        ["h1", false, "The tool did not answer within 150 ms."],
        ["h2", true, ""],
      ]);
      expect(seen.hangAborted).toBe(1);
      const [hung, added] = sentResults(provider);
      expect(hung).toEqual(["h1", expect.stringContaining("did not answer within 150 ms"), true]);
      expect(added).toEqual(["h2", "3", false]);
    },
  );

  it.each(modes)(
    "%s (stream: %s): a throwing tool is reported to the model, secrets masked",
    async (provider, stream) => {
      const fake = fakeOf(provider);
      const a = agent({ modelProvider: provider, plugins: ["lab"] });
      fake.callTools([
        { id: "b1", name: "lab__boom", arguments: {} },
        { id: "b2", name: "lab__missing", arguments: {} },
        { id: "b3", name: "lab__add", arguments: { a: "one" } },
        { id: "b4", name: "lab__leak", arguments: {} },
      ]);
      fake.reply("Those failed.");

      const { reply } = await send(stream, a, "Break things");

      expect(reply.text).toBe("Those failed.");
      const errors = reply.toolCalls.map((c) => [c.ok, c.error]);
      expect(errors[0]).toEqual([false, "the lab exploded (key [redacted])"]);
      expect(errors[1]![1]).toMatch(/^No tool is named "lab__missing"; the tools are: lab__add, /);
      expect(errors[2]![1]).toMatch(/^invalid arguments: a: /);
      expect(reply.toolCalls[3]).toMatchObject({
        ok: true,
        outputJson: '{"key":"[redacted]","note":"kept"}',
      });
      expect(JSON.stringify(fake.lastRequest.body)).not.toContain(SECRETS.LAB_KEY);
      expect(sentResults(provider).map(([id, , isError]) => [id, isError])).toEqual([
        ["b1", true],
        ["b2", true],
        ["b3", true],
        ["b4", false],
      ]);
    },
  );

  it.each([false, true])(
    "a model that fails after a round fails the turn, its tokens so far recorded (stream: %s)",
    async (stream) => {
      const a = agent({ modelProvider: "openai", plugins: ["lab"] });
      h.openai.callTools([{ id: "f1", name: "lab__add", arguments: { a: 1, b: 1 } }], {
        usage: { input: 12, output: 4 },
      });
      h.openai.failWith(401);
      const message = { accountId: ACCOUNT, agent: a, text: "Add", userId: "u1" };
      await expect(
        stream ? collect(h.client.streamMessage(message)) : h.client.sendMessage(message),
      ).rejects.toThrow();
      const calls = await h.conversation.store.listCalls(ACCOUNT, a.id);
      expect(calls.map((c) => [c.outcome, c.errorCode, c.inputTokens, c.outputTokens])).toEqual([
        ["failed", "MODEL_ERROR", 12, 4],
      ]);
      const { messages } = await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id });
      expect(messages).toEqual([]);
    },
  );

  it("a client that disconnects aborts the running tool, and nothing is stored", async () => {
    const a = agent({ modelProvider: "openai", plugins: ["lab"] });
    h.openai.callTools([{ id: "w1", name: "lab__wait", arguments: {} }]);
    const waiting = new Promise<void>((resolve) => {
      seen.waiting = resolve;
    });
    const controller = new AbortController();
    const stream = h.client.streamMessage(
      { accountId: ACCOUNT, agent: a, text: "Wait for me", userId: "u1" },
      { signal: controller.signal },
    );
    const cases: string[] = [];
    const reading = (async () => {
      try {
        for await (const response of stream) cases.push(response.event.case ?? "");
      } catch {
        cases.push("error");
      }
    })();
    await waiting;
    controller.abort();
    await seen.waitAborted;
    await reading;
    expect(cases.slice(0, 2)).toEqual(["started", "toolCall"]);
    expect(cases).not.toContain("completed");
    // The model is not called again after the caller left.
    expect(h.openai.requests).toHaveLength(1);
    const { messages } = await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id });
    expect(messages).toEqual([]);
  });
});
