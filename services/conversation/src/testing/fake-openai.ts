import type { IncomingHttpHeaders } from "node:http";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { type FakeProviderOptions, FakeProviderServer, type Reply, type WireFormat } from "./fake-server.js";

/** The part of a Chat Completions request body the fake reads; tests can assert on the rest too. */
export interface OpenAIChatBody {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: ChatCompletionMessageFunctionToolCall[];
    tool_call_id?: string;
  }[];
  tools?: ChatCompletionTool[];
  tool_choice?: unknown;
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

/*
 * The answers are built as the official SDK's types (type-only imports), the shapes the provider client reads:
 * a field that drifts from the real API fails the typecheck of both.
 */

function chunk(
  reply: Reply,
  body: OpenAIChatBody,
  choice: Partial<ChatCompletionChunk.Choice> | null,
  usage?: ChatCompletionChunk["usage"],
): string {
  const payload: ChatCompletionChunk = {
    id: `chatcmpl-fake${reply.id}`,
    object: "chat.completion.chunk",
    created: 1_767_225_600,
    model: body.model,
    system_fingerprint: "fp_fake",
    choices: choice ? [{ index: 0, logprobs: null, finish_reason: null, delta: {}, ...choice }] : [],
    ...(body.stream_options?.include_usage ? { usage: usage ?? null } : {}),
  };
  return `data: ${JSON.stringify(payload)}\n\n`;
}

function toolCallsOf(reply: Reply): ChatCompletionMessageFunctionToolCall[] {
  return reply.toolCalls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
}

function finishOf(reply: Reply): ChatCompletion.Choice["finish_reason"] {
  return (reply.finishReason ??
    (reply.toolCalls.length > 0 ? "tool_calls" : "stop")) as ChatCompletion.Choice["finish_reason"];
}

function usageOf(reply: Reply): NonNullable<ChatCompletion["usage"]> {
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
  system: (body) => String((body.messages ?? []).find((m) => m.role === "system")?.content ?? ""),
  promptChars: (body) => (body.messages ?? []).reduce((sum, m) => sum + String(m.content ?? "").length, 0),
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
  json(body, reply): ChatCompletion {
    const toolCalls = toolCallsOf(reply);
    return {
      id: `chatcmpl-fake${reply.id}`,
      object: "chat.completion",
      created: 1_767_225_600,
      model: body.model,
      system_fingerprint: "fp_fake",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            // A tool round without text has null content, as the real API sends it.
            content: reply.text || (toolCalls.length > 0 ? null : ""),
            refusal: null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          logprobs: null,
          finish_reason: finishOf(reply),
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
    // Each call as the real API streams it: its id, type and name with empty arguments, then the arguments in
    // pieces that carry only the call's index.
    reply.toolCalls.forEach((call, index) => {
      frames.push(
        chunk(reply, body, {
          delta: {
            tool_calls: [
              { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
            ],
          },
        }),
      );
      const half = Math.ceil(call.arguments.length / 2);
      for (const piece of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
        if (piece)
          frames.push(
            chunk(reply, body, { delta: { tool_calls: [{ index, function: { arguments: piece } }] } }),
          );
      }
    });
    frames.push(chunk(reply, body, { delta: {}, finish_reason: finishOf(reply) }));
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
