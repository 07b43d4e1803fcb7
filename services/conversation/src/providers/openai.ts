import type { EventSourceMessage } from "eventsource-parser";
import { incompleteError, type UpstreamHeaders } from "./errors.js";
import { createEndpoint, type Endpoint, type ErrorDetail, parseJson, type StreamReader } from "./http.js";
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
  /** The call's timeout: the HTTP client's limits follow from it (see http.ts); the caller's signal bounds the call. */
  timeoutMs: number;
}

/** The parts of a Chat Completions answer read here. */
interface Completion {
  model?: string;
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: Usage | null;
}

interface CompletionChunk {
  model?: string;
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: Usage | null;
  /** Some servers report a failure inside a stream that has started. */
  error?: unknown;
}

interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/**
 * The `openai` provider: the Chat Completions API (`POST {baseURL}/chat/completions`), so any OpenAI-compatible
 * server works. Configuration comes from the options only, never from the environment.
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const endpoint = createEndpoint({
    provider: "openai",
    baseURL: options.baseURL ?? OPENAI_DEFAULT_BASE_URL,
    path: "/chat/completions",
    // Servers that need no key ignore the header; their own docs suggest any placeholder.
    headers: { authorization: `Bearer ${options.apiKey ?? "unused"}` },
    timeoutMs: options.timeoutMs,
    secrets: options.apiKey ? [options.apiKey] : [],
    errorDetail,
  });

  return {
    name: "openai",
    defaultModel: options.defaultModel,

    async complete(request, signal): Promise<ProviderResult> {
      const completion = (await endpoint.json(
        { ...params(request), stream: false },
        request.model,
        signal,
      )) as Completion;
      if (!Array.isArray(completion?.choices)) throw incompleteError("openai", new Error("no choices"));
      const choice = completion.choices[0];
      return {
        text: choice?.message?.content ?? "",
        model: completion.model || request.model,
        finishReason: finishReason(choice?.finish_reason),
        usage: usage(completion.usage),
      };
    },

    stream(request, signal): Promise<AsyncIterable<ProviderEvent>> {
      return endpoint.stream(
        { ...params(request), stream: true, stream_options: { include_usage: true } },
        request.model,
        signal,
        new ChunkReader(endpoint, request.model),
      );
    },
  };
}

/** Reads the `data:` chunks of a streamed Chat Completion, up to `[DONE]`. */
class ChunkReader implements StreamReader {
  private model: string;
  private finish: FinishReason | undefined;
  private tokens: ProviderUsage = { inputTokens: 0, outputTokens: 0 };
  private ended = false;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly requested: string,
  ) {
    this.model = requested;
  }

  event(event: EventSourceMessage, headers: UpstreamHeaders): string | undefined {
    // What follows [DONE] is read, not used, so that the connection can serve another call.
    if (this.ended) return undefined;
    if (event.data.startsWith("[DONE]")) {
      this.ended = true;
      return undefined;
    }
    const chunk = parseJson(event.data) as CompletionChunk | null | undefined;
    if (chunk === undefined) throw incompleteError("openai", new Error("an event is not JSON"));
    if (chunk?.error) throw this.endpoint.refusal(this.requested, headers, chunk);
    if (chunk?.model) this.model = chunk.model;
    // With include_usage the usage comes in a last chunk without choices; some servers attach it to the
    // finishing chunk instead.
    if (chunk?.usage) this.tokens = usage(chunk.usage);
    const choice = chunk?.choices?.[0];
    if (choice?.finish_reason) this.finish = finishReason(choice.finish_reason);
    return choice?.delta?.content || undefined;
  }

  end(): ProviderEvent {
    // An aborted call may end the body early; the caller tells that case apart by its signal.
    if (this.finish === undefined) throw incompleteError("openai");
    return { type: "done", model: this.model, finishReason: this.finish, usage: this.tokens };
  }
}

function params(request: ProviderRequest) {
  const messages: { role: "system" | "user" | "assistant"; content: string }[] = [];
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

/** `{"error": {"type", "code", "message"}}`; the code, when there is one, is the more precise. */
function errorDetail(body: unknown): ErrorDetail {
  const error = (body as { error?: { type?: unknown; code?: unknown; message?: unknown } } | undefined)
    ?.error;
  const code = error?.code;
  const type = error?.type;
  return {
    type: typeof code === "string" ? code : typeof type === "string" ? type : undefined,
    message: typeof error?.message === "string" ? error.message : undefined,
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

function usage(value: Usage | null | undefined): ProviderUsage {
  return { inputTokens: value?.prompt_tokens ?? 0, outputTokens: value?.completion_tokens ?? 0 };
}
