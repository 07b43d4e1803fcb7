import type { FinishReason, ProviderName } from "@agentry/core";

export { type FinishReason, isProviderName, PROVIDER_NAMES, type ProviderName } from "@agentry/core";

/** One message of the conversation as the model sees it. */
export interface PromptMessage {
  role: "user" | "assistant";
  text: string;
}

/** A tool the model may call, under the name it is given to the model (`^[a-zA-Z0-9_-]{1,64}$`). */
export interface ModelTool {
  name: string;
  description: string;
  /** A JSON Schema of an object: the tool's arguments. */
  inputSchema: Record<string, unknown>;
}

/** One call of a tool the model asked for. */
export interface ModelToolCall {
  /** The provider's id of the call, which its result refers to. */
  id: string;
  name: string;
  /** The arguments as JSON text, as the model wrote them (not necessarily valid JSON). */
  arguments: string;
}

/** The model's earlier answer in this turn that called tools, with the text it wrote before them (may be empty). */
export interface ToolCallsMessage {
  role: "assistant";
  text: string;
  toolCalls: ModelToolCall[];
}

/** The results of the tool calls of the answer just before, one per call, in the calls' order. */
export interface ToolResultsMessage {
  role: "tool";
  results: { callId: string; name: string; content: string; isError: boolean }[];
}

export type ModelMessage = PromptMessage | ToolCallsMessage | ToolResultsMessage;

/** Everything a provider needs for one call, already resolved: no defaults are applied below this point. */
export interface ProviderRequest {
  model: string;
  /** The system prompt: the agent's profile, then the caller's context for this message. May be empty. */
  system: string;
  /**
   * Oldest first. Starts with a user message and alternates; the new user message may be followed by the tool
   * rounds of this turn (an assistant message with tool calls, then their results, each round).
   */
  messages: ModelMessage[];
  maxTokens: number;
  /** Unset leaves the provider's default. */
  temperature?: number;
  /** The tools the model may call; unset or empty, none. */
  tools?: ModelTool[];
  /**
   * `none`: the tools are listed (earlier rounds used them) but the model must answer in text; `required`: the model
   * must call one of them (`settings.toolChoice`, the first round only). Default `auto`.
   */
  toolChoice?: "auto" | "none" | "required";
}

export interface ProviderUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ProviderResult {
  text: string;
  /** The model that answered, as the provider names it; the requested one when the provider does not say. */
  model: string;
  finishReason: FinishReason;
  /** Zeros when the provider did not report usage. */
  usage: ProviderUsage;
  /** The tools the model asked to call, in its order; unset or empty when it answered in text only. */
  toolCalls?: ModelToolCall[];
}

/**
 * A streamed reply: text deltas (never empty) and, when the model calls tools, a `tool` event as each call begins
 * (the calls themselves come whole with `done`: a call's arguments stream in pieces), then exactly one `done`.
 */
export type ProviderEvent =
  | { type: "delta"; text: string }
  | { type: "tool" }
  | ({ type: "done" } & Omit<ProviderResult, "text">);

/**
 * A model provider. Failures are thrown as AppError with the public code (see `errors.ts`): MODEL_ERROR for
 * lasting failures, AGENT_UNAVAILABLE for transient ones. When `signal` aborts, the upstream request is
 * abandoned and the call may throw anything or, for a stream, simply end: the caller owns the signal and
 * knows why it aborted, so it decides what that means.
 */
export interface ModelProvider {
  readonly name: ProviderName;
  /** The model used when the agent names none. */
  readonly defaultModel: string;
  /**
   * The most tokens a reply has when the agent sets no `settings.maxTokens`; unset: the platform's default
   * (GENERATION_BOUNDS). The local model's is lower, so that a reply on a small machine ends in time.
   */
  readonly defaultMaxTokens?: number;
  complete(request: ProviderRequest, signal: AbortSignal): Promise<ProviderResult>;
  /**
   * Resolves once the provider has accepted the request (so rejections such as 401 or 429 come out here, before
   * any event), to the events of the reply. A stream that ends without a reply being complete throws
   * AGENT_UNAVAILABLE. Leaving the iteration early abandons the upstream request.
   */
  stream(request: ProviderRequest, signal: AbortSignal): Promise<AsyncIterable<ProviderEvent>>;
}
