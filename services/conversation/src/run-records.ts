/**
 * A message's run as the store keeps it (message-runs.ts): the events of its log encoded, its end and how long it
 * is kept, and a background message's state read from it.
 */
import { IDEMPOTENCY_KEY_TTL_MS } from "@agentry/core";
import { AppError, type ErrorCode } from "@agentry/errors";
import { type ReplyRecord, replyOfTurn, type StreamEvent } from "./service.js";
import type { RunEnd, RunEvent, RunRecord, TurnRecord } from "./store/types.js";
import type { PendingToolCall } from "./tool-loop.js";

/**
 * How long at least a failed background message's state is kept after it ended, though its events go after the
 * retention: as long as its Idempotency-Key would be, so that a caller that comes back for it within the day is
 * told that it failed and why, not that there is no such message.
 */
const FAILED_STATE_MS = IDEMPOTENCY_KEY_TTL_MS;

export type FailedEvent = { type: "failed"; code: ErrorCode; message: string };
/** One event of a message's log: what a stream sends, or its failure. */
export type LogEvent = StreamEvent | FailedEvent;
export interface LoggedEvent {
  seq: number;
  event: LogEvent;
}

/** A background message's state (docs/api/messages-and-streams.md, "Background messages"). */
export interface BackgroundState {
  id: string;
  agentId: string;
  userId: string | undefined;
  roomId: string | undefined;
  /**
   * `cancelled`: stopped by the kill switch (`error` says so, no reply) or interrupted by a later message (`reply`
   * the text it had, finish reason `cancelled`).
   */
  status: "pending" | "requires_action" | "completed" | "failed" | "cancelled";
  reply: ReplyRecord | null;
  error: { code: ErrorCode; message: string } | null;
  /** While requires_action: the calls waiting for approval, and when the wait ends. */
  approval?: { pendingToolCalls: PendingToolCall[]; expiresAt: Date } | undefined;
}

/** The approval a paused run's record holds, as its state shows it. */
export function approvalOf(record: RunRecord): BackgroundState["approval"] {
  if (!record.approval) return undefined;
  const decided = record.decisions ? (JSON.parse(record.decisions) as Record<string, unknown>) : {};
  const calls = JSON.parse(record.approval.pendingToolCalls) as PendingToolCall[];
  return {
    // Those a partial answer decided wait for the rest, no longer for an answer.
    pendingToolCalls: calls.filter((call) => !(call.id in decided)),
    expiresAt: new Date(record.approval.expiresAt),
  };
}

/** How a message ends whose tool calls waited for approval longer than allowed. */
export function approvalExpired(waitMs: number): AppError {
  const hours = waitMs / 3_600_000;
  const span = hours >= 1 ? `${Math.round(hours * 10) / 10} h` : `${Math.round(waitMs / 1000)} s`;
  return new AppError(
    "APPROVAL_EXPIRED",
    `The message's tool calls waited for approval longer than ${span} (TOOL_APPROVAL_TIMEOUT); send it again.`,
  );
}

/**
 * Whether a log's event ends what its followers are sent for now: its terminal event, or `approval_required` (the
 * log goes on only once a person has decided, as a new run of the message).
 */
export function final(event: LogEvent): boolean {
  return terminal(event) || event.type === "approval_required";
}

/** How a run ends that its process left pending when it stopped. */
export const ABANDONED = new AppError(
  "AGENT_UNAVAILABLE",
  "The message was interrupted: the service generating its reply stopped. Send it again.",
);

/** The event a log ends with. */
export type TerminalEvent = Extract<LogEvent, { type: "completed" | "failed" }>;

export function terminal(event: LogEvent): event is TerminalEvent {
  return event.type === "completed" || event.type === "failed";
}

export function failedEvent(error: AppError): FailedEvent {
  return { type: "failed", code: error.code, message: error.message };
}

/**
 * A run's end as the store keeps it, given its terminal event: its status, its error, the event's data (`result`,
 * given when already encoded) and when it is over (`endTimes`).
 */
export function runEnd(
  event: TerminalEvent,
  retentionMs: number,
  background: boolean,
  result = encodeEvent(0, event).data,
): RunEnd {
  const failed = event.type === "failed";
  const status = failed ? "failed" : "completed";
  return {
    status,
    errorCode: failed ? event.code : null,
    errorMessage: failed ? event.message : null,
    result,
    ...endTimes(retentionMs, background, status),
    ...(event.type === "completed" && event.reply.finishReason === "cancelled" ? { cancelled: true } : {}),
  };
}

export function failure(event: FailedEvent): AppError {
  return new AppError(event.code, event.message);
}

export function expired(record: RunRecord): boolean {
  return record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now();
}

export function forgotten(record: RunRecord): boolean {
  return record.keptUntil !== null && Date.parse(record.keptUntil) <= Date.now();
}

/**
 * When a run ending now is over, its events expire and its record is forgotten: the events after `retentionMs`;
 * the record with them, but a failed background message's after FAILED_STATE_MS if that is longer, its state
 * being what its caller reads.
 */
function endTimes(
  retentionMs: number,
  background: boolean,
  status: RunEnd["status"],
): Pick<RunEnd, "endedAt" | "expiresAt" | "keptUntil"> {
  const endedAt = Date.now();
  const expiresAt = new Date(endedAt + retentionMs).toISOString();
  const kept = background && status === "failed" ? Math.max(retentionMs, FAILED_STATE_MS) : retentionMs;
  return {
    endedAt: new Date(endedAt).toISOString(),
    expiresAt,
    keptUntil: new Date(endedAt + kept).toISOString(),
  };
}

/**
 * The state of a background message whose run is gone, from its stored reply (a completed one's reply is stored
 * for as long as its conversation is); null for any other message.
 */
export function storedBackground(turn: TurnRecord): BackgroundState | null {
  if (!turn.background) return null;
  const reply = replyOfTurn(turn);
  return {
    id: turn.id,
    agentId: turn.agentId,
    userId: reply.userId,
    roomId: reply.roomId,
    status: reply.finishReason === "cancelled" ? "cancelled" : "completed",
    reply,
    error: null,
  };
}

export function abandoned(record: RunRecord): boolean {
  return record.status === "pending" && Date.parse(record.deadlineAt) < Date.now();
}

/**
 * An event as the log keeps it: started `{messageId, agentId, userId, roomId}`, delta `{text}`, tool.call
 * `{id, name, arguments, spent?}` (`spent` on a round's first call: its model call's tokens), tool.result `{call}` (the call with its outcome), approval_required `{pendingToolCalls, tokens?}` (`tokens`: the usage counted with the pause), completed the reply (createdAt as
 * ISO 8601), failed `{code, message}`.
 */
export function encodeEvent(seq: number, event: LogEvent): RunEvent {
  const { type, ...data } = event;
  if (event.type === "completed") {
    return {
      seq,
      type,
      data: JSON.stringify({ ...event.reply, createdAt: event.reply.createdAt.toISOString() }),
    };
  }
  return { seq, type, data: JSON.stringify(data) };
}

export function decodeEvent(event: RunEvent): LogEvent {
  const data = JSON.parse(event.data);
  switch (event.type) {
    case "started":
      return {
        type: "started",
        messageId: data.messageId,
        agentId: data.agentId,
        userId: data.userId ?? undefined,
        roomId: data.roomId ?? undefined,
      };
    case "delta":
      return { type: "delta", text: data.text };
    case "tool.call":
      return {
        type: "tool.call",
        id: data.id,
        name: data.name,
        arguments: data.arguments,
        ...(data.spent ? { spent: data.spent } : {}),
      };
    case "tool.result":
      return { type: "tool.result", call: data.call };
    case "approval_required":
      return {
        type: "approval_required",
        messageId: data.messageId,
        pendingToolCalls: data.pendingToolCalls,
        ...(data.tokens ? { tokens: data.tokens } : {}),
      };
    case "completed":
      return { type: "completed", reply: decodeReply(data) };
    case "failed":
      return { type: "failed", code: data.code, message: data.message };
  }
}

export function decodeReply(data: Omit<ReplyRecord, "createdAt"> & { createdAt: string }): ReplyRecord {
  // A reply logged before replies carried citations has none.
  return { ...data, citations: data.citations ?? [], createdAt: new Date(data.createdAt) };
}
