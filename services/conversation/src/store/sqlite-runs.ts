import type Database from "better-sqlite3";
import type {
  CallRecord,
  ExpiredApproval,
  ExpiredLease,
  NewOutboxEvent,
  RunDecision,
  RunEnd,
  RunEvent,
  RunPause,
  RunRecord,
  RunStatus,
  RunWrite,
} from "./types.js";

export interface SqliteRunRow {
  id: string;
  account_id: string;
  agent_id: string;
  user_id: string | null;
  room_id: string | null;
  background: number;
  status: RunStatus;
  error_code: string | null;
  error_message: string | null;
  result: string | null;
  created_at: string;
  deadline_at: string;
  ended_at: string | null;
  expires_at: string | null;
  kept_until: string | null;
  logged: number;
  key_hash: string | null;
  key_request: string | null;
  lease_holder: string | null;
  lease_expires_at: string | null;
  input: string | null;
  takeovers: number;
  cancelled: number;
  pending_tool_calls: string | null;
  approval_expires_at: string | null;
  decisions: string | null;
}

/** The message runs of the SQLite store (its tables of migrations 6, 8, 9, 10, 12 and 14): statements and their one transaction. */
export class SqliteRuns {
  private readonly s: ReturnType<typeof prepare>;
  private readonly end: Database.Transaction<
    (runId: string, events: readonly RunEvent[], end: RunEnd) => boolean
  >;
  private readonly removeExpired: Database.Transaction<(now: string, limit: number) => number>;
  private readonly writeMany: Database.Transaction<(writes: readonly RunWrite[]) => void>;
  private readonly renewMany: Database.Transaction<
    (holder: string, runIds: readonly string[], expiresAt: string) => string[]
  >;

  /**
   * `writeOutbox`: writes message events to the outbox, and adds a call's tokens to the usage rollups, within the
   * transaction under way (a pause's or an end's).
   */
  constructor(
    private readonly db: Database.Database,
    private readonly writeOutbox: (events: readonly NewOutboxEvent[], tokens?: CallRecord) => void,
  ) {
    const s = prepare(db);
    this.s = s;
    this.end = db.transaction((runId: string, events: readonly RunEvent[], end: RunEnd) =>
      this.endOne(runId, events, end),
    );
    this.writeMany = db.transaction((writes: readonly RunWrite[]) => {
      for (const write of writes) {
        if (write.kind === "start") this.start(write.run);
        else if (write.kind === "events") this.append(write.runId, write.events);
        else if (write.kind === "pause") this.pauseOne(write.runId, write.events, write.pause);
        else this.endOne(write.runId, write.events, write.end);
      }
    });
    this.renewMany = db.transaction((holder: string, runIds: readonly string[], expiresAt: string) =>
      s.renew.all(expiresAt, holder, JSON.stringify(runIds)).map((row) => row.id),
    );
    this.removeExpired = db.transaction((now: string, limit: number) => {
      const ids = s.forgotten.all(now, limit).map((row) => row.id);
      const list = JSON.stringify(ids);
      s.deleteEvents.run(list);
      s.deleteRuns.run(list);
      // Runs kept past their events (failed background messages): their events go now, their record later.
      const emptied = s.expiredWithEvents.all(now, limit).map((row) => row.id);
      s.deleteEvents.run(JSON.stringify(emptied));
      return ids.length + emptied.length;
    });
  }

  /** Ends a run still pending, with its last events; false when it was not pending. */
  private endOne(runId: string, events: readonly RunEvent[], end: RunEnd): boolean {
    const ended = this.s.end.run(
      end.status,
      end.errorCode,
      end.errorMessage,
      end.result,
      end.endedAt,
      end.expiresAt,
      end.keptUntil,
      end.cancelled ? 1 : 0,
      runId,
      end.holder ?? null,
      end.holder ?? null,
    ).changes;
    if (ended === 0) return false;
    for (const event of events)
      this.s.insertEvent.run({ run: runId, seq: event.seq, type: event.type, data: event.data });
    if (end.events?.length) this.writeOutbox(end.events);
    return true;
  }

  /** Pauses a run still pending (and held by `pause.holder`, when given) for approval, with its last events. */
  private pauseOne(runId: string, events: readonly RunEvent[], pause: RunPause): boolean {
    const paused = this.s.pause.run(
      pause.input,
      pause.pendingToolCalls,
      pause.expiresAt,
      pause.deadlineAt,
      runId,
      pause.holder ?? null,
      pause.holder ?? null,
    ).changes;
    if (paused === 0) return false;
    for (const event of events)
      this.s.insertEvent.run({ run: runId, seq: event.seq, type: event.type, data: event.data });
    this.writeOutbox(pause.events, pause.tokens);
    return true;
  }

  decide(accountId: string, agentId: string, runId: string, decision: RunDecision): RunRecord | null {
    const row = decision.resume
      ? this.s.resume.get(
          decision.decisions,
          decision.resume.holder,
          decision.resume.expiresAt,
          decision.resume.deadlineAt,
          runId,
          accountId,
          agentId,
          decision.expected,
        )
      : this.s.decide.get(decision.decisions, runId, accountId, agentId, decision.expected);
    return row ? toRun(row) : null;
  }

  expiredApprovals(now: string, limit: number): ExpiredApproval[] {
    return this.s.expiredApprovals.all(now, limit).map((row) => ({
      id: row.id,
      background: row.background === 1,
      accountId: row.account_id,
      agentId: row.agent_id,
      userId: row.user_id,
      roomId: row.room_id,
    }));
  }

  start(run: RunRecord): void {
    this.s.insert.run({
      id: run.id,
      account_id: run.accountId,
      agent_id: run.agentId,
      user_id: run.userId,
      room_id: run.roomId,
      background: run.background ? 1 : 0,
      status: run.status,
      error_code: run.errorCode,
      error_message: run.errorMessage,
      result: run.result,
      created_at: run.createdAt,
      deadline_at: run.deadlineAt,
      ended_at: run.endedAt,
      expires_at: run.expiresAt,
      kept_until: run.keptUntil,
      logged: run.logged ? 1 : 0,
      key_hash: run.idempotencyKey?.hash ?? null,
      key_request: run.idempotencyKey?.request ?? null,
      lease_holder: run.lease?.holder ?? null,
      lease_expires_at: run.lease?.expiresAt ?? null,
      input: run.input ?? null,
      takeovers: run.takeovers ?? 0,
    });
  }

  append(runId: string, events: readonly RunEvent[]): void {
    for (const event of events)
      this.s.appendEvent.run({ run: runId, seq: event.seq, type: event.type, data: event.data });
  }

  finish(runId: string, events: readonly RunEvent[], end: RunEnd): boolean {
    return this.end.immediate(runId, events, end);
  }

  /**
   * A batch of the event logs, committed without waiting for the disk (synchronous=NORMAL in WAL mode: an operating
   * system crash or a power cut may lose the last batches, never corrupt the file, and every later commit of the
   * connection, at FULL, makes them durable too). The batches are written while replies stream; an fsync each
   * would stall every stream of the process meanwhile.
   */
  write(writes: readonly RunWrite[]): void {
    this.db.pragma("synchronous = NORMAL");
    try {
      this.writeMany.immediate(writes);
    } finally {
      this.db.pragma("synchronous = FULL");
    }
  }

  get(accountId: string, agentId: string, runId: string): RunRecord | null {
    const row = this.s.get.get(runId, accountId, agentId);
    return row ? toRun(row) : null;
  }

  events(runId: string, after: number, limit: number): RunEvent[] {
    return this.s.events.all(runId, after, limit);
  }

  keyed(accountId: string, keyHash: string, now: string): RunRecord | null {
    const row = this.s.keyed.get(accountId, keyHash, now);
    return row ? toRun(row) : null;
  }

  renewLeases(holder: string, runIds: readonly string[], expiresAt: string): string[] {
    return runIds.length === 0 ? [] : this.renewMany.immediate(holder, runIds, expiresAt);
  }

  expiredLeases(now: string, limit: number): ExpiredLease[] {
    return this.s.expiredLeases
      .all(now, limit)
      .map((row) => ({ id: row.id, accountId: row.account_id, agentId: row.agent_id }));
  }

  /** One UPDATE whose condition is the lease's expiry: of two processes claiming a run at once, one gets it. */
  claim(
    runId: string,
    claim: { holder: string; now: string; expiresAt: string; deadlineAt: string },
  ): RunRecord | null {
    const row = this.s.claim.get(claim.holder, claim.expiresAt, claim.deadlineAt, runId, claim.now);
    return row ? toRun(row) : null;
  }

  cancelAgent(accountId: string, agentId: string, end: RunEnd): string[] {
    return this.s.cancelAgent
      .all(
        end.status,
        end.errorCode,
        end.errorMessage,
        end.result,
        end.endedAt,
        end.expiresAt,
        end.keptUntil,
        accountId,
        agentId,
      )
      .map((row) => row.id);
  }

  endedAmong(runIds: readonly string[]): string[] {
    return this.s.endedAmong.all(JSON.stringify(runIds)).map((row) => row.id);
  }

  abandoned(now: string, limit: number): Pick<RunRecord, "id" | "background">[] {
    return this.s.abandoned.all(now, limit).map((row) => ({ id: row.id, background: row.background === 1 }));
  }

  removeExpiredRuns(now: string, limit: number): number {
    return this.removeExpired.immediate(now, limit);
  }

  /** Within a purge's transaction. */
  deleteAgentRuns(accountId: string, agentId: string): void {
    this.s.deleteAgentEvents.run(accountId, agentId);
    this.s.deleteAgentRuns.run(accountId, agentId);
  }

  /** Within an erasure's transaction. */
  deleteUserRuns(accountId: string, userId: string): void {
    this.s.deleteUserEvents.run(accountId, userId);
    this.s.deleteUserRuns.run(accountId, userId);
  }

  /** Within a conversation's deletion, before the conversation's row goes. */
  deleteConversationRuns(accountId: string, agentId: string, conversationId: string): void {
    this.s.deleteConversationEvents.run(conversationId, accountId, agentId);
    this.s.deleteConversationRuns.run(conversationId, accountId, agentId);
  }
}

export function toRun(row: SqliteRunRow): RunRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    userId: row.user_id,
    roomId: row.room_id,
    background: row.background === 1,
    logged: row.logged === 1,
    idempotencyKey: row.key_hash === null ? null : { hash: row.key_hash, request: row.key_request ?? "" },
    status: row.status,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    result: row.result,
    createdAt: row.created_at,
    deadlineAt: row.deadline_at,
    endedAt: row.ended_at,
    expiresAt: row.expires_at,
    keptUntil: row.kept_until,
    ...(row.lease_holder === null
      ? {}
      : { lease: { holder: row.lease_holder, expiresAt: row.lease_expires_at ?? row.deadline_at } }),
    ...(row.input === null ? {} : { input: row.input }),
    ...(row.takeovers > 0 ? { takeovers: row.takeovers } : {}),
    ...(row.cancelled === 1 ? { cancelled: true } : {}),
    ...(row.pending_tool_calls === null
      ? {}
      : {
          approval: {
            pendingToolCalls: row.pending_tool_calls,
            expiresAt: row.approval_expires_at ?? row.deadline_at,
          },
        }),
    ...(row.decisions === null ? {} : { decisions: row.decisions }),
  };
}

function prepare(db: Database.Database) {
  const ofAgent = "SELECT id FROM message_runs WHERE account_id = ? AND agent_id = ?";
  // The blank user is the default conversation's; an erasure of "" takes the runs without a user id too.
  const ofUser = "SELECT id FROM message_runs WHERE account_id = ? AND coalesce(user_id, '') = ?";
  // A conversation's: its agent's runs with its user and room (none given: the blank one).
  const ofConversation = `SELECT r.id FROM conversations c JOIN message_runs r
    ON r.account_id = c.account_id AND r.agent_id = c.agent_id
      AND coalesce(r.user_id, '') = c.user_id AND coalesce(r.room_id, '') = c.room_id
    WHERE c.id = ? AND c.account_id = ? AND c.agent_id = ?`;
  return {
    insert: db.prepare<
      [Omit<SqliteRunRow, "cancelled" | "pending_tool_calls" | "approval_expires_at" | "decisions">]
    >(
      `INSERT INTO message_runs (id, account_id, agent_id, user_id, room_id, background, status, error_code,
         error_message, result, created_at, deadline_at, ended_at, expires_at, kept_until, logged, key_hash,
         key_request, lease_holder, lease_expires_at, input, takeovers)
       VALUES (@id, @account_id, @agent_id, @user_id, @room_id, @background, @status, @error_code,
         @error_message, @result, @created_at, @deadline_at, @ended_at, @expires_at, @kept_until, @logged, @key_hash,
         @key_request, @lease_holder, @lease_expires_at, @input, @takeovers)`,
    ),
    cancelAgent: db.prepare<
      [string, string | null, string | null, string | null, string, string, string, string, string],
      { id: string }
    >(
      `UPDATE message_runs SET status = ?, error_code = ?, error_message = ?, result = ?, ended_at = ?,
         expires_at = ?, kept_until = ?, cancelled = 1
       WHERE account_id = ? AND agent_id = ? AND status = 'pending' AND logged = 1
       RETURNING id`,
    ),
    endedAmong: db.prepare<[string], { id: string }>(
      `SELECT id FROM message_runs WHERE id IN (SELECT value FROM json_each(?)) AND status <> 'pending'`,
    ),
    renew: db.prepare<[string, string, string], { id: string }>(
      `UPDATE message_runs SET lease_expires_at = ?
       WHERE lease_holder = ? AND status = 'pending' AND id IN (SELECT value FROM json_each(?))
       RETURNING id`,
    ),
    expiredLeases: db.prepare<[string, number], { id: string; account_id: string; agent_id: string }>(
      `SELECT id, account_id, agent_id FROM message_runs
       WHERE status = 'pending' AND lease_expires_at IS NOT NULL AND lease_expires_at < ?
       ORDER BY lease_expires_at LIMIT ?`,
    ),
    claim: db.prepare<[string, string, string, string, string], SqliteRunRow>(
      `UPDATE message_runs SET lease_holder = ?, lease_expires_at = ?, deadline_at = ?, takeovers = takeovers + 1
       WHERE id = ? AND status = 'pending' AND lease_expires_at IS NOT NULL AND lease_expires_at < ?
       RETURNING *`,
    ),
    // A paused run is a background message from now on (read by id, resumed from `input`), held by no process.
    pause: db.prepare<[string, string, string, string, string, string | null, string | null]>(
      `UPDATE message_runs SET background = 1, input = ?, pending_tool_calls = ?, approval_expires_at = ?,
         deadline_at = ?, lease_holder = NULL, lease_expires_at = NULL
       WHERE id = ? AND status = 'pending' AND (? IS NULL OR lease_holder = ?)`,
    ),
    decide: db.prepare<[string, string, string, string, string | null], SqliteRunRow>(
      `UPDATE message_runs SET decisions = ?
       WHERE id = ? AND account_id = ? AND agent_id = ? AND status = 'pending'
         AND pending_tool_calls IS NOT NULL AND decisions IS ?
       RETURNING *`,
    ),
    resume: db.prepare<[string, string, string, string, string, string, string, string | null], SqliteRunRow>(
      `UPDATE message_runs SET decisions = ?, pending_tool_calls = NULL, approval_expires_at = NULL,
         lease_holder = ?, lease_expires_at = ?, deadline_at = ?
       WHERE id = ? AND account_id = ? AND agent_id = ? AND status = 'pending'
         AND pending_tool_calls IS NOT NULL AND decisions IS ?
       RETURNING *`,
    ),
    expiredApprovals: db.prepare<
      [string, number],
      {
        id: string;
        background: number;
        account_id: string;
        agent_id: string;
        user_id: string | null;
        room_id: string | null;
      }
    >(
      `SELECT id, background, account_id, agent_id, user_id, room_id FROM message_runs
       WHERE status = 'pending' AND approval_expires_at IS NOT NULL AND approval_expires_at < ?
       ORDER BY approval_expires_at LIMIT ?`,
    ),
    // Only while the run is there: a run purged (or erased) while it streams writes no orphans.
    insertEvent: db.prepare<[{ run: string; seq: number; type: string; data: string }]>(
      `INSERT INTO message_run_events (run_id, seq, type, data)
       SELECT @run, @seq, @type, @data WHERE EXISTS (SELECT 1 FROM message_runs WHERE id = @run)`,
    ),
    // Only while the run is pending: a run the kill switch ended is not written on by the process generating it
    // until that process notices (at its next lease renewal).
    appendEvent: db.prepare<[{ run: string; seq: number; type: string; data: string }]>(
      `INSERT INTO message_run_events (run_id, seq, type, data)
       SELECT @run, @seq, @type, @data WHERE EXISTS (SELECT 1 FROM message_runs WHERE id = @run AND status = 'pending')`,
    ),
    end: db.prepare<
      [
        string,
        string | null,
        string | null,
        string | null,
        string,
        string,
        string,
        number,
        string,
        string | null,
        string | null,
      ]
    >(
      `UPDATE message_runs SET status = ?, error_code = ?, error_message = ?, result = ?, ended_at = ?,
         expires_at = ?, kept_until = ?, cancelled = ?
       WHERE id = ? AND status = 'pending' AND (? IS NULL OR lease_holder = ?)`,
    ),
    get: db.prepare<[string, string, string], SqliteRunRow>(
      "SELECT * FROM message_runs WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    events: db.prepare<[string, number, number], RunEvent>(
      "SELECT seq, type, data FROM message_run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    keyed: db.prepare<[string, string, string], SqliteRunRow>(
      `SELECT * FROM message_runs
       WHERE account_id = ? AND key_hash = ? AND status = 'pending' AND deadline_at > ?
       ORDER BY created_at DESC LIMIT 1`,
    ),
    abandoned: db.prepare<[string, number], { id: string; background: number }>(
      `SELECT id, background FROM message_runs WHERE status = 'pending' AND deadline_at < ?
       ORDER BY deadline_at LIMIT ?`,
    ),
    forgotten: db.prepare<[string, number], { id: string }>(
      "SELECT id FROM message_runs WHERE kept_until IS NOT NULL AND kept_until < ? ORDER BY kept_until LIMIT ?",
    ),
    // Runs kept past their events, with events left: the sweep ends once each has been emptied.
    expiredWithEvents: db.prepare<[string, number], { id: string }>(
      `SELECT id FROM message_runs r WHERE expires_at IS NOT NULL AND expires_at < ? AND kept_until > expires_at
         AND EXISTS (SELECT 1 FROM message_run_events e WHERE e.run_id = r.id)
       ORDER BY expires_at LIMIT ?`,
    ),
    // The ids as one JSON array: one statement, however many.
    deleteEvents: db.prepare<[string]>(
      "DELETE FROM message_run_events WHERE run_id IN (SELECT value FROM json_each(?))",
    ),
    deleteRuns: db.prepare<[string]>("DELETE FROM message_runs WHERE id IN (SELECT value FROM json_each(?))"),
    deleteAgentEvents: db.prepare<[string, string]>(
      `DELETE FROM message_run_events WHERE run_id IN (${ofAgent})`,
    ),
    deleteAgentRuns: db.prepare<[string, string]>(`DELETE FROM message_runs WHERE id IN (${ofAgent})`),
    deleteUserEvents: db.prepare<[string, string]>(
      `DELETE FROM message_run_events WHERE run_id IN (${ofUser})`,
    ),
    deleteUserRuns: db.prepare<[string, string]>(`DELETE FROM message_runs WHERE id IN (${ofUser})`),
    deleteConversationEvents: db.prepare<[string, string, string]>(
      `DELETE FROM message_run_events WHERE run_id IN (${ofConversation})`,
    ),
    deleteConversationRuns: db.prepare<[string, string, string]>(
      `DELETE FROM message_runs WHERE id IN (${ofConversation})`,
    ),
  };
}
