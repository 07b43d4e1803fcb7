import type { IncomingHttpHeaders } from "node:http";
import { type FakeProviderOptions, FakeProviderServer, type Reply, type WireFormat } from "./fake-server.js";

/** The part of a Chat Completions request body the fake reads; tests can assert on the rest too. */
export interface OpenAIChatBody {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_completion_tokens?: number;
  max_tokens?: number;
  temperature?: number;
  [key: string]: unknown;
}

const ERRORS: Record<number, { type: string; code: string | null; message: (model: string) => string }> = {
  400: { type: "invalid_request_error", code: null, message: () => "Invalid request." },
  401: {
    type: "invalid_request_error",
    code: "invalid_api_key",
    message: () =>
      "Incorrect API key provided: sk-fake*****************1234. You can find your API key at https://platform.openai.com/account/api-keys.",
  },
  403: {
    type: "invalid_request_error",
    code: "unsupported_country_region_territory",
    message: () => "Forbidden.",
  },
  404: {
    type: "invalid_request_error",
    code: "model_not_found",
    message: (model) => `The model \`${model}\` does not exist or you do not have access to it.`,
  },
  422: { type: "invalid_request_error", code: null, message: () => "Unprocessable request." },
  429: {
    type: "requests",
    code: "rate_limit_exceeded",
    message: () => "Rate limit reached for requests. Please try again in 7s.",
  },
  500: {
    type: "server_error",
    code: null,
    message: () => "The server had an error while processing your request. Sorry about that!",
  },
  503: {
    type: "server_error",
    code: "service_unavailable",
    message: () => "The engine is currently overloaded, please try again later.",
  },
};

function chunk(
  reply: Reply,
  body: OpenAIChatBody,
  choice: Record<string, unknown> | null,
  usage?: unknown,
): string {
  const payload = {
    id: `chatcmpl-fake${reply.id}`,
    object: "chat.completion.chunk",
    created: 1_767_225_600,
    model: body.model,
    system_fingerprint: "fp_fake",
    choices: choice ? [{ index: 0, logprobs: null, finish_reason: null, ...choice }] : [],
    ...(body.stream_options?.include_usage ? { usage: usage ?? null } : {}),
  };
  return `data: ${JSON.stringify(payload)}\n\n`;
}

function usageOf(reply: Reply) {
  return {
    prompt_tokens: reply.usage.input,
    completion_tokens: reply.usage.output,
    total_tokens: reply.usage.input + reply.usage.output,
  };
}

/** The OpenAI Chat Completions wire format: `POST /v1/chat/completions`, JSON or SSE `data:` lines. */
export const openAIFormat: WireFormat<OpenAIChatBody> = {
  path: "/v1/chat/completions",
  baseURL: (origin) => `${origin}/v1`,
  authorized: (headers: IncomingHttpHeaders, apiKey) => headers.authorization === `Bearer ${apiKey}`,
  model: (body) => body.model,
  streamed: (body) => body.stream === true,
  lastUserText: (body) => [...(body.messages ?? [])].reverse().find((m) => m.role === "user")?.content ?? "",
  promptChars: (body) => (body.messages ?? []).reduce((sum, m) => sum + String(m.content).length, 0),
  errorBody(status, message, type, body) {
    const known = ERRORS[status] ?? ERRORS[status >= 500 ? 500 : 400]!;
    return {
      error: {
        message: message ?? known.message(body?.model ?? ""),
        type: type ?? known.type,
        param: null,
        code: type ?? known.code,
      },
    };
  },
  json(body, reply) {
    return {
      id: `chatcmpl-fake${reply.id}`,
      object: "chat.completion",
      created: 1_767_225_600,
      model: body.model,
      system_fingerprint: "fp_fake",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: reply.text, refusal: null },
          logprobs: null,
          finish_reason: reply.finishReason ?? "stop",
        },
      ],
      usage: usageOf(reply),
    };
  },
  events(body, reply) {
    const frames = [chunk(reply, body, { delta: { role: "assistant", content: "", refusal: null } })];
    const textFrames = new Set<number>();
    for (const text of reply.chunks) {
      textFrames.add(frames.length);
      frames.push(chunk(reply, body, { delta: { content: text } }));
    }
    frames.push(chunk(reply, body, { delta: {}, finish_reason: reply.finishReason ?? "stop" }));
    if (body.stream_options?.include_usage) frames.push(chunk(reply, body, null, usageOf(reply)));
    frames.push("data: [DONE]\n\n");
    return { frames, textFrames };
  },
};

/** Starts a fake OpenAI-compatible server; pass its `baseURL` as OPENAI_BASE_URL. Close it after the test. */
export function startFakeOpenAI(
  options: FakeProviderOptions = {},
): Promise<FakeProviderServer<OpenAIChatBody>> {
  return new FakeProviderServer(openAIFormat, options).start();
}
