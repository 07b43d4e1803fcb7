import type { EventSourceMessage } from "eventsource-parser";
import { incompleteError, type UpstreamHeaders } from "./errors.js";
import { createEndpoint, type Endpoint, type ErrorDetail, parseJson, type StreamReader } from "./http.js";
import type { FinishReason, ModelProvider, ProviderEvent, ProviderRequest, ProviderResult } from "./types.js";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
const ANTHROPIC_VERSION = "2023-06-01";

export interface AnthropicProviderOptions {
  apiKey: string;
  /** The Anthropic API when unset. */
  baseURL?: string;
  defaultModel: string;
  /** The call's timeout: the HTTP client's limits follow from it (see http.ts); the caller's signal bounds the call. */
  timeoutMs: number;
}

interface Usage {
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens?: number | null;
}

/** The parts of a Messages API answer read here. */
interface Message {
  model?: string;
  content?: { type?: string; text?: string }[];
  stop_reason?: string | null;
  usage?: Usage | null;
}

/** The stream events read here; others (content_block_start, ping …) are skipped. */
type StreamEvent =
  | { type: "message_start"; message?: Message }
  | { type: "content_block_delta"; delta?: { type?: string; text?: string } }
  | { type: "message_delta"; delta?: { stop_reason?: string | null }; usage?: Usage | null }
  | { type: "message_stop" }
  | { type: "other" };

/**
 * The `anthropic` provider: the Messages API (`POST {baseURL}/v1/messages`). Configuration comes from the
 * options only, never from the environment.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  const endpoint = createEndpoint({
    provider: "anthropic",
    baseURL: options.baseURL ?? ANTHROPIC_DEFAULT_BASE_URL,
    path: "/v1/messages",
    headers: { "x-api-key": options.apiKey, "anthropic-version": ANTHROPIC_VERSION },
    timeoutMs: options.timeoutMs,
    secrets: [options.apiKey],
    errorDetail,
  });

  return {
    name: "anthropic",
    defaultModel: options.defaultModel,

    async complete(request, signal): Promise<ProviderResult> {
      const message = (await endpoint.json(
        { ...params(request), stream: false },
        request.model,
        signal,
      )) as Message;
      if (!Array.isArray(message?.content)) throw incompleteError("anthropic", new Error("no content"));
      return {
        text: message.content.map((block) => (block?.type === "text" ? (block.text ?? "") : "")).join(""),
        model: message.model || request.model,
        finishReason: finishReason(message.stop_reason),
        usage: { inputTokens: inputTokens(message.usage), outputTokens: message.usage?.output_tokens ?? 0 },
      };
    },

    stream(request, signal): Promise<AsyncIterable<ProviderEvent>> {
      return endpoint.stream(
        { ...params(request), stream: true },
        request.model,
        signal,
        new EventReader(endpoint, request.model),
      );
    },
  };
}

/** Reads the named events of a streamed message, up to `message_stop`. */
class EventReader implements StreamReader {
  private model: string;
  private finish: FinishReason = "other";
  private input = 0;
  private output = 0;
  private stopped = false;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly requested: string,
  ) {
    this.model = requested;
  }

  event({ event: name, data }: EventSourceMessage, headers: UpstreamHeaders): string | undefined {
    // Events without a name carry nothing of the reply.
    if (name === undefined || name === "ping") return undefined;
    if (name === "error") throw this.endpoint.refusal(this.requested, headers, parseJson(data));
    if (!data) return undefined;
    const event = parseJson(data) as StreamEvent | null | undefined;
    if (event === undefined) throw incompleteError("anthropic", new Error("an event is not JSON"));
    switch (event?.type) {
      case "message_start":
        this.model = event.message?.model || this.model;
        this.input = inputTokens(event.message?.usage);
        this.output = event.message?.usage?.output_tokens ?? 0;
        return undefined;
      case "content_block_delta":
        return event.delta?.type === "text_delta" ? event.delta.text || undefined : undefined;
      case "message_delta":
        this.finish = finishReason(event.delta?.stop_reason);
        // Counts in message_delta are cumulative; input is there only on newer API versions.
        this.output = event.usage?.output_tokens ?? this.output;
        if (event.usage?.input_tokens != null) this.input = inputTokens(event.usage);
        return undefined;
      case "message_stop":
        this.stopped = true;
        return undefined;
      default:
        return undefined;
    }
  }

  end(): ProviderEvent {
    // An aborted call may end the body early; the caller tells that case apart by its signal.
    if (!this.stopped) throw incompleteError("anthropic");
    return {
      type: "done",
      model: this.model,
      finishReason: this.finish,
      usage: { inputTokens: this.input, outputTokens: this.output },
    };
  }
}

function params(request: ProviderRequest) {
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages.map((message) => ({ role: message.role, content: message.text })),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  };
}

/** `{"type": "error", "error": {"type", "message"}}`. */
function errorDetail(body: unknown): ErrorDetail {
  const error = (body as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
  return {
    type: typeof error?.type === "string" ? error.type : undefined,
    message: typeof error?.message === "string" ? error.message : undefined,
  };
}

/** Prompt-cache reads and writes are input too; input_tokens alone counts only the uncached part. */
function inputTokens(usage: Usage | null | undefined): number {
  return (
    (usage?.input_tokens ?? 0) +
    (usage?.cache_creation_input_tokens ?? 0) +
    (usage?.cache_read_input_tokens ?? 0)
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
