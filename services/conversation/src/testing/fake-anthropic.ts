import type { IncomingHttpHeaders } from "node:http";
import { type FakeProviderOptions, FakeProviderServer, type WireFormat } from "./fake-server.js";

/** The part of a Messages API request body the fake reads; tests can assert on the rest too. */
export interface AnthropicMessagesBody {
  model: string;
  max_tokens: number;
  system?: string | { type: "text"; text: string }[];
  messages: { role: string; content: string | { type: string; text?: string }[] }[];
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

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
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
  json(body, reply) {
    return {
      id: `msg_fake${reply.id}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: [{ type: "text", text: reply.text }],
      stop_reason: reply.finishReason ?? "end_turn",
      stop_sequence: null,
      usage: { input_tokens: reply.usage.input, output_tokens: reply.usage.output },
    };
  },
  events(body, reply) {
    const frames = [
      event("message_start", {
        type: "message_start",
        message: {
          id: `msg_fake${reply.id}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: reply.usage.input, output_tokens: 1 },
        },
      }),
      event("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      }),
      event("ping", { type: "ping" }),
    ];
    const textFrames = new Set<number>();
    for (const piece of reply.chunks) {
      textFrames.add(frames.length);
      frames.push(
        event("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: piece },
        }),
      );
    }
    frames.push(
      event("content_block_stop", { type: "content_block_stop", index: 0 }),
      event("message_delta", {
        type: "message_delta",
        delta: { stop_reason: reply.finishReason ?? "end_turn", stop_sequence: null },
        usage: { output_tokens: reply.usage.output },
      }),
      event("message_stop", { type: "message_stop" }),
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
