import { type PgDatabase, run } from "@agentry/pg";
import type pg from "pg";
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

export interface PgRunRow {
  id: string;
  account_id: string;
  agent_id: string;
  user_id: string | null;
  room_id: string | null;
  background: boolean;
  status: RunStatus;
  error_code: string | null;
  error_message: string | null;
  result: string | null;
  created_at: Date;
  deadline_at: Date;
  ended_at: Date | null;
  expires_at: Date | null;
  kept_until: Date | null;
  logged: boolean;
  key_hash: string | null;
  key_request: string | null;
  lease_holder: string | null;
  lease_expires_at: Date | null;
  input: string | null;
  takeovers: number;
  cancelled: boolean;
  pending_tool_calls: string | null;
  approval_expires_at: Date | null;
  decisions: string | null;
}

/**
 * The message runs of the Postgres store (its tables of migrations 6, 8, 9, 10, 12 and 14). A run's events cascade with it. Events are
 * appended by the one process that generates the run, in order, so their numbers need no lock.
 */
export class PostgresRuns {
  private readonly sql: ReturnType<typeof statements>;

  /**
   * `writeOutbox`: writes message events to the outbox, and adds a call's tokens to the usage rollups, within the
   * transaction under way (a pause's or an end's).
   */
  constructor(
    private readonly db: PgDatabase,
    schema: string,
    private readonly writeOutbox: (
      client: pg.PoolClient,
      events: readonly NewOutboxEvent[],
      tokens?: CallRecord,
    ) => Promise<void>,
  ) {
    this.sql = statements(schema);
  }

  async write(writes: readonly RunWrite[]): Promise<void> {
    if (writes.length === 0) return;
    await this.db.transaction(async (client) => {
      // The event logs' batches need not wait for the WAL's flush (a crash of the database may lose the last
      // ones, never anything else): the service commits one while replies stream.
      await client.query("SET LOCAL synchronous_commit TO OFF");
      for (const write of writes) {
        if (write.kind === "start") await run(client, this.sql.insert, runValues(write.run));
        else if (write.kind === "events") {
          if (write.events.length > 0)
            await run(client, this.sql.appendEvents, eventValues(write.runId, write.events));
        } else if (write.kind === "pause")
          await this.pauseWith(client, write.runId, write.events, write.pause);
        else await this.endWith(client, write.runId, write.events, write.end);
      }
    });
  }

  async start(record: RunRecord, client?: pg.PoolClient): Promise<void> {
    if (client) await run(client, this.sql.insert, runValues(record));
    else await this.db.query(this.sql.insert, runValues(record));
  }

  async append(runId: string, events: readonly RunEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.query(this.sql.appendEvents, eventValues(runId, events));
  }

  async finish(runId: string, events: readonly RunEvent[], end: RunEnd): Promise<boolean> {
    return this.db.transaction((client) => this.endWith(client, runId, events, end));
  }

  private async endWith(
    client: pg.PoolClient,
    runId: string,
    events: readonly RunEvent[],
    end: RunEnd,
  ): Promise<boolean> {
    const ended = await run(client, this.sql.end, [
      end.status,
      end.errorCode,
      end.errorMessage,
      end.result,
      end.endedAt,
      end.expiresAt,
      end.keptUntil,
      runId,
      end.holder ?? null,
      end.cancelled ?? false,
    ]);
    if ((ended.rowCount ?? 0) === 0) return false;
    if (events.length > 0) await run(client, this.sql.insertEvents, eventValues(runId, events));
    if (end.events?.length) await this.writeOutbox(client, end.events);
    return true;
  }

  /** Pauses a run still pending (and held by `pause.holder`, when given) for approval, with its last events. */
  private async pauseWith(
    client: pg.PoolClient,
    runId: string,
    events: readonly RunEvent[],
    pause: RunPause,
  ): Promise<boolean> {
    const paused = await run(client, this.sql.pause, [
      pause.input,
      pause.pendingToolCalls,
      pause.expiresAt,
      pause.deadlineAt,
      runId,
      pause.holder ?? null,
    ]);
    if ((paused.rowCount ?? 0) === 0) return false;
    if (events.length > 0) await run(client, this.sql.insertEvents, eventValues(runId, events));
    await this.writeOutbox(client, pause.events, pause.tokens);
    return true;
  }

  async decide(
    accountId: string,
    agentId: string,
    runId: string,
    decision: RunDecision,
  ): Promise<RunRecord | null> {
    const [row] = decision.resume
      ? await this.db.query<PgRunRow>(this.sql.resume, [
          decision.decisions,
          decision.resume.holder,
          decision.resume.expiresAt,
          decision.resume.deadlineAt,
          runId,
          accountId,
          agentId,
          decision.expected,
        ])
      : await this.db.query<PgRunRow>(this.sql.decide, [
          decision.decisions,
          runId,
          accountId,
          agentId,
          decision.expected,
        ]);
    return row ? toRun(row) : null;
  }

  async expiredApprovals(now: string, limit: number): Promise<ExpiredApproval[]> {
    const rows = await this.db.query<{
      id: string;
      background: boolean;
      account_id: string;
      agent_id: string;
      user_id: string | null;
      room_id: string | null;
    }>(this.sql.expiredApprovals, [now, limit]);
    return rows.map((row) => ({
      id: row.id,
      background: row.background,
      accountId: row.account_id,
      agentId: row.agent_id,
      userId: row.user_id,
      roomId: row.room_id,
    }));
  }

  async get(accountId: string, agentId: string, runId: string): Promise<RunRecord | null> {
    const [row] = await this.db.query<PgRunRow>(this.sql.get, [runId, accountId, agentId]);
    return row ? toRun(row) : null;
  }

  async events(runId: string, after: number, limit: number): Promise<RunEvent[]> {
    return this.db.query<RunEvent>(this.sql.events, [runId, after, limit]);
  }

  async keyed(accountId: string, keyHash: string, now: string): Promise<RunRecord | null> {
    const [row] = await this.db.query<PgRunRow>(this.sql.keyed, [accountId, keyHash, now]);
    return row ? toRun(row) : null;
  }

  async renewLeases(holder: string, runIds: readonly string[], expiresAt: string): Promise<string[]> {
    if (runIds.length === 0) return [];
    const rows = await this.db.query<{ id: string }>(this.sql.renew, [expiresAt, holder, runIds]);
    return rows.map((row) => row.id);
  }

  async expiredLeases(now: string, limit: number): Promise<ExpiredLease[]> {
    const rows = await this.db.query<{ id: string; account_id: string; agent_id: string }>(
      this.sql.expiredLeases,
      [now, limit],
    );
    return rows.map((row) => ({ id: row.id, accountId: row.account_id, agentId: row.agent_id }));
  }

  /** One UPDATE whose condition is the lease's expiry: of two processes claiming a run at once, one gets it. */
  async claim(
    runId: string,
    claim: { holder: string; now: string; expiresAt: string; deadlineAt: string },
  ): Promise<RunRecord | null> {
    const [row] = await this.db.query<PgRunRow>(this.sql.claim, [
      claim.holder,
      claim.expiresAt,
      claim.deadlineAt,
      runId,
      claim.now,
    ]);
    return row ? toRun(row) : null;
  }

  /** On `client`, in its transaction, when given. */
  async cancelAgent(
    accountId: string,
    agentId: string,
    end: RunEnd,
    client?: pg.PoolClient,
  ): Promise<string[]> {
    const values = [
      end.status,
      end.errorCode,
      end.errorMessage,
      end.result,
      end.endedAt,
      end.expiresAt,
      end.keptUntil,
      accountId,
      agentId,
    ];
    const rows = client
      ? (await client.query<{ id: string }>(this.sql.cancelAgent, values)).rows
      : await this.db.query<{ id: string }>(this.sql.cancelAgent, values);
    return rows.map((row) => row.id);
  }

  async endedAmong(runIds: readonly string[]): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(this.sql.endedAmong, [runIds]);
    return rows.map((row) => row.id);
  }

  async abandoned(now: string, limit: number): Promise<Pick<RunRecord, "id" | "background">[]> {
    return this.db.query<{ id: string; background: boolean }>(this.sql.abandoned, [now, limit]);
  }

  async removeExpired(now: string, limit: number): Promise<number> {
    const removed = await this.db.query<{ id: string }>(this.sql.removeExpired, [now, limit]);
    // Runs kept past their events (failed background messages): their events go now, their record later.
    const emptied = await this.db.query<{ run_id: string }>(this.sql.removeExpiredEvents, [now, limit]);
    return removed.length + new Set(emptied.map((row) => row.run_id)).size;
  }

  /** Within a purge's transaction. */
  async deleteAgentRuns(client: pg.PoolClient, accountId: string, agentId: string): Promise<void> {
    await run(client, this.sql.deleteAgentRuns, [accountId, agentId]);
  }

  /** Within an erasure's transaction. */
  async deleteUserRuns(client: pg.PoolClient, accountId: string, userId: string): Promise<void> {
    await run(client, this.sql.deleteUserRuns, [accountId, userId]);
  }

  /** Within a conversation's deletion, before the conversation's row goes. */
  async deleteConversationRuns(
    client: pg.PoolClient,
    accountId: string,
    agentId: string,
    conversationId: string,
  ): Promise<void> {
    await run(client, this.sql.deleteConversationRuns, [conversationId, accountId, agentId]);
  }
}

function runValues(record: RunRecord): unknown[] {
  return [
    record.id,
    record.accountId,
    record.agentId,
    record.userId,
    record.roomId,
    record.background,
    record.status,
    record.errorCode,
    record.errorMessage,
    record.result,
    record.createdAt,
    record.deadlineAt,
    record.endedAt,
    record.expiresAt,
    record.keptUntil,
    record.logged,
    record.idempotencyKey?.hash ?? null,
    record.idempotencyKey?.request ?? null,
    record.lease?.holder ?? null,
    record.lease?.expiresAt ?? null,
    record.input ?? null,
    record.takeovers ?? 0,
  ];
}

/** The events as three arrays, unnested in order by one statement. */
function eventValues(runId: string, events: readonly RunEvent[]): unknown[] {
  return [
    runId,
    events.map((event) => event.seq),
    events.map((event) => event.type),
    events.map((event) => event.data),
  ];
}

export function toRun(row: PgRunRow): RunRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    userId: row.user_id,
    roomId: row.room_id,
    background: row.background,
    logged: row.logged,
    idempotencyKey: row.key_hash === null ? null : { hash: row.key_hash, request: row.key_request ?? "" },
    status: row.status,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    result: row.result,
    createdAt: row.created_at.toISOString(),
    deadlineAt: row.deadline_at.toISOString(),
    endedAt: row.ended_at?.toISOString() ?? null,
    expiresAt: row.expires_at?.toISOString() ?? null,
    keptUntil: row.kept_until?.toISOString() ?? null,
    ...(row.lease_holder === null
      ? {}
      : {
          lease: {
            holder: row.lease_holder,
            expiresAt: (row.lease_expires_at ?? row.deadline_at).toISOString(),
          },
        }),
    ...(row.input === null ? {} : { input: row.input }),
    ...(row.takeovers > 0 ? { takeovers: row.takeovers } : {}),
    ...(row.cancelled ? { cancelled: true } : {}),
    ...(row.pending_tool_calls === null
      ? {}
      : {
          approval: {
            pendingToolCalls: row.pending_tool_calls,
            expiresAt: (row.approval_expires_at ?? row.deadline_at).toISOString(),
          },
        }),
    ...(row.decisions === null ? {} : { decisions: row.decisions }),
  };
}

function statements(s: string) {
  const prepared = (name: string, text: string) => ({ name: `${s}.${name}`, text });
  return {
    insert: prepared(
      "insertRun",
      `INSERT INTO ${s}.message_runs (id, account_id, agent_id, user_id, room_id, background, status, error_code,
         error_message, result, created_at, deadline_at, ended_at, expires_at, kept_until, logged, key_hash,
         key_request, lease_holder, lease_expires_at, input, takeovers)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
    ),
    cancelAgent: prepared(
      "cancelAgentRuns",
      `UPDATE ${s}.message_runs SET status = $1, error_code = $2, error_message = $3, result = $4, ended_at = $5,
         expires_at = $6, kept_until = $7, cancelled = true
       WHERE account_id = $8 AND agent_id = $9 AND status = 'pending' AND logged
       RETURNING id`,
    ),
    endedAmong: prepared(
      "endedRunsAmong",
      `SELECT id FROM ${s}.message_runs WHERE id = ANY($1::text[]) AND status <> 'pending'`,
    ),
    renew: prepared(
      "renewRunLeases",
      `UPDATE ${s}.message_runs SET lease_expires_at = $1
       WHERE lease_holder = $2 AND status = 'pending' AND id = ANY($3::text[])
       RETURNING id`,
    ),
    expiredLeases: prepared(
      "expiredRunLeases",
      `SELECT id, account_id, agent_id FROM ${s}.message_runs
       WHERE status = 'pending' AND lease_expires_at IS NOT NULL AND lease_expires_at < $1
       ORDER BY lease_expires_at LIMIT $2`,
    ),
    claim: prepared(
      "claimRun",
      `UPDATE ${s}.message_runs SET lease_holder = $1, lease_expires_at = $2, deadline_at = $3,
         takeovers = takeovers + 1
       WHERE id = $4 AND status = 'pending' AND lease_expires_at IS NOT NULL AND lease_expires_at < $5
       RETURNING *`,
    ),
    // A paused run is a background message from now on (read by id, resumed from `input`), held by no process.
    pause: prepared(
      "pauseRun",
      `UPDATE ${s}.message_runs SET background = true, input = $1, pending_tool_calls = $2,
         approval_expires_at = $3, deadline_at = $4, lease_holder = NULL, lease_expires_at = NULL
       WHERE id = $5 AND status = 'pending' AND ($6::text IS NULL OR lease_holder = $6)`,
    ),
    decide: prepared(
      "decideRun",
      `UPDATE ${s}.message_runs SET decisions = $1
       WHERE id = $2 AND account_id = $3 AND agent_id = $4 AND status = 'pending'
         AND pending_tool_calls IS NOT NULL AND decisions IS NOT DISTINCT FROM $5::text
       RETURNING *`,
    ),
    resume: prepared(
      "resumeRun",
      `UPDATE ${s}.message_runs SET decisions = $1, pending_tool_calls = NULL, approval_expires_at = NULL,
         lease_holder = $2, lease_expires_at = $3, deadline_at = $4
       WHERE id = $5 AND account_id = $6 AND agent_id = $7 AND status = 'pending'
         AND pending_tool_calls IS NOT NULL AND decisions IS NOT DISTINCT FROM $8::text
       RETURNING *`,
    ),
    expiredApprovals: prepared(
      "expiredApprovals",
      `SELECT id, background, account_id, agent_id, user_id, room_id FROM ${s}.message_runs
       WHERE status = 'pending' AND approval_expires_at IS NOT NULL AND approval_expires_at < $1
       ORDER BY approval_expires_at LIMIT $2`,
    ),
    insertEvents: prepared(
      "insertRunEvents",
      // Only while the run is there: a run purged (or erased) while it streams fails no batch.
      `INSERT INTO ${s}.message_run_events (run_id, seq, type, data)
       SELECT $1, seq, type, data FROM unnest($2::integer[], $3::text[], $4::text[]) AS e (seq, type, data)
       WHERE EXISTS (SELECT 1 FROM ${s}.message_runs WHERE id = $1)`,
    ),
    // Only while the run is pending: a run the kill switch ended is not written on by the process generating it
    // until that process notices (at its next lease renewal).
    appendEvents: prepared(
      "appendRunEvents",
      `INSERT INTO ${s}.message_run_events (run_id, seq, type, data)
       SELECT $1, seq, type, data FROM unnest($2::integer[], $3::text[], $4::text[]) AS e (seq, type, data)
       WHERE EXISTS (SELECT 1 FROM ${s}.message_runs WHERE id = $1 AND status = 'pending')`,
    ),
    end: prepared(
      "endRun",
      `UPDATE ${s}.message_runs SET status = $1, error_code = $2, error_message = $3, result = $4, ended_at = $5,
         expires_at = $6, kept_until = $7, cancelled = $10
       WHERE id = $8 AND status = 'pending' AND ($9::text IS NULL OR lease_holder = $9)`,
    ),
    get: prepared(
      "getRun",
      `SELECT * FROM ${s}.message_runs WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    ),
    events: prepared(
      "runEvents",
      `SELECT seq, type, data FROM ${s}.message_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    ),
    keyed: prepared(
      "keyedRun",
      `SELECT * FROM ${s}.message_runs
       WHERE account_id = $1 AND key_hash = $2 AND status = 'pending' AND deadline_at > $3
       ORDER BY created_at DESC LIMIT 1`,
    ),
    abandoned: prepared(
      "abandonedRuns",
      `SELECT id, background FROM ${s}.message_runs WHERE status = 'pending' AND deadline_at < $1
       ORDER BY deadline_at LIMIT $2`,
    ),
    removeExpired: prepared(
      "removeExpiredRuns",
      `DELETE FROM ${s}.message_runs WHERE id IN (
         SELECT id FROM ${s}.message_runs WHERE kept_until IS NOT NULL AND kept_until < $1
         ORDER BY kept_until LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
    ),
    // Runs kept past their events, with events left: the sweep ends once each has been emptied.
    removeExpiredEvents: prepared(
      "removeExpiredRunEvents",
      `DELETE FROM ${s}.message_run_events WHERE run_id IN (
         SELECT id FROM ${s}.message_runs r WHERE expires_at IS NOT NULL AND expires_at < $1
           AND kept_until > expires_at AND EXISTS (SELECT 1 FROM ${s}.message_run_events e WHERE e.run_id = r.id)
         ORDER BY expires_at LIMIT $2)
       RETURNING run_id`,
    ),
    deleteAgentRuns: `DELETE FROM ${s}.message_runs WHERE account_id = $1 AND agent_id = $2`,
    // The blank user is the default conversation's; an erasure of "" takes the runs without a user id too.
    deleteUserRuns: `DELETE FROM ${s}.message_runs WHERE account_id = $1 AND coalesce(user_id, '') = $2`,
    // A conversation's: its agent's runs with its user and room (none given: the blank one).
    deleteConversationRuns: `DELETE FROM ${s}.message_runs r USING ${s}.conversations c
      WHERE c.id = $1 AND c.account_id = $2 AND c.agent_id = $3 AND r.account_id = c.account_id AND r.agent_id = c.agent_id
        AND coalesce(r.user_id, '') = c.user_id AND coalesce(r.room_id, '') = c.room_id`,
  };
}
