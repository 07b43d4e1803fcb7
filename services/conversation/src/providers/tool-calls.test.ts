import { afterEach, describe, expect, it } from "vitest";
import { type FakeProviderServer, startFakeAnthropic, startFakeOpenAI } from "../testing/index.js";
import { createAnthropicProvider } from "./anthropic.js";
import { createOpenAIProvider } from "./openai.js";
import type { ModelProvider, ProviderRequest, ProviderResult } from "./types.js";

const tools = [
  {
    name: "time__now",
    description: "The current time.",
    inputSchema: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
  },
  {
    name: "calculator__evaluate",
    description: "Exact arithmetic.",
    inputSchema: { type: "object", properties: { expression: { type: "string" } } },
  },
];

const question: ProviderRequest = {
  model: "m",
  system: "Be brief.",
  messages: [{ role: "user", text: "What time is it in Paris, and what is 2+2?" }],
  maxTokens: 50,
  tools,
};

const servers: FakeProviderServer<unknown>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

type Kind = "openai" | "anthropic";

async function setUp(kind: Kind) {
  if (kind === "openai") {
    const fake = await startFakeOpenAI();
    servers.push(fake as FakeProviderServer<unknown>);
    const provider = createOpenAIProvider({
      apiKey: "k",
      baseURL: fake.baseURL,
      defaultModel: "m",
      timeoutMs: 5_000,
    });
    return { fake, provider };
  }
  const fake = await startFakeAnthropic();
  servers.push(fake as FakeProviderServer<unknown>);
  const provider = createAnthropicProvider({
    apiKey: "k",
    baseURL: fake.baseURL,
    defaultModel: "m",
    timeoutMs: 5_000,
  });
  return { fake, provider };
}

async function answer(
  provider: ModelProvider,
  request: ProviderRequest,
  stream: boolean,
): Promise<ProviderResult> {
  if (!stream) return provider.complete(request, new AbortController().signal);
  let text = "";
  for await (const event of await provider.stream(request, new AbortController().signal)) {
    if (event.type === "delta") text += event.text;
    else if (event.type === "done") {
      const { type: _, ...done } = event;
      return { text, ...done };
    }
  }
  throw new Error("the stream ended without done");
}

describe.each(["openai", "anthropic"] as const)("%s tool calls", (kind) => {
  it.each([false, true])("sends the tools and reads parallel calls (stream: %s)", async (stream) => {
    const { fake, provider } = await setUp(kind);
    fake.callTools(
      [
        { id: "call_a", name: "time__now", arguments: { zone: "Europe/Paris" } },
        { id: "call_b", name: "calculator__evaluate", arguments: { expression: "2+2" } },
      ],
      { text: "Let me check. " },
    );
    const result = await answer(provider, question, stream);
    expect(result.text).toBe("Let me check. ");
    expect(result.toolCalls).toEqual([
      { id: "call_a", name: "time__now", arguments: '{"zone":"Europe/Paris"}' },
      { id: "call_b", name: "calculator__evaluate", arguments: '{"expression":"2+2"}' },
    ]);
    const body = fake.lastRequest.body as Record<string, unknown>;
    if (kind === "openai") {
      expect(body.tools).toEqual([
        {
          type: "function",
          function: {
            name: "time__now",
            description: "The current time.",
            parameters: tools[0]!.inputSchema,
          },
        },
        {
          type: "function",
          function: {
            name: "calculator__evaluate",
            description: "Exact arithmetic.",
            parameters: tools[1]!.inputSchema,
          },
        },
      ]);
      expect(body.tool_choice).toBe("auto");
    } else {
      expect(body.tools).toEqual([
        { name: "time__now", description: "The current time.", input_schema: tools[0]!.inputSchema },
        {
          name: "calculator__evaluate",
          description: "Exact arithmetic.",
          input_schema: tools[1]!.inputSchema,
        },
      ]);
      expect(body.tool_choice).toEqual({ type: "auto" });
    }
  });

  it.each([false, true])(
    "replays a round's calls and results in the provider's form (stream: %s)",
    async (stream) => {
      const { fake, provider } = await setUp(kind);
      fake.reply("It is noon; 2+2 is 4.");
      const result = await answer(
        provider,
        {
          ...question,
          toolChoice: "none",
          messages: [
            ...question.messages,
            {
              role: "assistant",
              text: "",
              toolCalls: [
                { id: "call_a", name: "time__now", arguments: '{"zone":"Europe/Paris"}' },
                { id: "call_b", name: "calculator__evaluate", arguments: '{"expression":"2+2"}' },
              ],
            },
            {
              role: "tool",
              results: [
                { callId: "call_a", name: "time__now", content: '"12:00"', isError: false },
                {
                  callId: "call_b",
                  name: "calculator__evaluate",
                  content: "division by zero",
                  isError: true,
                },
              ],
            },
          ],
        },
        stream,
      );
      expect(result).toMatchObject({ text: "It is noon; 2+2 is 4.", finishReason: "stop" });
      expect(result.toolCalls).toBeUndefined();
      const body = fake.lastRequest.body as { messages: unknown[]; tool_choice: unknown };
      if (kind === "openai") {
        expect(body.tool_choice).toBe("none");
        expect(body.messages.slice(2)).toEqual([
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_a",
                type: "function",
                function: { name: "time__now", arguments: '{"zone":"Europe/Paris"}' },
              },
              {
                id: "call_b",
                type: "function",
                function: { name: "calculator__evaluate", arguments: '{"expression":"2+2"}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_a", content: '"12:00"' },
          { role: "tool", tool_call_id: "call_b", content: "Error: division by zero" },
        ]);
      } else {
        expect(body.tool_choice).toEqual({ type: "none" });
        expect(body.messages.slice(1)).toEqual([
          {
            role: "assistant",
            content: [
              { type: "tool_use", id: "call_a", name: "time__now", input: { zone: "Europe/Paris" } },
              { type: "tool_use", id: "call_b", name: "calculator__evaluate", input: { expression: "2+2" } },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "call_a", content: '"12:00"' },
              { type: "tool_result", tool_use_id: "call_b", content: "division by zero", is_error: true },
            ],
          },
        ]);
      }
    },
  );

  it("announces each tool call as it begins, before the calls come whole with done", async () => {
    const { fake, provider } = await setUp(kind);
    fake.callTools([
      { id: "call_a", name: "time__now", arguments: { zone: "UTC" } },
      { id: "call_b", name: "time__now", arguments: { zone: "Asia/Tokyo" } },
    ]);
    const types: string[] = [];
    for await (const event of await provider.stream(question, new AbortController().signal))
      types.push(event.type);
    expect(types).toEqual(["tool", "tool", "done"]);
  });

  it("keeps arguments that are not JSON as the model wrote them, and no tools means no tool fields", async () => {
    const { fake, provider } = await setUp(kind);
    fake.callTools([{ id: "call_x", name: "time__now", arguments: kind === "openai" ? '{"zone": ' : {} }]);
    const result = await answer(provider, question, true);
    expect(result.toolCalls).toEqual([
      { id: "call_x", name: "time__now", arguments: kind === "openai" ? '{"zone": ' : "{}" },
    ]);
    fake.reply("plain");
    await answer(provider, { ...question, tools: [] }, false);
    expect(fake.lastRequest.body).not.toHaveProperty("tools");
    expect(fake.lastRequest.body).not.toHaveProperty("tool_choice");
  });
});
