import type { EventSourceMessage } from "eventsource-parser";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
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

/*
 * The shapes are the official SDK's (type-only imports: no runtime cost), so a field that drifts from the real API
 * fails the typecheck. Answers are read defensively all the same: OpenAI-compatible servers leave fields out.
 */

/** A streamed chunk; some servers report a failure inside a stream that has started. */
type CompletionChunk = ChatCompletionChunk & { error?: unknown };

type Usage = Partial<Pick<CompletionUsage, "prompt_tokens" | "completion_tokens">>;

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
      const body: ChatCompletionCreateParamsNonStreaming = { ...params(request), stream: false };
      const completion = (await endpoint.json(body, request.model, signal)) as ChatCompletion | null;
      if (!Array.isArray(completion?.choices)) throw incompleteError("openai", new Error("no choices"));
      const choice = completion.choices[0];
      const toolCalls = (choice?.message?.tool_calls ?? []).flatMap((call) =>
        call?.type === "function" && call.function
          ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? "" }]
          : [],
      );
      return {
        text: choice?.message?.content ?? "",
        model: completion.model || request.model,
        finishReason: finishReason(choice?.finish_reason),
        usage: usage(completion.usage),
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
      };
    },

    stream(request, signal): Promise<AsyncIterable<ProviderEvent>> {
      const body: ChatCompletionCreateParamsStreaming = {
        ...params(request),
        stream: true,
        stream_options: { include_usage: true },
      };
      return endpoint.stream(body, request.model, signal, new ChunkReader(endpoint, request.model));
    },
  };
}

/** Reads the `data:` chunks of a streamed Chat Completion, up to `[DONE]`. */
class ChunkReader implements StreamReader {
  private model: string;
  private finish: FinishReason | undefined;
  private tokens: ProviderUsage = { inputTokens: 0, outputTokens: 0 };
  private ended = false;
  /** Tool calls as their pieces arrive, by their index in the answer. */
  private readonly calls = new Map<number, ModelToolCall>();

  constructor(
    private readonly endpoint: Endpoint,
    private readonly requested: string,
  ) {
    this.model = requested;
  }

  event(event: EventSourceMessage, headers: UpstreamHeaders): string | typeof TOOL_CALL_BEGUN | undefined {
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
    // A tool call comes in pieces: its id and name first, then its arguments' text in parts.
    let begun = false;
    for (const piece of choice?.delta?.tool_calls ?? []) {
      const index = piece?.index ?? 0;
      let call = this.calls.get(index);
      if (!call) {
        call = { id: "", name: "", arguments: "" };
        this.calls.set(index, call);
        begun = true;
      }
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name += piece.function.name;
      if (piece.function?.arguments) call.arguments += piece.function.arguments;
    }
    return choice?.delta?.content || (begun ? TOOL_CALL_BEGUN : undefined);
  }

  end(): ProviderEvent {
    // An aborted call may end the body early; the caller tells that case apart by its signal.
    if (this.finish === undefined) throw incompleteError("openai");
    const toolCalls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    return {
      type: "done",
      model: this.model,
      finishReason: this.finish,
      usage: this.tokens,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
  }
}

function params(request: ProviderRequest) {
  const messages: ChatCompletionMessageParam[] = [];
  // One system message: several, or one that is not first, break the chat templates of some local models.
  if (request.system) messages.push({ role: "system", content: request.system });
  for (const message of request.messages) {
    if (message.role === "tool") {
      for (const result of message.results) {
        // The API has no error flag for a tool's result: a failure says so in its text.
        const content = result.isError ? `Error: ${result.content}` : result.content;
        messages.push({ role: "tool", tool_call_id: result.callId, content });
      }
    } else if (message.role === "assistant" && "toolCalls" in message) {
      messages.push({
        role: "assistant",
        content: message.text || null,
        tool_calls: message.toolCalls.map(
          (call): ChatCompletionMessageFunctionToolCall => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: call.arguments },
          }),
        ),
      });
    } else {
      messages.push({ role: message.role, content: message.text });
    }
  }
  const tools = request.tools?.map(
    (tool): ChatCompletionTool => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }),
  );
  return {
    model: request.model,
    messages,
    // max_completion_tokens replaces max_tokens, which OpenAI's reasoning models refuse; compatible servers
    // that do not know it ignore it.
    max_completion_tokens: request.maxTokens,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(tools && tools.length > 0 ? { tools, tool_choice: request.toolChoice ?? "auto" } : {}),
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
    // "tool_calls" ends a round of the tool loop, never a reply.
    default:
      return "other";
  }
}

function usage(value: Usage | null | undefined): ProviderUsage {
  return { inputTokens: value?.prompt_tokens ?? 0, outputTokens: value?.completion_tokens ?? 0 };
}
