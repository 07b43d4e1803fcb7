import type { ToolCallStarted } from "@agentry/sdk";
import { ApiError, Observable, send } from "../api";
import { readEvents } from "../sse";

/**
 * The replies the chat is receiving, kept outside the page: leaving the chat for another page does not stop
 * them, and coming back shows them where they are. Each is sent with `onDisconnect: "continue"`, so the server
 * finishes and stores it whatever happens to this tab; one still running when the tab reloads is taken up again
 * from the last event it had (`GET .../messages/{id}/events` with `Last-Event-ID`), as kept in sessionStorage.
 */

/** A tool call of a reply: as `tool.call` started it, then with the outcome `tool.result` gave (`ToolCall`). */
export type ToolCall = ToolCallStarted & { ok?: boolean; output?: unknown; error?: string };

export interface Turn {
  key: string;
  role: "user" | "assistant";
  text: string;
  streaming?: boolean;
  stopped?: boolean;
  error?: ApiError;
  tools?: ToolCall[];
  meta?: string;
}

/** Where a message goes: an agent, a user and a room (blank: the default ones). */
export interface Conversation {
  agentId: string;
  userId: string;
  roomId: string;
}

export interface LiveRun extends Conversation {
  local: number;
  userText: string;
  /** The reply's id, once `message.started` has named it. */
  messageId?: string;
  lastEventId?: string;
  reply: Turn;
}

export function conversationKey({ agentId, userId, roomId }: Conversation): string {
  return `${agentId}\u0000${userId}\u0000${roomId}`;
}

const KEPT = "agentry.console.chat-runs";
/** Attempts at taking a dropped stream up again before the reply is shown as broken. */
const RESUMES = 3;

export const liveRuns = new Observable<LiveRun[]>([]);
const controllers = new Map<number, AbortController>();
let nextLocal = 0;

function change(local: number, update: (run: LiveRun) => LiveRun): void {
  liveRuns.set(liveRuns.value.map((run) => (run.local === local ? update(run) : run)));
  keep();
}

function changeReply(local: number, update: (turn: Turn) => Turn): void {
  change(local, (run) => ({ ...run, reply: update(run.reply) }));
}

type KeptRun = Conversation &
  Pick<LiveRun, "userText" | "messageId" | "lastEventId"> &
  Pick<Turn, "text" | "tools">;

/** The runs still streaming, in this tab's sessionStorage, for a reload to take up. */
function keep(): void {
  const kept: KeptRun[] = liveRuns.value
    .filter((run) => run.reply.streaming && run.messageId !== undefined)
    .map((run) => ({
      agentId: run.agentId,
      userId: run.userId,
      roomId: run.roomId,
      userText: run.userText,
      messageId: run.messageId,
      lastEventId: run.lastEventId,
      text: run.reply.text,
      tools: run.reply.tools,
    }));
  try {
    if (kept.length > 0) sessionStorage.setItem(KEPT, JSON.stringify(kept));
    else sessionStorage.removeItem(KEPT);
  } catch {
    // Storage refused (private mode, quota): the reply is still stored by the server.
  }
}

function newRun(conversation: Conversation, userText: string, reply: Partial<Turn> = {}): LiveRun {
  const local = ++nextLocal;
  return {
    ...conversation,
    local,
    userText,
    reply: { key: `live-${local}`, role: "assistant", text: "", streaming: true, tools: [], ...reply },
  };
}

function meta(data: Record<string, unknown>): string {
  const usage = data.usage as { totalTokens?: number } | undefined;
  return `${String(data.modelProvider)}/${String(data.model)} · ${usage?.totalTokens ?? 0} tokens · ${String(data.latencyMs)} ms`;
}

/** Applies one event of the reply's stream; answers whether it ended the stream. */
function apply(local: number, event: { id?: string; event: string; data: string }): boolean {
  const data = JSON.parse(event.data) as Record<string, unknown>;
  if (event.id !== undefined) change(local, (run) => ({ ...run, lastEventId: event.id }));
  switch (event.event) {
    case "message.started":
      change(local, (run) => ({ ...run, messageId: String(data.id) }));
      return false;
    case "message.delta":
      changeReply(local, (turn) => ({ ...turn, text: turn.text + String(data.text ?? "") }));
      return false;
    case "tool.call":
      changeReply(local, (turn) => ({
        ...turn,
        tools: [...(turn.tools ?? []), data as unknown as ToolCall],
      }));
      return false;
    case "tool.result":
      changeReply(local, (turn) => ({
        ...turn,
        tools: (turn.tools ?? []).map((tool) => (tool.id === data.id ? { ...tool, ...data } : tool)),
      }));
      return false;
    case "message.completed":
      changeReply(local, (turn) => ({
        ...turn,
        text: String(data.text ?? turn.text),
        streaming: false,
        meta: meta(data),
      }));
      return true;
    case "error":
      changeReply(local, (turn) => ({
        ...turn,
        streaming: false,
        error: new ApiError(0, String(data.code), String(data.message)),
      }));
      return true;
    default:
      return false;
  }
}

function runOf(local: number): LiveRun | undefined {
  return liveRuns.value.find((run) => run.local === local);
}

/**
 * Reads the reply's stream to its end: the send's answer first, then, if the connection drops before the
 * terminal event, its events after the last one seen.
 */
async function follow(local: number, open: (signal: AbortSignal) => Promise<Response>): Promise<void> {
  const abort = new AbortController();
  controllers.set(local, abort);
  let attempts = 0;
  let failure: unknown = null;
  try {
    for (;;) {
      try {
        const response = await open(abort.signal);
        for await (const event of readEvents(response.body!)) {
          if (apply(local, event)) return;
        }
        failure = new ApiError(0, "STREAM_BROKEN", "The reply's stream ended before the reply did.");
      } catch (error) {
        if (abort.signal.aborted) return;
        failure = error;
        // A refusal of the request itself (a 4xx) is the answer; only a dropped connection is taken up again.
        if (error instanceof ApiError && error.status >= 400 && error.status < 500) break;
      }
      const run = runOf(local);
      if (!run?.messageId || attempts >= RESUMES) break;
      attempts += 1;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempts));
      open = (signal) => resumeStream(runOf(local)!, signal);
    }
    changeReply(local, (turn) => ({
      ...turn,
      error:
        failure instanceof ApiError
          ? failure
          : new ApiError(0, "STREAM_BROKEN", `The reply's stream broke: ${String(failure)}`),
    }));
  } finally {
    controllers.delete(local);
    changeReply(local, (turn) => ({ ...turn, streaming: false }));
  }
}

function resumeStream(run: LiveRun, signal: AbortSignal): Promise<Response> {
  return send("GET", `/v1/agents/${run.agentId}/messages/${run.messageId}/events`, {
    signal,
    headers: { accept: "text/event-stream", "Last-Event-ID": run.lastEventId ?? "0" },
  });
}

/** Sends a message; its reply streams into `liveRuns`. */
export function sendMessage(conversation: Conversation, text: string): void {
  const run = newRun(conversation, text);
  liveRuns.set([...liveRuns.value, run]);
  const { agentId, userId, roomId } = conversation;
  void follow(run.local, (signal) =>
    send("POST", `/v1/agents/${agentId}/messages`, {
      body: {
        text,
        stream: true,
        onDisconnect: "continue",
        ...(userId ? { userId } : {}),
        ...(roomId ? { roomId } : {}),
      },
      signal,
      headers: { accept: "text/event-stream" },
    }),
  );
}

/** Stops following a reply here; the server still finishes it and the conversation keeps it. */
export function stopFollowing(local: number): void {
  controllers.get(local)?.abort();
  changeReply(local, (turn) => ({ ...turn, streaming: false, stopped: true }));
}

let resumed = false;

/** Takes up the replies this tab was receiving before it reloaded (once per page load). */
export function resumeKeptRuns(): void {
  if (resumed) return;
  resumed = true;
  let kept: KeptRun[] = [];
  try {
    kept = JSON.parse(sessionStorage.getItem(KEPT) ?? "[]") as KeptRun[];
  } catch {
    return;
  }
  for (const saved of kept) {
    if (!saved.messageId) continue;
    const run: LiveRun = {
      ...newRun(saved, saved.userText, { text: saved.text, tools: saved.tools ?? [] }),
      messageId: saved.messageId,
      ...(saved.lastEventId !== undefined ? { lastEventId: saved.lastEventId } : {}),
    };
    liveRuns.set([...liveRuns.value, run]);
    void follow(run.local, (signal) => resumeStream(runOf(run.local)!, signal));
  }
}
