import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { replyUsage } from "@agentry/budgets";
import {
  FALLBACK_MAX_ITEMS,
  fallbackChoices,
  newId,
  type Repetition,
  removeInBatches,
  repeatEvery,
} from "@agentry/core";
import { AppError, asAppError, type ErrorCode, invalid } from "@agentry/errors";
import { type Agent, AgentSchema } from "@agentry/proto";
import { fromJson, type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { specJsonOf } from "./agent-spec.js";
import type { TurnContext } from "./context.js";
import { ConversationQueue, conflictMode, type Place } from "./conversation-queue.js";
import { messageFailed, messageRequiresAction } from "./events.js";
import { LiveRun, type PauseOf } from "./live-run.js";
import {
  ABANDONED,
  abandoned,
  approvalExpired,
  approvalOf,
  type BackgroundState,
  decodeEvent,
  decodeReply,
  encodeEvent,
  expired,
  failedEvent,
  failure,
  final,
  forgotten,
  type LoggedEvent,
  runEnd,
} from "./run-records.js";
import { GroupWriter } from "./run-writer.js";
import {
  conversationKey,
  type MessageInput,
  type ReplyRecord,
  replyOfTurn,
  sendMessage,
  streamMessage,
} from "./service.js";
import type { CallRecord, RunEnd, RunEvent, RunRecord } from "./store/types.js";
import type { ApprovalDecision, PendingToolCall, StoredRound } from "./tool-loop.js";

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
/** How often abandoned and expired runs (and expired message keys, idempotent-sends.ts) are looked for. */
export const SWEEP_MS = 60_000;

/** RUN_LEASE_MS when unset: how long a background message's lease lasts unless its process renews it. */
export const DEFAULT_LEASE_MS = 10_000;
/** RUN_LEASE_RENEW_MS when unset: how often a process renews the leases of the background messages it generates. */
export const DEFAULT_LEASE_RENEW_MS = 3_000;
/** RUN_TAKEOVER_SCAN_MS when unset: how often a process looks for background messages whose lease expired. */
export const DEFAULT_TAKEOVER_SCAN_MS = 2_000;
/** How the messages of an agent stopped by `cancelAgent` end. */
const STOPPED = new AppError(
  "AGENT_UNAVAILABLE",
  "The message was stopped: every message of the agent was cancelled.",
);
/** TOOL_APPROVAL_TIMEOUT when unset: how long a message paused for tool approval waits before it fails. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** Takeovers of one run after which it is ended as failed: a message that stops every process taking it. */
const MAX_TAKEOVERS = 3;

/** The timing of background messages' leases. */
export interface RunLeases {
  /** RUN_LEASE_MS. */
  leaseMs: number;
  /** RUN_LEASE_RENEW_MS. */
  renewMs: number;
  /** RUN_TAKEOVER_SCAN_MS. */
  scanMs: number;
}

export interface RunsOptions extends Partial<RunLeases> {
  /** STREAM_RETENTION in milliseconds. */
  retentionMs: number;
  /** TOOL_APPROVAL_TIMEOUT in milliseconds: how long a message paused for tool approval waits. */
  approvalTimeoutMs?: number;
  /** false: streams keep no log (they cannot be resumed); the benchmark's baseline. Default true. */
  keepStreams?: boolean;
  /**
   * false: background messages hold no lease and are not taken over when their process dies; the benchmark's
   * baseline. Default true.
   */
  durable?: boolean;
  flushMs?: number;
  pollMs?: number;
}

/**
 * A keyed send's hold on the run it starts (idempotent-sends.ts): the key the run records, so that the message
 * sent again to another process finds the run, and who is told of the run as soon as it is begun.
 */
export interface RunClaim {
  key: NonNullable<RunRecord["idempotencyKey"]>;
  begun(run: LiveRun): void;
}

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
 * (idempotent-sends.ts, `outcome`) instead of being generated again.
 *
 * The runs generated here are owned by this process until they end (`live`); it alone writes their events and
 * ends them. A run in the store that no process owns any more is one past its deadline.
 *
 * Durable runs: a background message's run holds a lease (its holder, this process, and an expiry), renewed every
 * `renewMs` by one statement for all the process's runs while they are generated. Every `scanMs` each process
 * looks for pending runs whose lease expired (their process stopped, or was stopped) and claims each with one
 * conditional update, so that one process only takes it: it generates the message again, from the message as
 * recorded with the run (`input`) and the steps its log has. Rounds of tool calls whose outcomes are stored are
 * not run again (a tool may have effects; an outcome is committed as soon as it is known); the model's text of
 * the unfinished round is generated again, its log going on after the events it has. A reply stored by the process
 * that stopped ends the run with it. The reply is stored once, with its `message.completed` event, in one
 * transaction. A process that stops gracefully lets its background runs go (their leases expire at once) rather
 * than failing them. A process that finds its lease taken (it was paused past its expiry) stops generating.
 *
 * Tool approvals: a turn about to call a tool that waits for a person's approval ends its log, for now, with
 * `approval_required` and pauses its run (one transaction with its `message.requires_action` event): the run
 * stays pending, without a lease, as a background message (whatever it was sent as) holding the calls to decide
 * on and `input`. `approve` records the person's answers on the run with one conditional update; once every call
 * is decided the same update leases the run to this process, which generates it on from its stored steps as a
 * takeover does, the answers applied (kept on the run, for a process that takes it over later). Unanswered for
 * `approvalTimeoutMs`, the run is ended failed (APPROVAL_EXPIRED) by the scan of whichever process ends it first.
 */
export class MessageRuns {
  private readonly live = new Map<string, LiveRun>();
  /**
   * The ids of the keyed JSON sends this process is answering (`recordSend`), until their end is stored; the sweep
   * leaves them alone.
   */
  private readonly sends = new Set<string>();
  /** The background runs whose lease this process holds and renews (recorded, and not yet ended here). */
  private readonly held = new Set<string>();
  /** This process, as the holder of its runs' leases. */
  private readonly holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly writer: GroupWriter;
  private sweep: Repetition | undefined;
  private renewal: Repetition | undefined;
  private scan: Repetition | undefined;
  private closing = false;
  /** The conversations' lines: one message of a conversation answered at a time (conversation-queue.ts). */
  readonly queue: ConversationQueue;

  /** `turns`: what generating a message uses (service.ts); its store keeps the runs. */
  constructor(
    private readonly turns: TurnContext,
    private readonly options: RunsOptions,
  ) {
    this.pollMs = options.pollMs ?? POLL_MS;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.writer = new GroupWriter(turns.store, turns.logger, options.flushMs ?? FLUSH_MS);
    this.queue = new ConversationQueue(turns.store, turns.logger, this.holder, {
      leaseMs: this.leaseMs,
      pollMs: this.pollMs,
    });
  }

  /** Starts the sweep of abandoned and expired runs, the renewal of leases and the scan for runs to take over. */
  start(): void {
    this.sweep ??= repeatEvery(SWEEP_MS, () => this.sweepOnce());
    this.renewal ??= repeatEvery(this.options.renewMs ?? DEFAULT_LEASE_RENEW_MS, () => this.renewOnce());
    this.scan ??= repeatEvery(this.options.scanMs ?? DEFAULT_TAKEOVER_SCAN_MS, () => this.scanOnce());
    this.queue.start();
  }

  /**
   * A streamed reply: its events, numbered, as they come. The message is cancelled when `signal` (the caller's)
   * aborts or the caller stops reading before the end, unless `continued`: then it is generated to its end
   * whatever the caller does. A failure is thrown (the error the service ended the message with), after the events
   * that came before it. A keyed send's `claim` is told of the run (none is made when streams keep no log).
   */
  stream(
    input: MessageInput,
    signal: AbortSignal,
    continued = false,
    claim?: RunClaim,
  ): AsyncIterable<LoggedEvent> {
    if (this.options.keepStreams === false) return this.unlogged(input, signal, continued);
    return new LedStream(async () => {
      conversationKey(input);
      const ids = input.ids ?? { message: newId("message"), reply: newId("message") };
      const place = await this.join({ ...input, ids });
      const run = this.begin({ ...input, ids }, false, continued ? undefined : signal, claim, place);
      // Once the caller is gone the reply is no longer paced by its reading.
      if (signal.aborted) run.unpace();
      else signal.addEventListener("abort", () => run.unpace(), { once: true });
      run.startLead();
      return run;
    }, continued);
  }

  /** A streamed reply without a log (`keepStreams` false): the benchmark's baseline. */
  private async *unlogged(
    input: MessageInput,
    signal: AbortSignal,
    continued: boolean,
  ): AsyncGenerator<LoggedEvent> {
    conversationKey(input);
    let seq = 0;
    const generating = continued ? new AbortController().signal : signal;
    for await (const event of streamMessage(this.turns, input, generating)) {
      seq += 1;
      yield { seq, event };
    }
  }

  /**
   * A JSON send's reply (service.ts), generated once its turn in the conversation has come; a later message may
   * interrupt it (its reply is then stored cancelled, without text: a complete reply comes whole).
   */
  async send(input: MessageInput, signal: AbortSignal): Promise<ReplyRecord> {
    const ids = input.ids ?? { message: newId("message"), reply: newId("message") };
    const place = await this.join({ ...input, ids });
    try {
      await place.admitted(signal).catch(() => undefined);
      return await sendMessage(
        this.turns,
        { ...input, ids, place },
        AbortSignal.any([signal, place.interruption]),
      );
    } finally {
      await place.leave();
    }
  }

  /**
   * A message answered in the background: recorded as pending before this returns its reply's id, then generated
   * to its end whatever happens to the caller. A keyed send's `claim` is told of the run.
   */
  async startBackground(input: MessageInput, claim?: RunClaim): Promise<string> {
    const ids = input.ids ?? { message: newId("message"), reply: newId("message") };
    // Reserved before the message takes its place: one its budget refuses is not recorded at all.
    const charge =
      input.enforceBudgets && this.turns.budgets && input.agent
        ? await this.turns.budgets.admit({
            accountId: input.accountId,
            agentId: input.agent.id,
            apiKeyId: "",
          })
        : null;
    let run: LiveRun;
    try {
      const place = await this.join({ ...input, ids });
      try {
        run = this.begin({ ...input, ids }, true, undefined, claim, place);
      } catch (error) {
        await place.leave();
        throw error;
      }
    } catch (error) {
      void charge?.release();
      throw error;
    }
    if (charge) {
      // Settled to the reply's usage; a run that failed or paused for approval frees its estimate. A run let go
      // to another process keeps it until the counter's period ends (erring on the side of spending less).
      void run.reply.then(
        (reply) => charge.settle(replyUsage(reply)),
        () => charge.release(),
      );
    }
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
    const record = await this.turns.store.getRun(scope.accountId, scope.agentId, id);
    if (!record?.logged || expired(record)) {
      throw new AppError("STREAM_NOT_FOUND", `No events are kept for message ${JSON.stringify(id)}.`);
    }
    return this.followStored(record, after, endOnly, signal);
  }

  /**
   * Records a JSON send with an Idempotency-Key (idempotent-sends.ts) as a run without events, with its `key`:
   * pending from now (committed within SOON_MS, with the logs' next batch), then ended as `reply` settles. The message sent again to another
   * process meanwhile finds it and waits for its end (`outcome`) rather than generating the reply again. Nothing
   * is written on the way from the provider to the caller.
   */
  recordSend(input: MessageInput, key: RunClaim["key"], reply: Promise<ReplyRecord>): void {
    if (!input.ids) return;
    const record = this.newRecord(input, input.ids.reply, { background: false, logged: false }, key);
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
   * such a run pending in the store, though its outcome is already decided here (`IdempotentSends`).
   */
  generatedHere(id: string): boolean {
    return this.live.has(id) || this.sends.has(id);
  }

  /**
   * The runs `generatedHere` answers for now, for a read of the store that follows: a run that read finds pending
   * may have ended, and left these, while the read was under way.
   */
  generatedNow(): Set<string> {
    return new Set([...this.live.keys(), ...this.sends]);
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
      record = (await this.turns.store.getRun(record.accountId, record.agentId, record.id)) ?? {
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
    if (local && local.accountId === accountId && local.agentId === agentId) {
      if (!local.pausedBefore) return local.state();
      // Paused: its state is the store's once the pause is written.
      await local.done;
    }
    let record = await this.turns.store.getRun(accountId, agentId, id);
    if (!record?.background || forgotten(record)) return null;
    if (record.status === "pending" && record.approval && approvalEnded(record)) {
      await this.expireApproval(record);
      record = (await this.turns.store.getRun(accountId, agentId, id)) ?? record;
    } else if (record.status === "pending" && abandoned(record) && !this.live.has(id)) {
      await this.abandon(record);
      record = (await this.turns.store.getRun(accountId, agentId, id)) ?? record;
    }
    const state: BackgroundState = {
      id: record.id,
      agentId: record.agentId,
      userId: record.userId ?? undefined,
      roomId: record.roomId ?? undefined,
      status: record.cancelled ? "cancelled" : record.status,
      reply: null,
      error: null,
    };
    if (record.status === "pending" && record.approval) {
      state.status = "requires_action";
      state.approval = approvalOf(record);
    } else if (record.status === "completed" && record.result) {
      state.reply = decodeReply(JSON.parse(record.result));
    } else if (record.status === "failed") {
      state.error = {
        code: (record.errorCode as ErrorCode | null) ?? "INTERNAL_ERROR",
        message: record.errorMessage ?? "",
      };
    }
    return state;
  }

  /**
   * A person's answer to calls a message paused before (`POST …/messages/{messageId}/approve`): recorded on its
   * run; once every pending call is decided the message resumes here, in the background. Answers its state.
   * Throws MESSAGE_NOT_FOUND for a message the agent does not have, MESSAGE_NOT_AWAITING_APPROVAL for one that is
   * not paused (or was answered meanwhile), INVALID_REQUEST naming call ids that are not pending.
   */
  async approve(
    scope: { accountId: string; agentId: string },
    id: string,
    answer: { toolCallIds: readonly string[]; approve: boolean; reason?: string | undefined },
  ): Promise<BackgroundState> {
    const { accountId, agentId } = scope;
    const local = this.live.get(id);
    if (local?.pausedBefore && local.accountId === accountId && local.agentId === agentId) await local.done;
    const record = await this.turns.store.getRun(accountId, agentId, id);
    if (!record || forgotten(record)) {
      if (await this.turns.store.getMessage(accountId, agentId, id)) throw notAwaiting(id);
      throw new AppError("MESSAGE_NOT_FOUND", `The agent has no message ${JSON.stringify(id)}.`);
    }
    if (record.status !== "pending" || !record.approval) throw notAwaiting(id);
    if (approvalEnded(record)) {
      await this.expireApproval(record);
      throw notAwaiting(id);
    }
    if (answer.toolCallIds.length === 0) throw invalid("toolCallIds", "must name at least one pending call");
    const pending = JSON.parse(record.approval.pendingToolCalls) as PendingToolCall[];
    const decided: Record<string, ApprovalDecision> = record.decisions ? JSON.parse(record.decisions) : {};
    const open = new Set(pending.map((call) => call.id).filter((callId) => !(callId in decided)));
    const unknown = [...new Set(answer.toolCallIds)].filter((callId) => !open.has(callId));
    if (unknown.length > 0) {
      throw invalid(
        "toolCallIds",
        `${unknown.map((callId) => JSON.stringify(callId)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not pending on this message (pending: ${[...open].map((callId) => JSON.stringify(callId)).join(", ") || "none"})`,
      );
    }
    for (const callId of answer.toolCallIds) {
      decided[callId] = {
        approve: answer.approve,
        ...(answer.reason === undefined || answer.approve ? {} : { reason: answer.reason }),
      };
    }
    const complete = pending.every((call) => call.id in decided);
    const updated = await this.turns.store.decideRun(accountId, agentId, id, {
      expected: record.decisions ?? null,
      decisions: JSON.stringify(decided),
      resume: complete
        ? {
            holder: this.holder,
            expiresAt: new Date(Date.now() + this.leaseMs).toISOString(),
            deadlineAt: new Date(
              Date.now() + (1 + FALLBACK_MAX_ITEMS) * this.turns.limits.timeoutMs + DEADLINE_MARGIN_MS,
            ).toISOString(),
          }
        : null,
    });
    // Answered, expired or cancelled meanwhile: this answer was not recorded.
    if (!updated) throw notAwaiting(id);
    this.turns.logger.info(
      { messageId: id, calls: answer.toolCallIds.length, approve: answer.approve, resumed: complete },
      "tool calls answered",
    );
    const state: BackgroundState = {
      id,
      agentId,
      userId: updated.userId ?? undefined,
      roomId: updated.roomId ?? undefined,
      status: complete ? "pending" : "requires_action",
      reply: null,
      error: null,
      ...(complete ? {} : { approval: approvalOf(updated) }),
    };
    if (complete) await this.takeOver(updated);
    return state;
  }

  /**
   * Stops every streamed or background message of the agent still being generated, wherever (the kill switch):
   * each is ended failed in the store (marked cancelled), nothing of it stored; this process cancels its own at
   * once, another process stops its own, streamed or background, when it next renews its leases (it finds the run
   * ended, `stopEndedStreams` for streams). Answers how many were pending.
   */
  async cancelAgent(accountId: string, agentId: string): Promise<number> {
    const ended = await this.turns.store.cancelAgentRuns(
      accountId,
      agentId,
      runEnd(failedEvent(STOPPED), this.options.retentionMs, true),
    );
    for (const run of this.live.values()) {
      if (run.accountId === accountId && run.agentId === agentId) run.cancel();
    }
    if (ended.length > 0)
      this.turns.logger.info({ agentId, messages: ended.length }, "messages of the agent stopped");
    return ended.length;
  }

  /**
   * Cancels the streamed messages this process generates and waits until their logs are ended; lets its background
   * messages go, their leases expired, for another process (or this one's next start) to take over; stops the
   * sweeps.
   */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([this.sweep?.stop(), this.renewal?.stop(), this.scan?.stop(), this.queue.close()]);
    const running = [...this.live.values()];
    const held = running.filter((run) => this.held.has(run.id));
    for (const run of running) {
      if (this.held.has(run.id)) run.detach();
      else run.cancel();
    }
    await Promise.all(running.map((run) => run.done));
    await this.writer.drain();
    if (held.length > 0) {
      try {
        await this.turns.store.renewLeases(
          this.holder,
          held.map((run) => run.id),
          new Date().toISOString(),
        );
        this.turns.logger.info({ messages: held.length }, "background messages let go for another process");
      } catch (error) {
        // Their leases then expire as they would after a crash.
        this.turns.logger.warn({ err: error }, "could not let background messages go");
      }
    }
  }

  private begin(
    input: MessageInput,
    background: boolean,
    signal: AbortSignal | undefined,
    claim: RunClaim | undefined,
    place: Place,
  ): LiveRun {
    const ids = input.ids ?? { message: newId("message"), reply: newId("message") };
    if (background && this.live.has(ids.reply)) {
      // Another attempt at a message this process runs already (a schedule fire its own scan took over while
      // the claimer stalled): its record would be refused, and it must not take the running one's entries here.
      throw new AppError("AGENT_UNAVAILABLE", "The message is being answered already.", {
        retryAfterSeconds: 1,
      });
    }
    const controller = new AbortController();
    if (signal) {
      if (signal.aborted) controller.abort();
      else signal.addEventListener("abort", () => controller.abort(), { once: true });
    }
    const generating = { ...input, ids, ...(background ? { background } : {}) };
    const record = this.newRecord(generating, ids.reply, { background, logged: true }, claim?.key ?? null);
    const { store, logger } = this.turns;
    // Recorded, its place in line becomes this attempt's with it: another attempt at the same message (a schedule
    // fire started by two processes) that fails to record leaves nothing of it.
    const storage = {
      store: { startRun: (started: RunRecord) => store.startRun(started, place.owner) },
      logger,
    };
    const run = new LiveRun(
      storage,
      this.writer,
      record,
      controller,
      this.options.retentionMs,
      undefined,
      this.pauseOf(record, generating),
      () => this.turns.events?.written(),
    );
    this.live.set(run.id, run);
    claim?.begun(run);
    const generate = () => this.generate(run, place, generating, controller);
    // A background message is generated only once it is recorded: its caller is told of it only then.
    const driving = background
      ? run.recorded.then((ok) => {
          if (!ok) {
            void place.leave();
            return run.unrecorded();
          }
          if (record.lease) this.held.add(run.id);
          return generate();
        })
      : generate();
    void driving.finally(() => {
      this.live.delete(run.id);
      this.held.delete(run.id);
    });
    return run;
  }

  /**
   * Renews the leases of the background runs generated here; lets go those another process has taken. Stops the
   * streams generated here that the kill switch ended on another process.
   */
  private async renewOnce(): Promise<void> {
    await this.stopEndedStreams();
    const held = [...this.held];
    if (held.length === 0) return;
    let renewed: Set<string>;
    try {
      const until = new Date(Date.now() + this.leaseMs).toISOString();
      renewed = new Set(await this.turns.store.renewLeases(this.holder, held, until));
    } catch (error) {
      this.turns.logger.warn({ err: error }, "could not renew the leases of background messages");
      return;
    }
    for (const id of held) {
      const run = this.live.get(id);
      // Not renewed: ended meanwhile, or taken over by another process while this one was paused past the lease.
      if (!run || renewed.has(id) || !this.held.has(id) || run.ended) continue;
      this.held.delete(id);
      run.detach();
      this.turns.logger.warn(
        { messageId: id },
        "background message taken over by another process; stopped here",
      );
    }
  }

  /** Cancels the streams generated here whose run has ended in the store meanwhile (`cancelAgent` elsewhere). */
  private async stopEndedStreams(): Promise<void> {
    const streams = [...this.live.values()].filter((run) => !run.background && !run.ended);
    if (streams.length === 0) return;
    let ended: string[];
    try {
      ended = await this.turns.store.endedRunsAmong(streams.map((run) => run.id));
    } catch (error) {
      this.turns.logger.warn({ err: error }, "could not check the streams generated here");
      return;
    }
    for (const id of ended) {
      const run = this.live.get(id);
      if (!run || run.ended) continue;
      run.cancel();
      this.turns.logger.info({ messageId: id }, "stream stopped: every message of its agent was cancelled");
    }
  }

  /** Takes over the background runs whose lease expired, each claimed by one process only; fails paused runs
   * whose wait for approval ended. */
  private async scanOnce(): Promise<void> {
    try {
      for (const found of await this.turns.store.expiredApprovals(new Date().toISOString(), PAGE)) {
        if (this.closing) return;
        await this.expireApproval(found);
      }
    } catch (error) {
      this.turns.logger.warn({ err: error }, "could not look for messages whose approval expired");
    }
    try {
      const now = new Date();
      for (const found of await this.turns.store.expiredLeases(now.toISOString(), PAGE)) {
        if (this.closing) return;
        if (this.live.has(found.id)) continue;
        const claimed = await this.turns.store.claimRun(found.id, {
          holder: this.holder,
          now: now.toISOString(),
          expiresAt: new Date(Date.now() + this.leaseMs).toISOString(),
          // Every model in line may take its whole time limit again.
          deadlineAt: new Date(
            Date.now() + (1 + FALLBACK_MAX_ITEMS) * this.turns.limits.timeoutMs + DEADLINE_MARGIN_MS,
          ).toISOString(),
        });
        if (claimed) await this.takeOver(claimed);
      }
    } catch (error) {
      this.turns.logger.warn({ err: error }, "could not look for background messages to take over");
    }
  }

  /**
   * Generates again a background run claimed from a process that stopped: from its last stored step, its log going
   * on; or ends it with the reply that process stored before it could end the run.
   */
  private async takeOver(record: RunRecord): Promise<void> {
    const { store, logger } = this.turns;
    const retentionMs = this.options.retentionMs;
    if (!record.input || (record.takeovers ?? 0) > MAX_TAKEOVERS) {
      await this.abandon(record);
      return;
    }
    const logged: LoggedEvent[] = [];
    for (;;) {
      const page = await store.runEvents(record.id, logged.at(-1)?.seq ?? 0, PAGE);
      for (const event of page) logged.push({ seq: event.seq, event: decodeEvent(event) });
      if (page.length < PAGE) break;
    }
    const stored = await store.getMessage(record.accountId, record.agentId, record.id);
    if (stored) {
      const event = { type: "completed" as const, reply: replyOfTurn(stored) };
      const encoded = encodeEvent((logged.at(-1)?.seq ?? 0) + 1, event);
      await this.writer.submit(
        () => ({
          kind: "end",
          runId: record.id,
          events: [encoded],
          end: { ...runEnd(event, retentionMs, true, encoded.data), holder: record.lease?.holder },
        }),
        true,
      );
      logger.info(
        { messageId: record.id },
        "background message found stored after its process stopped; ended",
      );
      return;
    }
    const input = decodeInput(record.accountId, record.input);
    const started = logged.some((entry) => entry.event.type === "started");
    const controller = new AbortController();
    const generating: MessageInput = {
      ...input,
      background: true,
      ...(started
        ? {
            resume: {
              rounds: storedRounds(logged),
              decisions: decisionsOf(record),
              counted: countedAtPauses(logged),
            },
          }
        : {}),
    };
    const run = new LiveRun(
      this.turns,
      this.writer,
      record,
      controller,
      retentionMs,
      logged,
      this.pauseOf(record, generating),
      () => this.turns.events?.written(),
    );
    this.live.set(run.id, run);
    this.held.add(run.id);
    // Back in its conversation's line, at the place it had while that is kept.
    const place = await this.queue.join(record.id, conversationKey(generating), "enqueue", true);
    void this.generate(run, place, generating, controller).finally(() => {
      this.live.delete(run.id);
      this.held.delete(run.id);
    });
    logger.info(
      { messageId: record.id, events: logged.length, takeovers: record.takeovers ?? 1 },
      "background message taken over from a process that stopped",
    );
  }

  /** The message's place in its conversation's line; CONVERSATION_BUSY when it rejects a conflict. */
  private join(input: MessageInput & { ids: { reply: string } }): Promise<Place> {
    const key = conversationKey(input);
    if (input.suppliedContext) return Promise.resolve(this.queue.outOfLine(input.ids.reply, key));
    return this.queue.join(
      input.ids.reply,
      key,
      conflictMode(input.onConflict, specJsonOf(input.agent).settings),
    );
  }

  /**
   * Generates `run`'s message once its turn in the conversation has come; interrupted by a later message, it ends
   * with the text it had (service.ts). It leaves the line once it has ended, before a failure ends its log.
   */
  private generate(
    run: LiveRun,
    place: Place,
    input: MessageInput,
    controller: AbortController,
  ): Promise<void> {
    const interrupt = () => controller.abort(place.interruption.reason);
    if (place.interruption.aborted) interrupt();
    else place.interruption.addEventListener("abort", interrupt, { once: true });
    // A wait cut short (cancelled, interrupted) is ended by the generation, which finds its signal aborted.
    const admitted = place.admitted(controller.signal).catch(() => undefined);
    return run.drive(
      admitted.then(() => streamMessage(this.turns, { ...input, place }, controller.signal)),
      async () => {
        place.interruption.removeEventListener("abort", interrupt);
        await place.leave();
      },
    );
  }

  /**
   * How a run of `input` pauses for approval: as a background message from then on, resumable from `input`, its
   * wait ending `approvalTimeoutMs` from now.
   */
  private pauseOf(record: RunRecord, input: MessageInput): PauseOf {
    return (calls: PendingToolCall[], tokens: CallRecord | undefined) => {
      const expiresAt = new Date(Date.now() + this.approvalTimeoutMs());
      return {
        pendingToolCalls: JSON.stringify(calls),
        expiresAt: expiresAt.toISOString(),
        deadlineAt: new Date(expiresAt.getTime() + DEADLINE_MARGIN_MS).toISOString(),
        input: encodeInput({ ...input, background: true }),
        holder: record.lease?.holder,
        events: this.turns.events ? [messageRequiresAction(record, calls, expiresAt)] : [],
        tokens,
      };
    };
  }

  private approvalTimeoutMs(): number {
    return this.options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  }

  /**
   * Ends a paused run whose wait for approval ended as failed (APPROVAL_EXPIRED), its log's next event saying so;
   * of the processes that find it, the one whose update ends it only.
   */
  private async expireApproval(
    run: Pick<RunRecord, "id" | "background" | "accountId" | "agentId" | "userId" | "roomId">,
  ): Promise<void> {
    let last = 0;
    for (;;) {
      const page = await this.turns.store.runEvents(run.id, last, PAGE);
      last = page.at(-1)?.seq ?? last;
      if (page.length < PAGE) break;
    }
    const error = approvalExpired(this.approvalTimeoutMs());
    const event = failedEvent(error);
    const encoded = encodeEvent(last + 1, event);
    const key = {
      accountId: run.accountId,
      agentId: run.agentId,
      userId: run.userId ?? "",
      roomId: run.roomId ?? "",
    };
    // Its message.failed is written with the end: only by the process whose update ends it.
    const ended = await this.turns.store.endRun(run.id, [encoded], {
      ...runEnd(event, this.options.retentionMs, true, encoded.data),
      ...(this.turns.events ? { events: [messageFailed(key, run.id, error, new Date())] } : {}),
    });
    if (ended) {
      if (this.turns.events) this.turns.events.written();
      this.turns.logger.info({ messageId: run.id }, "message's tool calls not answered in time; failed");
    }
  }

  /** A pending run's record, as its start writes it. */
  private newRecord(
    input: MessageInput,
    id: string,
    kind: Pick<RunRecord, "background" | "logged">,
    idempotencyKey: RunRecord["idempotencyKey"],
  ): RunRecord {
    const createdAt = new Date();
    // Every model in line may take its whole time limit.
    const models = 1 + Math.min(fallbackChoices(specJsonOf(input.agent).settings).length, FALLBACK_MAX_ITEMS);
    const leased =
      kind.background && this.options.durable !== false
        ? {
            lease: {
              holder: this.holder,
              expiresAt: new Date(createdAt.getTime() + this.leaseMs).toISOString(),
            },
            input: encodeInput(input),
          }
        : {};
    return {
      id,
      accountId: input.accountId,
      agentId: input.agent?.id ?? "",
      userId: input.userId ?? null,
      roomId: input.roomId ?? null,
      ...kind,
      idempotencyKey,
      status: "pending",
      errorCode: null,
      errorMessage: null,
      result: null,
      createdAt: createdAt.toISOString(),
      deadlineAt: new Date(
        createdAt.getTime() + models * this.turns.limits.timeoutMs + DEADLINE_MARGIN_MS,
      ).toISOString(),
      endedAt: null,
      expiresAt: null,
      keptUntil: null,
      ...leased,
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
        const events = await this.turns.store.runEvents(record.id, last, PAGE);
        for (const event of events) {
          last = event.seq;
          lastType = event.type;
          if (event.seq <= after) continue;
          const decoded = decodeEvent(event);
          if (!endOnly || final(decoded)) yield { seq: event.seq, event: decoded };
        }
        if (events.length < PAGE) break;
      }
      if (lastType === "completed" || lastType === "failed") return;
      // Paused for approval: the log goes on once a person has answered, as a new run's events.
      if (lastType === "approval_required" && record.approval) return;
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
      record = (await this.turns.store.getRun(record.accountId, record.agentId, record.id)) ?? {
        ...record,
        status: "failed",
      };
    }
  }

  /** Ends an abandoned run as failed, unless it has ended meanwhile. */
  private async abandon(run: Pick<RunRecord, "id" | "background">): Promise<void> {
    const ended = await this.turns.store.endRun(
      run.id,
      [],
      runEnd(failedEvent(ABANDONED), this.options.retentionMs, run.background),
    );
    if (ended)
      this.turns.logger.warn({ messageId: run.id }, "message abandoned by a stopped process; marked failed");
  }

  private async sweepOnce(): Promise<void> {
    try {
      const now = new Date().toISOString();
      for (const run of await this.turns.store.abandonedRuns(now, PAGE)) {
        if (!this.live.has(run.id) && !this.sends.has(run.id)) await this.abandon(run);
      }
      const removed = await removeInBatches((limit) => this.turns.store.removeExpiredRuns(now, limit), PAGE);
      if (removed > 0) this.turns.logger.debug({ removed }, "expired message logs removed");
    } catch (error) {
      this.turns.logger.warn({ err: error }, "could not sweep message logs");
    }
  }
}

const FINISHED: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * A streamed reply as its caller reads it (`MessageRuns.stream`): opened on the first read (its place in line
 * taken, its run begun), then the run's events as the caller that started it takes them (`LiveRun.nextLed`). A
 * failure is thrown after the events before it; a caller that leaves before the end cancels the message, unless
 * it is `continued`. A plain iterator rather than an async generator: an idle stream keeps no suspended frame,
 * request queue or closures for it. Read by one reader at a time, as a generator is.
 */
class LedStream implements AsyncIterator<LoggedEvent>, AsyncIterable<LoggedEvent> {
  private run: LiveRun | undefined;
  private opening: Promise<LiveRun> | undefined;
  /** Ended, failed or left: every read is done from then on. */
  private over = false;

  constructor(
    /** Opens the stream; dropped once called, so that the stream does not keep what it captured. */
    private open: (() => Promise<LiveRun>) | undefined,
    private readonly continued: boolean,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<LoggedEvent> {
    return this;
  }

  next(): Promise<IteratorResult<LoggedEvent>> {
    if (this.over) return Promise.resolve(FINISHED);
    const run = this.run;
    if (run) return run.nextLed().then((result) => this.step(run, result));
    if (!this.opening) {
      const open = this.open!;
      this.open = undefined;
      this.opening = open();
    }
    return this.opening.then(
      (opened) => {
        this.run = opened;
        // Left while it opened: the message is cancelled as soon as it has begun.
        if (this.over) {
          this.leave(opened);
          return FINISHED;
        }
        return this.next();
      },
      (error: unknown) => {
        this.over = true;
        throw error;
      },
    );
  }

  return(): Promise<IteratorResult<LoggedEvent>> {
    if (!this.over) {
      this.over = true;
      if (this.run) this.leave(this.run);
    }
    return Promise.resolve(FINISHED);
  }

  private step(run: LiveRun, result: IteratorResult<LoggedEvent>): IteratorResult<LoggedEvent> {
    if (result.done) {
      this.over = true;
      return result;
    }
    if (result.value.event.type === "failed") {
      this.leave(run);
      throw run.error ?? failure(result.value.event);
    }
    return result;
  }

  /** The caller stops reading: the reply is no longer paced by it, and is cancelled unless it is `continued`. */
  private leave(run: LiveRun): void {
    this.over = true;
    run.unpace();
    if (!this.continued) run.cancel();
  }
}

function notAwaiting(id: string): AppError {
  return new AppError(
    "MESSAGE_NOT_AWAITING_APPROVAL",
    `Message ${JSON.stringify(id)} is not waiting for a tool approval (it is being generated, has ended, or was answered meanwhile); read it with GET …/messages/{messageId}.`,
  );
}

/** Whether a paused run's wait for approval has ended. */
function approvalEnded(record: RunRecord): boolean {
  return (
    record.approval !== null &&
    record.approval !== undefined &&
    Date.parse(record.approval.expiresAt) <= Date.now()
  );
}

/** The answers recorded on a run, by call id. */
function decisionsOf(record: RunRecord): ReadonlyMap<string, ApprovalDecision> {
  if (!record.decisions) return new Map();
  return new Map(Object.entries(JSON.parse(record.decisions) as Record<string, ApprovalDecision>));
}

/**
 * A background message as its run records it, for a process that takes the run over: what generating it needs
 * (the agent as it was sent, the ids of the message and its reply), not the caller's deadline, which it outlives.
 */
function encodeInput(input: MessageInput): string {
  return JSON.stringify({
    agent: input.agent ? storedAgent(input.agent) : null,
    text: input.text,
    userId: input.userId ?? null,
    roomId: input.roomId ?? null,
    context: input.context ?? null,
    requestId: input.requestId ?? null,
    apiKeyId: input.apiKeyId ?? null,
    ids: input.ids ?? null,
    idempotencyKeyHash: input.idempotencyKeyHash ?? null,
  });
}

/** The JSON fields of a spec, by their name in the Struct form and in the text form. */
const SPEC_JSON_FIELDS = [
  ["personality", "personalityJson"],
  ["clients", "clientsJson"],
  ["settings", "settingsJson"],
  ["plugins", "pluginsJson"],
] as const;

/**
 * An agent as a run records it: its JSON fields under their Struct names, as plain JSON, which a process of any
 * release reads when it takes the run over (one of an earlier release knows no text fields).
 */
function storedAgent(agent: Agent): JsonValue {
  const json = toJson(AgentSchema, agent) as JsonObject;
  const spec = json.spec as JsonObject | undefined;
  if (!spec) return json;
  const fields = specJsonOf(agent);
  for (const [name, text] of SPEC_JSON_FIELDS) {
    delete spec[text];
    spec[name] = fields[name];
  }
  return json;
}

/** A recorded agent with its JSON fields as text, so that reading it back builds no Struct or Value message. */
function agentWithJsonText(agent: JsonValue): JsonValue {
  const spec = typeof agent === "object" && agent !== null && !Array.isArray(agent) ? agent.spec : undefined;
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) return agent;
  const converted: JsonObject = { ...spec };
  for (const [name, text] of SPEC_JSON_FIELDS) {
    if (converted[name] === undefined) continue;
    converted[text] = JSON.stringify(converted[name]);
    delete converted[name];
  }
  return { ...(agent as JsonObject), spec: converted };
}

function decodeInput(accountId: string, text: string): MessageInput {
  const data = JSON.parse(text) as {
    agent: JsonValue;
    text: string;
    userId: string | null;
    roomId: string | null;
    context: JsonObject | null;
    requestId: string | null;
    apiKeyId: string | null;
    ids: { message: string; reply: string } | null;
    idempotencyKeyHash: string | null;
  };
  const agent: Agent | undefined =
    data.agent === null
      ? undefined
      : fromJson(AgentSchema, agentWithJsonText(data.agent), { ignoreUnknownFields: true });
  return {
    accountId,
    agent,
    text: data.text,
    userId: data.userId ?? undefined,
    roomId: data.roomId ?? undefined,
    context: data.context ?? undefined,
    requestId: data.requestId ?? undefined,
    apiKeyId: data.apiKeyId ?? undefined,
    ids: data.ids ?? undefined,
    idempotencyKeyHash: data.idempotencyKeyHash ?? undefined,
  };
}

/**
 * The rounds of tool calls a log has: each round's text (the deltas before its calls), its calls and the outcomes
 * stored. The text after the last call is an unfinished answer, generated again; so is a round with no call.
 */
export function storedRounds(logged: readonly LoggedEvent[]): StoredRound[] {
  const rounds: StoredRound[] = [];
  let current: StoredRound = { text: "", calls: [], outcomes: [] };
  for (const { event } of logged) {
    if (event.type === "delta") {
      if (current.calls.length > 0) {
        rounds.push(current);
        current = { text: "", calls: [], outcomes: [] };
      }
      current.text += event.text;
    } else if (event.type === "tool.call") {
      // A round's calls all come before its outcomes: a call after one begins the next round (without text).
      if (current.outcomes.some((outcome) => outcome !== undefined)) {
        rounds.push(current);
        current = { text: "", calls: [], outcomes: [] };
      }
      current.calls.push({ id: event.id, name: event.name, arguments: event.arguments });
      if (event.spent) current.spent = event.spent;
      current.outcomes.push(undefined);
    } else if (event.type === "tool.result") {
      const at = current.calls.findIndex((call) => call.id === event.call.id);
      if (at >= 0) current.outcomes[at] = event.call;
    }
  }
  if (current.calls.length > 0) rounds.push(current);
  return rounds;
}

/** The tokens a log's pauses for approval counted in usage (each pause those spent since the one before). */
export function countedAtPauses(logged: readonly LoggedEvent[]): {
  inputTokens: number;
  outputTokens: number;
} {
  const counted = { inputTokens: 0, outputTokens: 0 };
  for (const { event } of logged) {
    if (event.type !== "approval_required" || !event.tokens) continue;
    counted.inputTokens += event.tokens.inputTokens;
    counted.outputTokens += event.tokens.outputTokens;
  }
  return counted;
}
