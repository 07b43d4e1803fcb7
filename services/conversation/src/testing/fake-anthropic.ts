import type { IncomingHttpHeaders } from "node:http";
import type {
  ContentBlock,
  Message,
  RawMessageStreamEvent,
  StopReason,
  Tool,
  ToolUseBlock,
  Usage,
} from "@anthropic-ai/sdk/resources/messages";
import { type FakeProviderOptions, FakeProviderServer, type Reply, type WireFormat } from "./fake-server.js";

/** The part of a Messages API request body the fake reads; tests can assert on the rest too. */
export interface AnthropicMessagesBody {
  model: string;
  max_tokens: number;
  system?: string | { type: "text"; text: string }[];
  messages: {
    role: string;
    content:
      | string
      | {
          type: string;
          text?: string;
          id?: string;
          name?: string;
          input?: unknown;
          tool_use_id?: string;
          content?: unknown;
          is_error?: boolean;
        }[];
  }[];
  tools?: Tool[];
  tool_choice?: { type: string };
  stream?: boolean;
  temperature?: number;
  [key: string]: unknown;
}

const ERRORS: Record<number, { type: string; message: (model: string) => string }> = {
  400: { type: "invalid_request_error", message: () => "Invalid request." },
  401: { type: "authentication_error", message: () => "invalid x-api-key" },
  403: {
    type: "permission_error",
    message: () => "Your API key does not have permission to use the specified resource.",
  },
  404: { type: "not_found_error", message: (model) => `model: ${model}` },
  413: { type: "request_too_large", message: () => "Request exceeds the maximum allowed number of bytes." },
  429: {
    type: "rate_limit_error",
    message: () => "This request would exceed the rate limit for your organization. Please try again later.",
  },
  500: { type: "api_error", message: () => "Internal server error" },
  529: { type: "overloaded_error", message: () => "Overloaded" },
};

function text(content: AnthropicMessagesBody["messages"][number]["content"]): string {
  return typeof content === "string" ? content : content.map((block) => block.text ?? "").join("");
}

function systemText(system: AnthropicMessagesBody["system"]): string {
  if (system === undefined) return "";
  return typeof system === "string" ? system : system.map((block) => block.text).join("");
}

/*
 * The answers are built as the official SDK's types (type-only imports), the shapes the provider client reads:
 * a field that drifts from the real API fails the typecheck of both.
 */

function event(data: RawMessageStreamEvent | { type: "ping" }): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

function usage(input: number, output: number): Usage {
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation: null,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    speed: null,
  };
}

function toolUse(call: Reply["toolCalls"][number], input: unknown): ToolUseBlock {
  return { type: "tool_use", id: call.id, name: call.name, input, caller: { type: "direct" } };
}

function stopReason(reply: Reply): StopReason {
  return (reply.finishReason ?? (reply.toolCalls.length > 0 ? "tool_use" : "end_turn")) as StopReason;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The Anthropic Messages wire format: `POST /v1/messages`, JSON or SSE named events. */
export const anthropicFormat: WireFormat<AnthropicMessagesBody> = {
  path: "/v1/messages",
  baseURL: (origin) => origin,
  authorized: (headers: IncomingHttpHeaders, apiKey) => headers["x-api-key"] === apiKey,
  model: (body) => body.model,
  streamed: (body) => body.stream === true,
  lastUserText: (body) =>
    text([...(body.messages ?? [])].reverse().find((m) => m.role === "user")?.content ?? ""),
  system: (body) => systemText(body.system),
  promptChars: (body) =>
    systemText(body.system).length +
    (body.messages ?? []).reduce((sum, m) => sum + text(m.content).length, 0),
  errorBody(status, message, type, body) {
    const known = ERRORS[status] ?? ERRORS[status >= 500 ? 500 : 400]!;
    return {
      type: "error",
      error: { type: type ?? known.type, message: message ?? known.message(body?.model ?? "") },
      request_id: "req_fake",
    };
  },
  json(body, reply): Message {
    const content: ContentBlock[] = [];
    if (reply.text || reply.toolCalls.length === 0)
      content.push({ type: "text", text: reply.text, citations: null });
    for (const call of reply.toolCalls) content.push(toolUse(call, parsed(call.arguments)));
    return {
      id: `msg_fake${reply.id}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      container: null,
      diagnostics: null,
      stop_details: null,
      stop_reason: stopReason(reply),
      stop_sequence: null,
      usage: usage(reply.usage.input, reply.usage.output),
    };
  },
  events(body, reply) {
    const frames = [
      event({
        type: "message_start",
        message: {
          id: `msg_fake${reply.id}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [],
          container: null,
          diagnostics: null,
          stop_details: null,
          stop_reason: null,
          stop_sequence: null,
          usage: usage(reply.usage.input, 1),
        },
      }),
    ];
    const textFrames = new Set<number>();
    let index = 0;
    if (reply.chunks.length > 0 || reply.toolCalls.length === 0) {
      frames.push(
        event({
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "", citations: null },
        }),
        event({ type: "ping" }),
      );
      for (const piece of reply.chunks) {
        textFrames.add(frames.length);
        frames.push(
          event({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }),
        );
      }
      frames.push(event({ type: "content_block_stop", index }));
      index += 1;
    }
    // Each tool call is a block of its own, its input streamed as pieces of JSON text.
    for (const call of reply.toolCalls) {
      frames.push(event({ type: "content_block_start", index, content_block: toolUse(call, {}) }));
      const half = Math.ceil(call.arguments.length / 2);
      for (const piece of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
        if (!piece) continue;
        frames.push(
          event({
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: piece },
          }),
        );
      }
      frames.push(event({ type: "content_block_stop", index }));
      index += 1;
    }
    frames.push(
      event({
        type: "message_delta",
        delta: { stop_reason: stopReason(reply), stop_sequence: null, stop_details: null, container: null },
        usage: {
          output_tokens: reply.usage.output,
          input_tokens: null,
          cache_creation_input_tokens: null,
          cache_read_input_tokens: null,
          output_tokens_details: null,
          server_tool_use: null,
        },
      }),
      event({ type: "message_stop" }),
    );
    return { frames, textFrames };
  },
};

/** Starts a fake Anthropic server; pass its `baseURL` as ANTHROPIC_BASE_URL. Close it after the test. */
export function startFakeAnthropic(
  options: FakeProviderOptions = {},
): Promise<FakeProviderServer<AnthropicMessagesBody>> {
  return new FakeProviderServer(anthropicFormat, options).start();
}
