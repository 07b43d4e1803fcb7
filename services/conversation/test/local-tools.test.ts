import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@agentry/logging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalProvider, type LocalProvider } from "../src/index.js";
import { callInstructions, chatHistory, grammarSchema, parseCall } from "../src/providers/local/engine.js";
import type { ProviderRequest } from "../src/providers/types.js";
import { testModelPath } from "./fixtures/local-model.js";

const timeTool = {
  name: "time__now",
  description: "The current time in a time zone.",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      zone: { type: "string", minLength: 1, pattern: "^[A-Za-z/_]+$", description: "an IANA time zone" },
      hours: { type: "integer", minimum: 0 },
    },
    required: ["zone"],
    additionalProperties: false,
  },
};

const round: ProviderRequest = {
  model: "m",
  system: "You are Ada.",
  messages: [
    { role: "user", text: "Hello" },
    { role: "assistant", text: "Hi!" },
    { role: "user", text: "What time is it in Paris?" },
    {
      role: "assistant",
      text: "Checking.",
      toolCalls: [{ id: "c1", name: "time__now", arguments: '{"zone":"Europe/Paris"}' }],
    },
    { role: "tool", results: [{ callId: "c1", name: "time__now", content: '"12:00"', isError: false }] },
  ],
  maxTokens: 16,
  tools: [timeTool],
};

describe("the local model's chat history with tools", () => {
  it("continues the model turn that called the tools, their results in place", () => {
    const items = chatHistory(round);
    expect(items.map((item) => item.type)).toEqual(["system", "user", "model", "user", "model"]);
    expect(items.at(-1)).toEqual({
      type: "model",
      response: [
        "Checking.",
        { type: "functionCall", name: "time__now", params: { zone: "Europe/Paris" }, result: "12:00" },
      ],
    });
  });

  it("puts a second round in the same model turn, and a failed call's error as its result", () => {
    const items = chatHistory({
      ...round,
      messages: [
        ...round.messages,
        { role: "assistant", text: "", toolCalls: [{ id: "c2", name: "time__now", arguments: "{" }] },
        {
          role: "tool",
          results: [{ callId: "c2", name: "time__now", content: "bad arguments", isError: true }],
        },
      ],
    });
    const last = items.at(-1);
    if (last?.type !== "model") throw new Error("expected a model turn");
    expect(last.response).toHaveLength(3);
    expect(last.response[2]).toMatchObject({
      name: "time__now",
      params: "{",
      result: { error: "bad arguments" },
    });
  });

  it("gives the grammar only the JSON Schema it can follow", () => {
    expect(grammarSchema(timeTool.inputSchema)).toEqual({
      type: "object",
      properties: {
        zone: { type: "string", minLength: 1, description: "an IANA time zone" },
        hours: { type: "integer" },
      },
      required: ["zone"],
      additionalProperties: false,
    });
    // A forced call bounds the strings the schema leaves unbounded, so a model repeating itself ends the string.
    expect(grammarSchema(timeTool.inputSchema, { maxStringLength: 200 })).toMatchObject({
      properties: { zone: { maxLength: 200 } },
    });
    expect(grammarSchema({ type: "string", maxLength: 8 }, { maxStringLength: 200 })).toEqual({
      type: "string",
      maxLength: 8,
    });
  });
});

describe("a forced call's text", () => {
  it("lists the tools in the system prompt after the agent's own", () => {
    const text = callInstructions("You are Ada.", [timeTool]);
    expect(text.startsWith("You are Ada.\n\n")).toBe(true);
    expect(text).toContain(
      "- time__now(zone: string (an IANA time zone), hours?: integer): The current time in a time zone.",
    );
  });

  it("reads the call, and keeps the tool of one cut off by the token limit with arguments it refuses", () => {
    expect(parseCall('{"name": "time__now", "arguments": {"zone": "Asia/Tokyo"}}', [timeTool])).toEqual({
      name: "time__now",
      arguments: '{"zone":"Asia/Tokyo"}',
    });
    const cut = parseCall('{"name": "time__now", "arguments": {"zone": "Asia/Tok', [timeTool]);
    expect(cut.name).toBe("time__now");
    expect(JSON.parse(cut.arguments)).toEqual({
      unreadable: '{"name": "time__now", "arguments": {"zone": "Asia/Tok',
    });
  });
});

describe("the local model with tools", () => {
  let provider: LocalProvider;
  let scratch: string;
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "local-tools-"));
    provider = createLocalProvider({
      location: { path: await testModelPath(), dir: scratch },
      maxQueue: 1,
      gpu: false,
      threads: 1,
      contextSize: 2048,
      replyTimeoutMs: 120_000,
      defaultMaxTokens: 64,
      logger: silentLogger(),
    });
    await provider.warmUp();
  }, 120_000);
  afterAll(async () => {
    await provider.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("offers the tools through function calling: it answers in text or calls an offered tool", async () => {
    const result = await provider.complete(
      {
        model: provider.defaultModel,
        system: "Use the tools when they help.",
        messages: [{ role: "user", text: "What time is it in Paris?" }],
        maxTokens: 24,
        tools: [timeTool],
      },
      new AbortController().signal,
    );
    // The bundled 135M model rarely calls a function; a larger one does, through the same path.
    for (const call of result.toolCalls ?? []) {
      expect(call.name).toBe("time__now");
      expect(() => JSON.parse(call.arguments)).not.toThrow();
    }
    if (!result.toolCalls?.length) expect(result.text.length).toBeGreaterThan(0);
  }, 60_000);

  it("makes the one call toolChoice required asks for, with arguments the tool's schema admits", async () => {
    const sumTool = {
      name: "calculator__evaluate",
      description: "Evaluates an arithmetic expression exactly.",
      inputSchema: {
        type: "object",
        properties: { expression: { type: "string" } },
        required: ["expression"],
      },
    };
    for (const [question, expected] of [
      ["What time is it in Tokyo?", "time__now"],
      ["What is 1234 * 5678?", "calculator__evaluate"],
    ] as const) {
      const result = await provider.complete(
        {
          model: provider.defaultModel,
          system: "You are Ada.",
          messages: [{ role: "user", text: question }],
          maxTokens: 64,
          tools: [timeTool, sumTool],
          toolChoice: "required",
        },
        new AbortController().signal,
      );
      expect(result.text).toBe("");
      expect(result.toolCalls).toHaveLength(1);
      const [call] = result.toolCalls!;
      // The grammar admits only the offered tools and their arguments; which one is the model's choice.
      expect(call!.name).toBe(expected);
      const args = JSON.parse(call!.arguments) as Record<string, unknown>;
      expect(typeof args[expected === "time__now" ? "zone" : "expression"]).toBe("string");
      expect(result.usage.outputTokens).toBeGreaterThan(3);
    }
  }, 60_000);

  it("answers in text after a round of tool calls", async () => {
    const result = await provider.complete(
      { ...round, model: provider.defaultModel, toolChoice: "none" },
      new AbortController().signal,
    );
    expect(result.toolCalls).toBeUndefined();
    expect(result.finishReason).toMatch(/stop|length/);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  }, 60_000);
});
