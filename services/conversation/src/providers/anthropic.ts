import type {
  Usage as AnthropicUsage,
  ContentBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  Tool,
  ToolChoice,
} from "@anthropic-ai/sdk/resources/messages";
import type { EventSourceMessage } from "eventsource-parser";
import { incompleteError, type UpstreamHeaders } from "./errors.js";
import {
  createEndpoint,
  type Endpoint,
  type ErrorDetail,
  parseJson,
  type StreamReader,
  TOOL_CALL_BEGUN,
} from "./http.js";
import type {
  FinishReason,
  ModelProvider,
  ModelToolCall,
  ProviderEvent,
  ProviderRequest,
  ProviderResult,
} from "./types.js";

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

/*
 * The shapes are the official SDK's (type-only imports: no runtime cost), so a field that drifts from the real API
 * fails the typecheck. Answers are read defensively all the same.
 */

type Usage = {
  [K in "input_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens" | "output_tokens"]?:
    | AnthropicUsage[K]
    | null;
};

/** The stream events; others (ping, unknown future ones) are skipped. */
type StreamEvent = RawMessageStreamEvent | { type: "other" };

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
      const body: MessageCreateParamsNonStreaming = { ...params(request), stream: false };
      const message = (await endpoint.json(body, request.model, signal)) as Message | null;
      if (!Array.isArray(message?.content)) throw incompleteError("anthropic", new Error("no content"));
      const toolCalls: ModelToolCall[] = [];
      let text = "";
      for (const block of message.content) {
        if (block?.type === "text") text += block.text ?? "";
        else if (block?.type === "tool_use") {
          toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
        }
      }
      return {
        text,
        model: message.model || request.model,
        finishReason: finishReason(message.stop_reason),
        usage: { inputTokens: inputTokens(message.usage), outputTokens: message.usage?.output_tokens ?? 0 },
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
      };
    },

    stream(request, signal): Promise<AsyncIterable<ProviderEvent>> {
      const body: MessageCreateParamsStreaming = { ...params(request), stream: true };
      return endpoint.stream(body, request.model, signal, new EventReader(endpoint, request.model));
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
  /** Tool calls by their content block's index; a call's input arrives as pieces of JSON text. */
  private readonly calls = new Map<number, ModelToolCall>();

  constructor(
    private readonly endpoint: Endpoint,
    private readonly requested: string,
  ) {
    this.model = requested;
  }

  event(
    { event: name, data }: EventSourceMessage,
    headers: UpstreamHeaders,
  ): string | typeof TOOL_CALL_BEGUN | undefined {
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
      case "content_block_start":
        if (event.content_block?.type === "tool_use") {
          const { id, name } = event.content_block;
          this.calls.set(event.index, { id, name, arguments: "" });
          return TOOL_CALL_BEGUN;
        }
        return undefined;
      case "content_block_delta": {
        if (event.delta?.type === "text_delta") return event.delta.text || undefined;
        const call = this.calls.get(event.index);
        if (call && event.delta?.type === "input_json_delta")
          call.arguments += event.delta.partial_json ?? "";
        return undefined;
      }
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
    // A tool called without arguments sends no input pieces: its input is the empty object.
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ ...call, arguments: call.arguments || "{}" }));
    return {
      type: "done",
      model: this.model,
      finishReason: this.finish,
      usage: { inputTokens: this.input, outputTokens: this.output },
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
  }
}

function params(request: ProviderRequest) {
  const messages: MessageParam[] = [];
  for (const message of request.messages) {
    if (message.role === "tool") {
      // Tool results go back in a user message, one block per call.
      messages.push({
        role: "user",
        content: message.results.map((result) => ({
          type: "tool_result",
          tool_use_id: result.callId,
          content: result.content,
          ...(result.isError ? { is_error: true } : {}),
        })),
      });
    } else if (message.role === "assistant" && "toolCalls" in message) {
      const content: ContentBlockParam[] = message.text ? [{ type: "text", text: message.text }] : [];
      for (const call of message.toolCalls) {
        content.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) });
      }
      messages.push({ role: "assistant", content });
    } else {
      messages.push({ role: message.role, content: message.text });
    }
  }
  const tools = request.tools?.map(
    (tool): Tool => ({
      name: tool.name,
      description: tool.description,
      input_schema: { type: "object", ...tool.inputSchema },
    }),
  );
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system ? { system: request.system } : {}),
    messages,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(tools && tools.length > 0 ? { tools, tool_choice: anthropicToolChoice(request.toolChoice) } : {}),
  };
}

/** Anthropic's name for each choice: a call it must make is `any` (of the tools). */
function anthropicToolChoice(choice: ProviderRequest["toolChoice"]): ToolChoice {
  if (choice === "required") return { type: "any" };
  if (choice === "none") return { type: "none" };
  return { type: "auto" };
}

/** A call's arguments as the object Anthropic takes back: `{}` for text that is not a JSON object. */
function toolInput(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Reported to the model as the call's error; the call itself is replayed with no input.
  }
  return {};
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
    // "tool_use" ends a round of the tool loop, never a reply.
    default:
      return "other";
  }
}
