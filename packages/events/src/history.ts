import { presentToolCall, type ToolCallJson, type ToolCallView } from "./messages.js";
import type { JsonValue } from "./types.js";

/** A chunk of an agent's document that a reply's prompt carried (docs/api/documents.md, "Retrieval and citations"). */
export interface CitationJson {
  [key: string]: JsonValue;
  documentId: string;
  chunk: number;
  score: number;
}

/** A stored message as services hold it, whatever its source (the conversation store's row, an RPC turn). */
export interface StoredMessageView {
  id: string;
  agentId: string;
  conversationId: string;
  /** Null for the default conversation of messages without one. */
  userId: string | null;
  roomId: string | null;
  role: "user" | "assistant";
  text: string;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
  /** The assistant's side; unread for a user message. */
  model: string;
  modelProvider: string;
  /** Null for replies stored before the finish reason was kept. */
  finishReason: string | null;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  latencyMs: number;
  toolCalls: readonly ToolCallView[];
  citations: readonly { documentId: string; chunk: number; score: number }[];
}

/** A stored message in the API (docs/api/history.md, "Stored messages"). */
export interface StoredMessageJson {
  [key: string]: JsonValue;
  id: string;
  agentId: string;
  conversationId: string;
  userId: string | null;
  roomId: string | null;
  role: "user" | "assistant";
  text: string;
  createdAt: string;
  // An assistant message adds `model, modelProvider, finishReason, usage, latencyMs` before `createdAt`, and
  // `toolCalls` and `citations` last when it has them.
}

/**
 * The public JSON of a stored message, for every history read and for the text the conversation store keeps with
 * each turn: fields picked one by one, in the order of the contract, so that the kept text and a presentation of
 * the turn's columns cannot drift apart.
 */
export function presentStoredMessage(message: StoredMessageView): StoredMessageJson {
  const common = {
    id: message.id,
    agentId: message.agentId,
    conversationId: message.conversationId,
    userId: message.userId,
    roomId: message.roomId,
    role: message.role,
    text: message.text,
  };
  if (message.role !== "assistant") return { ...common, createdAt: message.createdAt };
  return {
    ...common,
    model: message.model,
    modelProvider: message.modelProvider,
    finishReason: message.finishReason,
    usage: {
      inputTokens: message.usage.inputTokens,
      outputTokens: message.usage.outputTokens,
      totalTokens: message.usage.totalTokens,
    },
    latencyMs: message.latencyMs,
    createdAt: message.createdAt,
    ...(message.toolCalls.length > 0
      ? { toolCalls: message.toolCalls.map((call): ToolCallJson => presentToolCall(call)) }
      : {}),
    ...(message.citations.length > 0 ? { citations: message.citations.map(presentCitation) } : {}),
  };
}

export function presentCitation(citation: {
  documentId: string;
  chunk: number;
  score: number;
}): CitationJson {
  return { documentId: citation.documentId, chunk: citation.chunk, score: citation.score };
}
