import type { Logger } from "@agentry/logging";
import { APIConnectionError, APIError, OpenAI } from "openai";
import type { ChatCompletionChunk, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { connectionError, incompleteError, refusalError } from "./errors.js";
import { sdkLogger } from "./sdk-logger.js";
import type {
  FinishReason,
  ModelProvider,
  ProviderEvent,
  ProviderRequest,
  ProviderResult,
  ProviderUsage,
} from "./types.js";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

export interface OpenAIProviderOptions {
  /** Optional when `baseURL` points at a server that needs none (Ollama, vLLM, LM Studio). */
  apiKey?: string;
  /** Any server speaking the Chat Completions API; the OpenAI API when unset. */
  baseURL?: string;
  defaultModel: string;
  /** Backstop of the SDK for the time until response headers; the caller's signal bounds the whole call. */
  timeoutMs: number;
  logger: Logger;
}

/**
 * The `openai` provider: the Chat Completions API through the official SDK, so any OpenAI-compatible server
 * works. The SDK never retries (the caller decides) and never reads the environment: configuration comes from
 * the options only.
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const client = new OpenAI({
    // Local servers ignore the key but the SDK insists on one; their own docs suggest any placeholder.
    apiKey: options.apiKey ?? "unused",
    baseURL: options.baseURL ?? OPENAI_DEFAULT_BASE_URL,
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: options.timeoutMs,
    logger: sdkLogger(options.logger.child({ component: "openai-sdk" })),
    logLevel: "warn",
  });
  const secrets = options.apiKey ? [options.apiKey] : [];
  const fail = (error: unknown, model: string) => toAppError(error, model, secrets);

  return {
    name: "openai",
    defaultModel: options.defaultModel,

    async complete(request, signal): Promise<ProviderResult> {
      try {
        const completion = await client.chat.completions.create(
          { ...params(request), stream: false },
          { signal },
        );
        const choice = completion.choices[0];
        return {
          text: choice?.message.content ?? "",
          model: completion.model || request.model,
          finishReason: finishReason(choice?.finish_reason),
          usage: usage(completion.usage),
        };
      } catch (error) {
        throw fail(error, request.model);
      }
    },

    async stream(request, signal): Promise<AsyncIterable<ProviderEvent>> {
      let chunks: AsyncIterable<ChatCompletionChunk>;
      try {
        chunks = await client.chat.completions.create(
          { ...params(request), stream: true, stream_options: { include_usage: true } },
          { signal },
        );
      } catch (error) {
        throw fail(error, request.model);
      }
      return (async function* events(): AsyncGenerator<ProviderEvent> {
        let model = request.model;
        let finish: FinishReason | undefined;
        let tokens: ProviderUsage = { inputTokens: 0, outputTokens: 0 };
        try {
          for await (const chunk of chunks) {
            if (chunk.model) model = chunk.model;
            // With include_usage the usage comes in a last chunk without choices; some servers attach it to
            // the finishing chunk instead.
            if (chunk.usage) tokens = usage(chunk.usage);
            const choice = chunk.choices[0];
            if (choice?.delta?.content) yield { type: "delta", text: choice.delta.content };
            if (choice?.finish_reason) finish = finishReason(choice.finish_reason);
          }
        } catch (error) {
          throw fail(error, request.model);
        }
        // The SDK ends a stream quietly when its signal aborts; the caller tells that case apart by its signal.
        if (finish === undefined) throw incompleteError("openai");
        yield { type: "done", model, finishReason: finish, usage: tokens };
      })();
    },
  };
}

function params(request: ProviderRequest) {
  const messages: ChatCompletionMessageParam[] = [];
  // One system message: several, or one that is not first, break the chat templates of some local models.
  if (request.system) messages.push({ role: "system", content: request.system });
  for (const message of request.messages) messages.push({ role: message.role, content: message.text });
  return {
    model: request.model,
    messages,
    // max_completion_tokens replaces max_tokens, which OpenAI's reasoning models refuse; compatible servers
    // that do not know it ignore it.
    max_completion_tokens: request.maxTokens,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  };
}

function finishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "stop":
      return "stop";
    case "length":
      return "length";
    case "content_filter":
      return "content_filter";
    default:
      return "other";
  }
}

function usage(value: { prompt_tokens?: number; completion_tokens?: number } | null | undefined) {
  return { inputTokens: value?.prompt_tokens ?? 0, outputTokens: value?.completion_tokens ?? 0 };
}

function toAppError(error: unknown, model: string, secrets: readonly string[]) {
  // Connection errors (timeouts included) and user aborts are APIErrors without a status.
  if (error instanceof APIConnectionError) return connectionError("openai", error);
  if (error instanceof APIError && (error.status !== undefined || error.error !== undefined)) {
    const body = error.error as { type?: unknown; code?: unknown; message?: unknown } | undefined;
    return refusalError(
      "openai",
      model,
      {
        status: error.status,
        headers: error.headers,
        type:
          typeof body?.code === "string" ? body.code : typeof body?.type === "string" ? body.type : undefined,
        message: typeof body?.message === "string" ? body.message : undefined,
      },
      secrets,
    );
  }
  // Anything else thrown while reading the body: the connection broke (undici's "terminated") or the server
  // sent something that is not SSE.
  return incompleteError("openai", error);
}
