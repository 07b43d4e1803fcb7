import { AppError } from "@agentry/errors";
import type { ToolCallRecord } from "../tools.js";
import type {
  CallOutcome,
  CallRecord,
  CitationRecord,
  ConversationKey,
  ConversationRecord,
  NewExchange,
  TurnPage,
  TurnRecord,
  TurnRole,
} from "./types.js";

/*
 * What the SQLite and Postgres stores' rows have in common: the same columns, which differ only in the types
 * the drivers give sequence numbers, times and booleans, and the same cursors over them.
 */

export interface TurnRow<Seq, Time> {
  seq: Seq;
  id: string;
  conversation_id: string;
  account_id: string;
  agent_id: string;
  user_id: string;
  room_id: string;
  role: TurnRole;
  text: string;
  model: string | null;
  provider: string | null;
  input_tokens: number;
  output_tokens: number;
  latency_ms: number;
  finish_reason: string | null;
  /** JSON: the array of the turn's tool calls (SQLite: its text; Postgres: parsed by the driver); null for none. */
  tool_calls: string | ToolCallRecord[] | null;
  /** JSON like tool_calls: the chunks an assistant turn's prompt carried; null for none. */
  citations: string | CitationRecord[] | null;
  /** The message's public JSON (stored-messages.ts); null on turns stored before it was kept. */
  message_json: string | null;
  /** SQLite: 0 or 1; Postgres: a boolean. */
  background: number | boolean;
  fallback: number | boolean;
  created_at: Time;
}

export interface ConversationRow<Time> {
  id: string;
  account_id: string;
  agent_id: string;
  user_id: string;
  room_id: string;
  turn_count: number;
  created_at: Time;
  updated_at: Time;
}

export interface CallRow<Bool, Time> {
  id: string;
  request_id: string | null;
  api_key_id: string | null;
  account_id: string;
  agent_id: string;
  user_id: string;
  room_id: string;
  provider: string | null;
  model: string | null;
  stream: Bool;
  outcome: CallOutcome;
  error_code: string | null;
  error_message: string | null;
  latency_ms: number;
  first_token_ms: number | null;
  input_tokens: number;
  output_tokens: number;
  created_at: Time;
}

export type KeyParams = [accountId: string, agentId: string, userId: string, roomId: string];

/** The key's columns in the order of every statement's `account_id, agent_id, user_id, room_id`. */
export function keyParams(key: ConversationKey): KeyParams {
  return [key.accountId, key.agentId, key.userId, key.roomId];
}

/** The record of a turn row whose time the store has read as ISO 8601. */
export function toTurn(row: TurnRow<unknown, unknown>, createdAt: string): TurnRecord {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    accountId: row.account_id,
    agentId: row.agent_id,
    userId: row.user_id,
    roomId: row.room_id,
    role: row.role,
    text: row.text,
    model: row.model,
    provider: row.provider,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    latencyMs: row.latency_ms,
    finishReason: row.finish_reason,
    toolCalls: toolCallsOf(row.tool_calls),
    citations: citationsOf(row.citations),
    background: Boolean(row.background),
    fallback: Boolean(row.fallback),
    createdAt,
  };
}

/**
 * How a store's driver gives back a text column written with a lone surrogate, which UTF-8 cannot hold (JSON
 * columns keep it, escaped). The other text is given back as written.
 */
export function loneSurrogatesAs(replacement: string): (text: string) => string {
  return (text) => (LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, replacement) : text);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/** The record of a turn as reading its row back gives it: `stored` is the store's `loneSurrogatesAs`. */
export function asReadBack(turn: TurnRecord, stored: (text: string) => string): TurnRecord {
  const optional = (text: string | null) => (text === null ? null : stored(text));
  return {
    ...turn,
    userId: stored(turn.userId),
    roomId: stored(turn.roomId),
    text: stored(turn.text),
    model: optional(turn.model),
    provider: optional(turn.provider),
    finishReason: optional(turn.finishReason),
  };
}

/** The records of an exchange's two turns, as the store writes them. */
export function exchangeTurns(
  { key, user, reply }: NewExchange,
  conversationId: string,
): [user: TurnRecord, reply: TurnRecord] {
  const shared = { ...key, conversationId, background: false, fallback: false };
  return [
    {
      ...shared,
      id: user.id,
      role: "user",
      text: user.text,
      model: null,
      provider: null,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: 0,
      finishReason: null,
      toolCalls: [],
      citations: [],
      createdAt: user.createdAt,
    },
    {
      ...shared,
      id: reply.id,
      role: "assistant",
      text: reply.text,
      model: reply.model,
      provider: reply.provider,
      inputTokens: reply.inputTokens,
      outputTokens: reply.outputTokens,
      latencyMs: reply.latencyMs,
      finishReason: reply.finishReason,
      toolCalls: reply.toolCalls ?? [],
      citations: reply.citations ?? [],
      background: reply.background ?? false,
      fallback: reply.fallback ?? false,
      createdAt: reply.createdAt,
    },
  ];
}

/**
 * A page of message texts, each kept with its turn or presented from its row; a turn whose row was deleted between
 * the page's read and its row's (no text either way) is left out, as a read a moment later would leave it.
 */
export function keptOrPresented(page: { items: (string | undefined)[]; hasMore: boolean }): {
  items: string[];
  hasMore: boolean;
} {
  return { items: page.items.filter((text) => text !== undefined), hasMore: page.hasMore };
}

/** The tool calls column's value for an assistant turn: JSON text, or null when the model called none. */
export function toolCallsColumn(toolCalls: readonly ToolCallRecord[] | undefined): string | null {
  return toolCalls && toolCalls.length > 0 ? JSON.stringify(toolCalls) : null;
}

/** The citations column's value for an assistant turn: JSON text, or null when its prompt carried none. */
export function citationsColumn(citations: readonly CitationRecord[] | undefined): string | null {
  return citations && citations.length > 0 ? JSON.stringify(citations) : null;
}

function citationsOf(column: string | CitationRecord[] | null | undefined): CitationRecord[] {
  if (column == null) return [];
  return typeof column === "string" ? (JSON.parse(column) as CitationRecord[]) : column;
}

function toolCallsOf(column: string | ToolCallRecord[] | null): ToolCallRecord[] {
  if (column === null) return [];
  return typeof column === "string" ? (JSON.parse(column) as ToolCallRecord[]) : column;
}

/** The record of a conversation row whose times the store has read as ISO 8601. */
export function toConversation(
  row: ConversationRow<unknown>,
  createdAt: string,
  lastMessageAt: string,
): ConversationRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    userId: row.user_id,
    roomId: row.room_id,
    messageCount: row.turn_count,
    createdAt,
    lastMessageAt,
  };
}

/** The record of a call row whose `stream` and time the store has read as a boolean and ISO 8601. */
export function toCall(row: CallRow<unknown, unknown>, stream: boolean, createdAt: string): CallRecord {
  return {
    id: row.id,
    requestId: row.request_id,
    apiKeyId: row.api_key_id,
    accountId: row.account_id,
    agentId: row.agent_id,
    userId: row.user_id,
    roomId: row.room_id,
    provider: row.provider,
    model: row.model,
    stream,
    outcome: row.outcome,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    latencyMs: row.latency_ms,
    firstTokenMs: row.first_token_ms,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    createdAt,
  };
}

/**
 * A page of turns from the rows read after the cursor, one more than the page holds when another page follows.
 * Cursors are opaque to callers: the position of the page's last turn, in base64url.
 */
export function turnPage<R extends { seq: number | string }>(
  rows: readonly R[],
  limit: number,
  record: (row: R) => TurnRecord,
): TurnPage {
  const turns = rows.slice(0, limit);
  const last = turns.at(-1);
  const nextCursor = rows.length > limit && last ? positionCursor(last.seq) : null;
  return { turns: turns.map(record), nextCursor };
}

/** The opaque cursor of a position in the turns (the sequence number of the last one read). */
export function positionCursor(seq: number | string): string {
  return Buffer.from(`turn:${seq}`).toString("base64url");
}

/** The position a cursor of `turnPage` stands for, as decimal digits; throws INVALID_REQUEST for any other text. */
export function cursorPosition(cursor: string): string {
  const match = /^turn:([1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) {
    throw new AppError("INVALID_REQUEST", "The page token is invalid.", {
      details: [{ field: "page_token", issue: "is not a token returned by a previous page" }],
    });
  }
  return match[1]!;
}
