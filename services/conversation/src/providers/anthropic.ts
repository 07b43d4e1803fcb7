import type { Logger } from "@agentry/logging";
import { Anthropic, APIConnectionError, APIError } from "@anthropic-ai/sdk";
import type { MessageCreateParamsBase, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { connectionError, incompleteError, refusalError } from "./errors.js";
import { sdkLogger } from "./sdk-logger.js";
import type { FinishReason, ModelProvider, ProviderEvent, ProviderRequest, ProviderResult } from "./types.js";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

export interface AnthropicProviderOptions {
  apiKey: string;
  /** The Anthropic API when unset. */
  baseURL?: string;
  defaultModel: string;
  /** Backstop of the SDK for the time until response headers; the caller's signal bounds the whole call. */
  timeoutMs: number;
  logger: Logger;
}

/**
 * The `anthropic` provider: the Messages API through the official SDK. The SDK never retries (the caller
 * decides) and never reads the environment: configuration comes from the options only.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  const client = new Anthropic({
    apiKey: options.apiKey,
    authToken: null,
    baseURL: options.baseURL ?? ANTHROPIC_DEFAULT_BASE_URL,
    maxRetries: 0,
    timeout: options.timeoutMs,
    logger: sdkLogger(options.logger.child({ component: "anthropic-sdk" })),
    logLevel: "warn",
  });
  const fail = (error: unknown, model: string) => toAppError(error, model, [options.apiKey]);

  return {
    name: "anthropic",
    defaultModel: options.defaultModel,

    async complete(request, signal): Promise<ProviderResult> {
      try {
        const message = await client.messages.create({ ...params(request), stream: false }, { signal });
        return {
          text: message.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
          model: message.model || request.model,
          finishReason: finishReason(message.stop_reason),
          usage: { inputTokens: inputTokens(message.usage), outputTokens: message.usage.output_tokens },
        };
      } catch (error) {
        throw fail(error, request.model);
      }
    },

    async stream(request, signal): Promise<AsyncIterable<ProviderEvent>> {
      let events: AsyncIterable<RawMessageStreamEvent>;
      try {
        events = await client.messages.create({ ...params(request), stream: true }, { signal });
      } catch (error) {
        throw fail(error, request.model);
      }
      return (async function* replies(): AsyncGenerator<ProviderEvent> {
        let model = request.model;
        let finish: FinishReason = "other";
        let input = 0;
        let output = 0;
        let stopped = false;
        try {
          for await (const event of events) {
            switch (event.type) {
              case "message_start":
                model = event.message.model || model;
                input = inputTokens(event.message.usage);
                output = event.message.usage.output_tokens;
                break;
              case "content_block_delta":
                if (event.delta.type === "text_delta" && event.delta.text) {
                  yield { type: "delta", text: event.delta.text };
                }
                break;
              case "message_delta":
                finish = finishReason(event.delta.stop_reason);
                // Counts in message_delta are cumulative; input is there only on newer API versions.
                output = event.usage.output_tokens;
                if (event.usage.input_tokens != null) input = inputTokens(event.usage);
                break;
              case "message_stop":
                stopped = true;
                break;
              default:
                break;
            }
          }
        } catch (error) {
          throw fail(error, request.model);
        }
        // The SDK ends a stream quietly when its signal aborts; the caller tells that case apart by its signal.
        if (!stopped) throw incompleteError("anthropic");
        yield {
          type: "done",
          model,
          finishReason: finish,
          usage: { inputTokens: input, outputTokens: output },
        };
      })();
    },
  };
}

function params(request: ProviderRequest): MessageCreateParamsBase {
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages.map((message) => ({ role: message.role, content: message.text })),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  };
}

/** Prompt-cache reads and writes are input too; input_tokens alone counts only the uncached part. */
function inputTokens(usage: {
  input_tokens: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}): number {
  return (
    (usage.input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0) +
    (usage.cache_read_input_tokens ?? 0)
  );
}

function finishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      return "other";
  }
}

function toAppError(error: unknown, model: string, secrets: readonly string[]) {
  if (error instanceof APIConnectionError) return connectionError("anthropic", error);
  if (error instanceof APIError && (error.status !== undefined || error.error !== undefined)) {
    const body = error.error as { error?: { type?: unknown; message?: unknown } } | undefined;
    return refusalError(
      "anthropic",
      model,
      {
        status: error.status,
        headers: error.headers,
        type: typeof body?.error?.type === "string" ? body.error.type : undefined,
        message: typeof body?.error?.message === "string" ? body.error.message : undefined,
      },
      secrets,
    );
  }
  // Anything else thrown while reading the body: the connection broke or the answer was not SSE.
  return incompleteError("anthropic", error);
}
