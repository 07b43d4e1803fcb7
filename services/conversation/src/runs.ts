import { setTimeout as sleep } from "node:timers/promises";
import {
  FALLBACK_MAX_ITEMS,
  fallbackChoices,
  newId,
  type Repetition,
  removeInBatches,
  repeatEvery,
} from "@agentry/core";
import { AppError, type ErrorCode } from "@agentry/errors";
import type { ConversationContext } from "./context.js";
import {
  conversationKey,
  type MessageInput,
  type ReplyRecord,
  type StreamEvent,
  streamMessage,
} from "./service.js";
import type { RunEvent, RunRecord } from "./store/types.js";

/** STREAM_RETENTION when unset: how long a message's events are kept after it ends. */
export const DEFAULT_STREAM_RETENTION_MS = 60 * 60 * 1000;
/** How long after its first unwritten event a running message's events are written, in one batch. */
const FLUSH_MS = 50;
/** How often a follower on another process than the generating one reads the log for new events. */
const POLL_MS = 100;
/** Events read from the store at a time. */
const PAGE = 500;
/** Beyond a message's own time limits, how long it may stay pending before it is taken for abandoned. */
const DEADLINE_MARGIN_MS = 30_000;
/** How often abandoned and expired runs are looked for. */
const SWEEP_MS = 60_000;

export type FailedEvent = { type: "failed"; code: ErrorCode; message: string };
/** One event of a message's log: what a stream sends, or its failure. */
export type LogEvent = StreamEvent | FailedEvent;
export interface LoggedEvent {
  seq: number;
  event: LogEvent;
}

/** A background message's state (decisions.md, "Idempotency, background messages, ..."). */
export interface BackgroundState {
  id: string;
  agentId: string;
  userId: string | undefined;
  roomId: string | undefined;
  status: "pending" | "completed" | "failed";
  reply: ReplyRecord | null;
  error: { code: ErrorCode; message: string } | null;
}

export interface RunsOptions {
  /** STREAM_RETENTION in milliseconds. */
  retentionMs: number;
  flushMs?: number;
  pollMs?: number;
}

const ABANDONED = new AppError(
  "AGENT_UNAVAILABLE",
  "The message was interrupted: the service generating its reply stopped. Send it again.",
);

/**
 * The event logs of streamed and background messages ("runs"). The process that generates a message keeps its
 * events in memory while it runs (its own followers read them there, woken at each event) and writes them to the
 * store in batches, at most FLUSH_MS after each first unwritten event and at once with the terminal event, so the
 * store sees no write per delta and nothing is written between the provider's first text and the caller. A
 * follower on another process reads the store every POLL_MS until the terminal event: polling needs nothing
 * besides the store both store kinds already are, and its cost is one indexed read per follower and interval,
 * paid only by callers that resume elsewhere.
 *
 * A run still pending past its deadline (its time limits, fallbacks included, plus a margin) was abandoned by a
 * process that stopped: it is ended as failed (AGENT_UNAVAILABLE) by whoever finds it, a reader or the sweep.
 * Ended runs are kept for `retentionMs`, then removed.
 */
export class MessageRuns {
  private readonly live = new Map<string, LiveRun>();
  private readonly flushMs: number;
  private readonly pollMs: number;
  private sweep: Repetition | undefined;

  /** `context` gives the service's context, of which the runs are part. */
  constructor(
    private readonly context: () => ConversationContext,
    private readonly options: RunsOptions,
  ) {
    this.flushMs = options.flushMs ?? FLUSH_MS;
    this.pollMs = options.pollMs ?? POLL_MS;
  }

  private get ctx(): ConversationContext {
    return this.context();
  }

  /** Starts the sweep of abandoned and expired runs. */
  start(): void {
    this.sweep ??= repeatEvery(SWEEP_MS, () => this.sweepOnce());
  }

  /**
   * A streamed reply: its events, numbered, as they come. With `signal` the message is cancelled when it aborts or
   * when the caller stops reading before the end; without, it is generated to its end whatever the caller does. A
   * failure is thrown (the error the service ended the message with), after the events that came before it.
   */
  async *stream(input: MessageInput, signal: AbortSignal | undefined): AsyncGenerator<LoggedEvent> {
    conversationKey(input);
    const run = this.begin(input, false, signal);
    let ended = false;
    try {
      for await (const logged of run.follow(0, false)) {
        if (logged.event.type === "failed") throw run.error ?? failure(logged.event);
        yield logged;
      }
      ended = true;
    } finally {
      if (!ended && signal) run.cancel();
    }
  }

  /**
   * A message answered in the background: recorded as pending before this returns its reply's id, then generated
   * to its end whatever happens to the caller.
   */
  async startBackground(input: MessageInput): Promise<string> {
    conversationKey(input);
    const run = this.begin(input, true, undefined);
    await run.recorded;
    return run.id;
  }

  /**
   * The events of a message after `after`, then its live ones until its terminal event (only that with
   * `endOnly`), wherever it is generated. Throws STREAM_NOT_FOUND for a message with no log kept, before any
   * event.
   */
  async follow(
    scope: { accountId: string; agentId: string },
    id: string,
    after: number,
    endOnly: boolean,
    signal: AbortSignal,
  ): Promise<AsyncIterable<LoggedEvent>> {
    const local = this.live.get(id);
    if (local && local.accountId === scope.accountId && local.agentId === scope.agentId) {
      return local.follow(after, endOnly);
    }
    const record = await this.ctx.store.getRun(scope.accountId, scope.agentId, id);
    if (!record || expired(record)) {
      throw new AppError("STREAM_NOT_FOUND", `No events are kept for message ${JSON.stringify(id)}.`);
    }
    return this.followStored(record, after, endOnly, signal);
  }

  /** A background message's state, or null when the agent has none by that id (or its log expired). */
  async background(accountId: string, agentId: string, id: string): Promise<BackgroundState | null> {
    let record = await this.ctx.store.getRun(accountId, agentId, id);
    if (!record?.background || expired(record)) return null;
    if (record.status === "pending" && abandoned(record) && !this.live.has(id)) {
      await this.abandon(record.id);
      record = (await this.ctx.store.getRun(accountId, agentId, id)) ?? record;
    }
    const state: BackgroundState = {
      id: record.id,
      agentId: record.agentId,
      userId: record.userId ?? undefined,
      roomId: record.roomId ?? undefined,
      status: record.status,
      reply: null,
      error: null,
    };
    if (record.status === "completed" && record.result) {
      state.reply = decodeReply(JSON.parse(record.result));
    } else if (record.status === "failed") {
      state.error = {
        code: (record.errorCode as ErrorCode | null) ?? "INTERNAL_ERROR",
        message: record.errorMessage ?? "",
      };
    }
    return state;
  }

  /** Cancels the messages this process generates and waits until their logs are ended; stops the sweep. */
  async close(): Promise<void> {
    await this.sweep?.stop();
    const running = [...this.live.values()];
    for (const run of running) run.cancel();
    await Promise.all(running.map((run) => run.done));
  }

  private begin(input: MessageInput, background: boolean, signal: AbortSignal | undefined): LiveRun {
    const ids = { message: newId("message"), reply: newId("message") };
    const controller = new AbortController();
    if (signal) {
      if (signal.aborted) controller.abort();
      else signal.addEventListener("abort", () => controller.abort(), { once: true });
    }
    const createdAt = new Date();
    // Every model in line may take its whole time limit.
    const models = 1 + Math.min(fallbackChoices(input.agent?.spec?.settings).length, FALLBACK_MAX_ITEMS);
    const record: RunRecord = {
      id: ids.reply,
      accountId: input.accountId,
      agentId: input.agent?.id ?? "",
      userId: input.userId ?? null,
      roomId: input.roomId ?? null,
      background,
      status: "pending",
      errorCode: null,
      errorMessage: null,
      result: null,
      createdAt: createdAt.toISOString(),
      deadlineAt: new Date(
        createdAt.getTime() + models * this.ctx.limits.timeoutMs + DEADLINE_MARGIN_MS,
      ).toISOString(),
      endedAt: null,
      expiresAt: null,
    };
    const run = new LiveRun(this.ctx, record, controller, this.flushMs, this.options.retentionMs);
    this.live.set(run.id, run);
    const generate = () => run.drive(streamMessage(this.ctx, { ...input, ids }, controller.signal));
    // A background message is generated only once it is recorded: its caller is told of it only then.
    const driving = background ? run.recorded.then(generate, () => undefined) : generate();
    void driving.finally(() => {
      this.live.delete(run.id);
    });
    return run;
  }

  private async *followStored(
    first: RunRecord,
    after: number,
    endOnly: boolean,
    signal: AbortSignal,
  ): AsyncGenerator<LoggedEvent> {
    let record = first;
    // From the event before `after`, to know whether the log's last event is terminal.
    let last = Math.max(0, after - 1);
    let lastType: RunEvent["type"] | null = null;
    for (;;) {
      const ended = record.status !== "pending";
      for (;;) {
        const events = await this.ctx.store.runEvents(record.id, last, PAGE);
        for (const event of events) {
          last = event.seq;
          lastType = event.type;
          if (event.seq <= after) continue;
          const decoded = decodeEvent(event);
          if (!endOnly || terminal(decoded)) yield { seq: event.seq, event: decoded };
        }
        if (events.length < PAGE) break;
      }
      if (lastType === "completed" || lastType === "failed") return;
      if (ended) {
        // Ended without its terminal event in the log: abandoned (the sweep wrote none).
        const seq = last + 1;
        if (seq > after) {
          yield {
            seq,
            event: {
              type: "failed",
              code: (record.errorCode as ErrorCode | null) ?? ABANDONED.code,
              message: record.errorMessage ?? ABANDONED.message,
            },
          };
        }
        return;
      }
      if (abandoned(record)) await this.abandon(record.id);
      else await sleep(this.pollMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      record = (await this.ctx.store.getRun(record.accountId, record.agentId, record.id)) ?? {
        ...record,
        status: "failed",
      };
    }
  }

  /** Ends an abandoned run as failed, unless it has ended meanwhile. */
  private async abandon(id: string): Promise<void> {
    const now = new Date();
    const ended = await this.ctx.store.endRun(id, [], {
      status: "failed",
      errorCode: ABANDONED.code,
      errorMessage: ABANDONED.message,
      result: null,
      endedAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.options.retentionMs).toISOString(),
    });
    if (ended)
      this.ctx.logger.warn({ messageId: id }, "message abandoned by a stopped process; marked failed");
  }

  private async sweepOnce(): Promise<void> {
    try {
      const now = new Date().toISOString();
      for (const id of await this.ctx.store.abandonedRuns(now, PAGE)) {
        if (!this.live.has(id)) await this.abandon(id);
      }
      const removed = await removeInBatches((limit) => this.ctx.store.removeExpiredRuns(now, limit), PAGE);
      if (removed > 0) this.ctx.logger.debug({ removed }, "expired message logs removed");
    } catch (error) {
      this.ctx.logger.warn({ err: error }, "could not sweep message logs");
    }
  }
}

/** One message generated by this process: its events in memory, written to the store in batches. */
class LiveRun {
  readonly id: string;
  readonly accountId: string;
  readonly agentId: string;
  /** Resolves once the run is in the store (or could not be written, which is logged). */
  readonly recorded: Promise<void>;
  /** Resolves once the run has ended and its end is written. */
  done: Promise<void> = Promise.resolve();
  /** Every event so far; event n is at index n - 1. */
  private readonly events: LoggedEvent[] = [];
  /** The error the message ended with, for live followers to throw as it is. */
  error: AppError | undefined;
  private ended = false;
  private unwritten: RunEvent[] = [];
  private writes: Promise<unknown>;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | null = null;
  private changed: Promise<void> | null = null;

  constructor(
    private readonly ctx: ConversationContext,
    record: RunRecord,
    private readonly controller: AbortController,
    private readonly flushMs: number,
    private readonly retentionMs: number,
  ) {
    this.id = record.id;
    this.accountId = record.accountId;
    this.agentId = record.agentId;
    this.recorded = ctx.store.startRun(record).catch((error: unknown) => {
      ctx.logger.warn({ err: error, messageId: record.id }, "could not record the message's event log");
      if (record.background) throw error;
    });
    this.writes = this.recorded.catch(() => undefined);
  }

  cancel(): void {
    if (!this.ended) this.controller.abort();
  }

  async drive(events: AsyncGenerator<StreamEvent>): Promise<void> {
    let resolveDone: () => void = () => undefined;
    this.done = new Promise((resolve) => {
      resolveDone = resolve;
    });
    try {
      for await (const event of events) this.push(event);
    } catch (thrown) {
      const error =
        thrown instanceof AppError
          ? thrown
          : new AppError("INTERNAL_ERROR", "Internal error.", { cause: thrown });
      this.error = error;
      this.push({ type: "failed", code: error.code, message: error.message });
    } finally {
      await this.writes;
      resolveDone();
    }
  }

  /** The events after `after`, then the live ones, until the terminal event. */
  async *follow(after: number, endOnly: boolean): AsyncGenerator<LoggedEvent> {
    let next = Math.max(0, after);
    for (;;) {
      while (next < this.events.length) {
        const logged = this.events[next]!;
        next += 1;
        if (!endOnly || terminal(logged.event)) yield logged;
      }
      if (this.ended) return;
      this.changed ??= new Promise((resolve) => {
        this.wake = resolve;
      });
      await this.changed;
    }
  }

  private push(event: LogEvent): void {
    const seq = this.events.length + 1;
    this.events.push({ seq, event });
    this.unwritten.push(encodeEvent(seq, event));
    const wake = this.wake;
    this.changed = null;
    this.wake = null;
    if (terminal(event)) {
      this.ended = true;
      clearTimeout(this.timer);
      this.end(event);
    } else {
      this.timer ??= setTimeout(() => this.flush(), this.flushMs);
    }
    wake?.();
  }

  private flush(): void {
    this.timer = undefined;
    const batch = this.unwritten;
    if (batch.length === 0) return;
    this.unwritten = [];
    this.writes = this.writes.then(() =>
      this.ctx.store.appendRunEvents(this.id, batch).catch((error: unknown) => {
        this.ctx.logger.warn({ err: error, messageId: this.id }, "could not write message events");
      }),
    );
  }

  private end(event: LogEvent): void {
    const batch = this.unwritten;
    this.unwritten = [];
    const endedAt = new Date();
    const failed = event.type === "failed";
    this.writes = this.writes.then(() =>
      this.ctx.store
        .endRun(this.id, batch, {
          status: failed ? "failed" : "completed",
          errorCode: failed ? event.code : null,
          errorMessage: failed ? event.message : null,
          result: batch.at(-1)?.data ?? null,
          endedAt: endedAt.toISOString(),
          expiresAt: new Date(endedAt.getTime() + this.retentionMs).toISOString(),
        })
        .catch((error: unknown) => {
          this.ctx.logger.warn({ err: error, messageId: this.id }, "could not end the message's event log");
        }),
    );
  }
}

function terminal(event: LogEvent): boolean {
  return event.type === "completed" || event.type === "failed";
}

function failure(event: FailedEvent): AppError {
  return new AppError(event.code, event.message);
}

function expired(record: RunRecord): boolean {
  return record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now();
}

function abandoned(record: RunRecord): boolean {
  return record.status === "pending" && Date.parse(record.deadlineAt) < Date.now();
}

/**
 * An event as the log keeps it: started `{messageId, agentId, userId, roomId}`, delta `{text}`, completed the
 * reply (createdAt as ISO 8601), failed `{code, message}`.
 */
function encodeEvent(seq: number, event: LogEvent): RunEvent {
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

function decodeEvent(event: RunEvent): LogEvent {
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
    case "completed":
      return { type: "completed", reply: decodeReply(data) };
    case "failed":
      return { type: "failed", code: data.code, message: data.message };
  }
}

function decodeReply(data: Omit<ReplyRecord, "createdAt"> & { createdAt: string }): ReplyRecord {
  return { ...data, createdAt: new Date(data.createdAt) };
}
