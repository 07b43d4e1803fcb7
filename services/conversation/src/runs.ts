import { setTimeout as sleep } from "node:timers/promises";
import {
  FALLBACK_MAX_ITEMS,
  fallbackChoices,
  IDEMPOTENCY_KEY_TTL_MS,
  newId,
  type Repetition,
  removeInBatches,
  repeatEvery,
} from "@agentry/core";
import { AppError, asAppError, type ErrorCode } from "@agentry/errors";
import type { ConversationContext } from "./context.js";
import { runKey } from "./keys.js";
import {
  conversationKey,
  type MessageInput,
  type ReplyRecord,
  replyOfTurn,
  type StreamEvent,
  streamMessage,
} from "./service.js";
import type { RunEnd, RunEvent, RunRecord, RunWrite, TurnRecord } from "./store/types.js";

/** STREAM_RETENTION when unset: how long a message's events are kept after it ends. */
export const DEFAULT_STREAM_RETENTION_MS = 60 * 60 * 1000;
/** The longest a log's write waits to be committed with the others of the process, in one transaction. */
const FLUSH_MS = 50;
/** How often a follower on another process than the generating one reads the log for new events. */
const POLL_MS = 100;
/** Events read from the store at a time. */
const PAGE = 500;
/** Beyond a message's own time limits, how long it may stay pending before it is taken for abandoned. */
const DEADLINE_MARGIN_MS = 30_000;
/** How often abandoned and expired runs are looked for. */
const SWEEP_MS = 60_000;
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
  /** false: streams keep no log (they cannot be resumed); the benchmark's baseline. Default true. */
  keepStreams?: boolean;
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
 * store in batches shared by all its runs (GroupWriter): one transaction at most FLUSH_MS after the first write
 * waiting, so the store sees no write per delta, one commit for any number of streams, and nothing is written
 * between the provider's text and the caller. A follower on another process reads the store every POLL_MS until
 * the terminal event: polling needs nothing besides the store both store kinds already are, and its cost is one
 * indexed read per follower and interval, paid only by callers that resume elsewhere.
 *
 * A run still pending past its deadline (its time limits, fallbacks included, plus a margin) was abandoned by a
 * process that stopped: it is ended as failed (AGENT_UNAVAILABLE) by whoever finds it, a reader or the sweep.
 * Ended runs are kept for `retentionMs`, then removed; a failed background message's record (its state, without
 * its events) for FAILED_STATE_MS at least. A completed background message is read from its stored reply once its
 * run is gone (`storedBackground`).
 *
 * A JSON send with an Idempotency-Key has a run too, without events (`recordSend`): like every keyed run it
 * records the key, so that the message sent again to another process meanwhile is answered from this run
 * (keys.ts, `outcome`) instead of being generated again.
 */
export class MessageRuns {
  private readonly live = new Map<string, LiveRun>();
  /**
   * The ids of the keyed JSON sends this process is answering (`recordSend`), until their end is stored; the sweep
   * leaves them alone.
   */
  private readonly sends = new Set<string>();
  private readonly pollMs: number;
  private readonly writer: GroupWriter;
  private sweep: Repetition | undefined;

  /** `context` gives the service's context, of which the runs are part. */
  constructor(
    private readonly context: () => ConversationContext,
    private readonly options: RunsOptions,
  ) {
    this.pollMs = options.pollMs ?? POLL_MS;
    this.writer = new GroupWriter(context, options.flushMs ?? FLUSH_MS);
  }

  private get ctx(): ConversationContext {
    return this.context();
  }

  /** Starts the sweep of abandoned and expired runs. */
  start(): void {
    this.sweep ??= repeatEvery(SWEEP_MS, () => this.sweepOnce());
  }

  /**
   * A streamed reply: its events, numbered, as they come. The message is cancelled when `signal` (the caller's)
   * aborts or the caller stops reading before the end, unless `continued`: then it is generated to its end
   * whatever the caller does. A failure is thrown (the error the service ended the message with), after the events
   * that came before it.
   */
  async *stream(input: MessageInput, signal: AbortSignal, continued = false): AsyncGenerator<LoggedEvent> {
    conversationKey(input);
    if (this.options.keepStreams === false) {
      let seq = 0;
      const generating = continued ? new AbortController().signal : signal;
      for await (const event of streamMessage(this.ctx, input, generating)) {
        seq += 1;
        yield { seq, event };
      }
      return;
    }
    const run = this.begin(input, false, continued ? undefined : signal);
    // Once the caller is gone the reply is no longer paced by its reading.
    if (signal.aborted) run.unpace();
    else signal.addEventListener("abort", () => run.unpace(), { once: true });
    let ended = false;
    try {
      for await (const logged of run.lead()) {
        if (logged.event.type === "failed") throw run.error ?? failure(logged.event);
        yield logged;
      }
      ended = true;
    } finally {
      if (!ended && !continued) run.cancel();
    }
  }

  /**
   * A message answered in the background: recorded as pending before this returns its reply's id, then generated
   * to its end whatever happens to the caller.
   */
  async startBackground(input: MessageInput): Promise<string> {
    conversationKey(input);
    const run = this.begin(input, true, undefined);
    if (!(await run.recorded)) {
      throw new AppError("AGENT_UNAVAILABLE", "The message could not be recorded; retry shortly.", {
        retryAfterSeconds: 1,
      });
    }
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
    if (!record?.logged || expired(record)) {
      throw new AppError("STREAM_NOT_FOUND", `No events are kept for message ${JSON.stringify(id)}.`);
    }
    return this.followStored(record, after, endOnly, signal);
  }

  /**
   * Records a JSON send with an Idempotency-Key (keys.ts) as a run without events: pending from now (committed
   * within SOON_MS, with the logs' next batch), then ended as `reply` settles. The message sent again to another
   * process meanwhile finds it and waits for its end (`outcome`) rather than generating the reply again. Nothing
   * is written on the way from the provider to the caller.
   */
  recordSend(input: MessageInput, reply: Promise<ReplyRecord>): void {
    if (!input.ids) return;
    const record = this.newRecord(input, input.ids.reply, { background: false, logged: false });
    this.sends.add(record.id);
    void this.writer.submit(() => ({ kind: "start", run: record }), true);
    // Soon, as a live run's end: another process following this run reads its end from the store. Its id stays in
    // `sends` until then, as a live run stays in `live`.
    const ended = (end: RunEnd) =>
      void this.writer
        .submit(() => ({ kind: "end", runId: record.id, events: [], end }), true)
        .finally(() => this.sends.delete(record.id));
    const { retentionMs } = this.options;
    reply.then(
      (done) => ended(runEnd({ type: "completed", reply: done }, retentionMs, false)),
      (error: unknown) => ended(runEnd(failedEvent(asAppError(error)), retentionMs, false)),
    );
  }

  /**
   * Whether this process generates the run, or has and is still storing its end: a keyed message sent again finds
   * such a run pending in the store, though its outcome is already decided here (`MessageKeys`).
   */
  generatedHere(id: string): boolean {
    return this.live.has(id) || this.sends.has(id);
  }

  /**
   * The reply a run ends with, wherever it is generated, once it has ended (read from its record, every POLL_MS,
   * when another process generates it); its failure is thrown as the error it ended with.
   */
  async outcome(run: RunRecord): Promise<ReplyRecord> {
    const local = this.live.get(run.id);
    if (local) return local.reply;
    let record = run;
    for (;;) {
      if (record.status === "completed" && record.result) return decodeReply(JSON.parse(record.result));
      if (record.status !== "pending") {
        throw new AppError(
          (record.errorCode as ErrorCode | null) ?? ABANDONED.code,
          record.errorMessage ?? ABANDONED.message,
        );
      }
      if (abandoned(record) && !this.sends.has(record.id)) await this.abandon(record);
      else await sleep(this.pollMs);
      // Deleted meanwhile (its agent purged, its user erased): it will not end.
      record = (await this.ctx.store.getRun(record.accountId, record.agentId, record.id)) ?? {
        ...record,
        status: "failed",
      };
    }
  }

  /**
   * A background message's state while its run is kept, or null when the agent has none by that id (or its run is
   * gone: a completed one is then read from its stored reply, `storedBackground`).
   */
  async background(accountId: string, agentId: string, id: string): Promise<BackgroundState | null> {
    // Generated here: its state as it is now, which the store may not have yet.
    const local = this.live.get(id);
    if (local && local.accountId === accountId && local.agentId === agentId) return local.state();
    let record = await this.ctx.store.getRun(accountId, agentId, id);
    if (!record?.background || forgotten(record)) return null;
    if (record.status === "pending" && abandoned(record) && !this.live.has(id)) {
      await this.abandon(record);
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
    await this.writer.drain();
  }

  private begin(input: MessageInput, background: boolean, signal: AbortSignal | undefined): LiveRun {
    const ids = input.ids ?? { message: newId("message"), reply: newId("message") };
    const controller = new AbortController();
    if (signal) {
      if (signal.aborted) controller.abort();
      else signal.addEventListener("abort", () => controller.abort(), { once: true });
    }
    const record = this.newRecord(input, ids.reply, { background, logged: true });
    const run = new LiveRun(this.ctx, this.writer, record, controller, this.options.retentionMs);
    this.live.set(run.id, run);
    if (input.idempotencyKeyHash) this.ctx.keys.generating(input, run.id, run.reply);
    const generating = { ...input, ids, ...(background ? { background } : {}) };
    const generate = () => run.drive(streamMessage(this.ctx, generating, controller.signal));
    // A background message is generated only once it is recorded: its caller is told of it only then.
    const driving = background ? run.recorded.then((ok) => (ok ? generate() : run.unrecorded())) : generate();
    void driving.finally(() => {
      this.live.delete(run.id);
    });
    return run;
  }

  /** A pending run's record, as its start writes it. */
  private newRecord(
    input: MessageInput,
    id: string,
    kind: Pick<RunRecord, "background" | "logged">,
  ): RunRecord {
    const createdAt = new Date();
    // Every model in line may take its whole time limit.
    const models = 1 + Math.min(fallbackChoices(input.agent?.spec?.settings).length, FALLBACK_MAX_ITEMS);
    return {
      id,
      accountId: input.accountId,
      agentId: input.agent?.id ?? "",
      userId: input.userId ?? null,
      roomId: input.roomId ?? null,
      ...kind,
      idempotencyKey: runKey(input),
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
      keptUntil: null,
    };
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
      if (abandoned(record)) await this.abandon(record);
      else await sleep(this.pollMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      record = (await this.ctx.store.getRun(record.accountId, record.agentId, record.id)) ?? {
        ...record,
        status: "failed",
      };
    }
  }

  /** Ends an abandoned run as failed, unless it has ended meanwhile. */
  private async abandon(run: Pick<RunRecord, "id" | "background">): Promise<void> {
    const ended = await this.ctx.store.endRun(
      run.id,
      [],
      runEnd(failedEvent(ABANDONED), this.options.retentionMs, run.background),
    );
    if (ended)
      this.ctx.logger.warn({ messageId: run.id }, "message abandoned by a stopped process; marked failed");
  }

  private async sweepOnce(): Promise<void> {
    try {
      const now = new Date().toISOString();
      for (const run of await this.ctx.store.abandonedRuns(now, PAGE)) {
        if (!this.live.has(run.id) && !this.sends.has(run.id)) await this.abandon(run);
      }
      const removed = await removeInBatches((limit) => this.ctx.store.removeExpiredRuns(now, limit), PAGE);
      if (removed > 0) this.ctx.logger.debug({ removed }, "expired message logs removed");
      const keys = await removeInBatches((limit) => this.ctx.keys.removeExpired(now, limit), PAGE);
      if (keys > 0) this.ctx.logger.debug({ removed: keys }, "expired idempotency keys of messages removed");
    } catch (error) {
      this.ctx.logger.warn({ err: error }, "could not sweep message logs");
    }
  }
}

/**
 * How soon a new log is written: a moment after the provider call has started, so that the commit does not sit
 * between a fast provider's first text and the caller, and well before any caller could ask another process for it.
 */
const SOON_MS = 2;

/**
 * Commits the writes of every log of this process together: at most `flushMs` after the first write waiting, in
 * one transaction (one commit, one fsync on SQLite, however many streams are running), never on the path from a
 * provider's text to the caller. A write is a thunk, read when its batch is committed, so that a run's events
 * written meanwhile go with it.
 */
class GroupWriter {
  private pending: (() => RunWrite | null)[] = [];
  private committed: ((ok: boolean) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly context: () => ConversationContext,
    private readonly flushMs: number,
  ) {}

  /**
   * Queues a write; answers whether its batch was committed. `soon`: within `SOON_MS` rather than after `flushMs`
   * (a new log, so that another process can find it at once; its provider call is under way).
   */
  submit(write: () => RunWrite | null, soon = false): Promise<boolean> {
    this.pending.push(write);
    const done = new Promise<boolean>((resolve) => this.committed.push(resolve));
    if (soon && !this.immediate) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.immediate = setTimeout(() => this.flush(), SOON_MS);
    } else if (!this.immediate) {
      this.timer ??= setTimeout(() => this.flush(), this.flushMs);
    }
    return done;
  }

  /** Commits what waits, and resolves once every batch is committed. */
  async drain(): Promise<void> {
    this.flush();
    await this.writing;
  }

  private flush(): void {
    clearTimeout(this.timer);
    clearTimeout(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    const thunks = this.pending;
    const committed = this.committed;
    if (thunks.length === 0) return;
    this.pending = [];
    this.committed = [];
    this.writing = this.writing.then(async () => {
      const writes = thunks.map((thunk) => thunk()).filter((write) => write !== null);
      let ok = true;
      try {
        await this.context().store.writeRuns(writes);
      } catch (error) {
        ok = false;
        this.context().logger.warn({ err: error, writes: writes.length }, "could not write message logs");
      }
      for (const resolve of committed) resolve(ok);
    });
  }
}

/** One message generated by this process: its events in memory, written to the store in batches. */
class LiveRun {
  readonly id: string;
  readonly accountId: string;
  readonly agentId: string;
  /** Whether the run is in the store (its first batch committed). */
  readonly recorded: Promise<boolean>;
  /** Resolves once the run has ended and its end is written. */
  done: Promise<void> = Promise.resolve();
  /** Every event so far; event n is at index n - 1. */
  private readonly events: LoggedEvent[] = [];
  /** The error the message ended with, for live followers to throw as it is. */
  error: AppError | undefined;
  /** The reply it ends with, or its failure. */
  readonly reply: Promise<ReplyRecord>;
  private settleReply!: { resolve(reply: ReplyRecord): void; reject(error: AppError): void };
  private ended = false;
  private unwritten: RunEvent[] = [];
  private queued = false;
  private endWritten: Promise<boolean> = Promise.resolve(true);
  private wake: (() => void) | null = null;
  private changed: Promise<void> | null = null;
  /**
   * While the caller that started the stream reads it, the provider's reply is read no faster than that caller
   * takes it (as without the log), so that the reply's end (storing it: a commit) comes after the caller has the
   * text before it, not between the two. "reading": the caller has events to take (the reply waits, `behind`
   * resolving it); "waiting": it has taken them all; "off", for good, once the caller has gone or the reply was
   * cancelled.
   */
  private pace: "reading" | "waiting" | "off" = "off";
  private behind: (() => void) | null = null;

  constructor(
    ctx: ConversationContext,
    private readonly writer: GroupWriter,
    private readonly record: RunRecord,
    private readonly controller: AbortController,
    private readonly retentionMs: number,
  ) {
    this.id = record.id;
    this.accountId = record.accountId;
    this.agentId = record.agentId;
    this.reply = new Promise<ReplyRecord>((resolve, reject) => {
      this.settleReply = { resolve, reject };
    });
    this.reply.catch(() => undefined);
    // A cancelled reply is read on to its end at once.
    controller.signal.addEventListener("abort", () => this.unpace(), { once: true });
    // A background message is committed at once, durably: its caller is answered only then.
    this.recorded = record.background
      ? ctx.store.startRun(record).then(
          () => true,
          (error: unknown) => {
            ctx.logger.warn({ err: error, messageId: record.id }, "could not record a background message");
            return false;
          },
        )
      : writer.submit(() => ({ kind: "start", run: record }), true);
  }

  cancel(): void {
    if (!this.ended) this.controller.abort();
  }

  /** A background message that could not be recorded: it is not generated. */
  unrecorded(): void {
    this.settleReply.reject(new AppError("AGENT_UNAVAILABLE", "The message could not be recorded."));
  }

  /** Its state as a background message (null when it is a stream's), from memory. */
  state(): BackgroundState | null {
    if (!this.record.background) return null;
    const last = this.events.at(-1)?.event;
    return {
      id: this.id,
      agentId: this.agentId,
      userId: this.record.userId ?? undefined,
      roomId: this.record.roomId ?? undefined,
      status: last?.type === "completed" ? "completed" : last?.type === "failed" ? "failed" : "pending",
      reply: last?.type === "completed" ? last.reply : null,
      error: last?.type === "failed" ? { code: last.code, message: last.message } : null,
    };
  }

  async drive(events: AsyncGenerator<StreamEvent>): Promise<void> {
    let resolveDone: () => void = () => undefined;
    this.done = new Promise((resolve) => {
      resolveDone = resolve;
    });
    try {
      for await (const event of events) {
        this.push(event);
        if (this.pace === "reading") {
          await new Promise<void>((resolve) => {
            this.behind = resolve;
          });
        }
      }
    } catch (thrown) {
      const error = asAppError(thrown);
      this.error = error;
      this.push(failedEvent(error));
    } finally {
      await this.endWritten;
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

  /** The caller that started the stream reads it through this; the reply is paced by its reading. */
  async *lead(): AsyncGenerator<LoggedEvent> {
    let next = 0;
    if (this.pace === "off" && !this.controller.signal.aborted) this.pace = "reading";
    try {
      for (;;) {
        while (next < this.events.length) {
          const logged = this.events[next]!;
          next += 1;
          yield logged;
        }
        if (this.ended) return;
        this.changed ??= new Promise((resolve) => {
          this.wake = resolve;
        });
        this.caughtUp();
        await this.changed;
      }
    } finally {
      this.unpace();
    }
  }

  /** The reply is read from the provider as fast as it comes, from now on: its caller has gone. */
  unpace(): void {
    this.pace = "off";
    this.release();
  }

  private caughtUp(): void {
    if (this.pace === "reading") this.pace = "waiting";
    this.release();
  }

  private release(): void {
    const behind = this.behind;
    this.behind = null;
    behind?.();
  }

  private push(event: LogEvent): void {
    const seq = this.events.length + 1;
    this.events.push({ seq, event });
    const encoded = encodeEvent(seq, event);
    this.unwritten.push(encoded);
    const wake = this.wake;
    this.changed = null;
    this.wake = null;
    // The caller, woken, has this event to take before it has caught up again.
    if (this.pace === "waiting") this.pace = "reading";
    if (terminal(event)) {
      this.ended = true;
      if (event.type === "completed") this.settleReply.resolve(event.reply);
      else if (event.type === "failed") this.settleReply.reject(this.error ?? failure(event));
      const end = runEnd(event, this.retentionMs, this.record.background, encoded.data);
      // Soon: other processes read its end from the store.
      this.endWritten = this.writer.submit(
        () => ({ kind: "end", runId: this.id, events: this.take(), end }),
        true,
      );
    } else if (!this.queued) {
      this.queued = true;
      this.writer.submit(() => {
        this.queued = false;
        const events = this.take();
        return events.length > 0 ? { kind: "events", runId: this.id, events } : null;
      });
    }
    wake?.();
  }

  private take(): RunEvent[] {
    const events = this.unwritten;
    this.unwritten = [];
    return events;
  }
}

/** The event a log ends with. */
type TerminalEvent = Extract<LogEvent, { type: "completed" | "failed" }>;

function terminal(event: LogEvent): event is TerminalEvent {
  return event.type === "completed" || event.type === "failed";
}

function failedEvent(error: AppError): FailedEvent {
  return { type: "failed", code: error.code, message: error.message };
}

/**
 * A run's end as the store keeps it, given its terminal event: its status, its error, the event's data (`result`,
 * given when already encoded) and when it is over (`endTimes`).
 */
function runEnd(
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
  };
}

function failure(event: FailedEvent): AppError {
  return new AppError(event.code, event.message);
}

function expired(record: RunRecord): boolean {
  return record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now();
}

function forgotten(record: RunRecord): boolean {
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
    status: "completed",
    reply,
    error: null,
  };
}

function abandoned(record: RunRecord): boolean {
  return record.status === "pending" && Date.parse(record.deadlineAt) < Date.now();
}

/**
 * An event as the log keeps it: started `{messageId, agentId, userId, roomId}`, delta `{text}`, tool.call
 * `{id, name, arguments}`, tool.result `{call}` (the call with its outcome), completed the reply (createdAt as
 * ISO 8601), failed `{code, message}`.
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
    case "tool.call":
      return { type: "tool.call", id: data.id, name: data.name, arguments: data.arguments };
    case "tool.result":
      return { type: "tool.result", call: data.call };
    case "completed":
      return { type: "completed", reply: decodeReply(data) };
    case "failed":
      return { type: "failed", code: data.code, message: data.message };
  }
}

function decodeReply(data: Omit<ReplyRecord, "createdAt"> & { createdAt: string }): ReplyRecord {
  return { ...data, createdAt: new Date(data.createdAt) };
}
