import type Database from "better-sqlite3";
import { type RelaxedWrite, relaxedWrites } from "./sqlite-relaxed.js";
import type { ConflictMode, QueueEntry, QueueJoin, QueueRenewal, QueueTurn } from "./types.js";

interface QueueRow {
  id: string;
  seq: number;
  admitted: number;
  interrupted: number;
}

/**
 * The conversations' queues of the SQLite store (migration 15). Every statement that decides who goes next runs
 * in an IMMEDIATE transaction: SQLite has one writer at a time, so two processes on one file see each other's
 * places in line.
 *
 * The line is bookkeeping: its writes commit without waiting for the disk (`synchronous = NORMAL`, which in WAL
 * mode survives the process being killed, and which the connection's next durable commit takes to disk). A power
 * loss may take back the last of them, and every place it could take back is one of a process that stopped with
 * the machine, which its lease would pass over anyway. A message that completes leaves its place in the durable
 * transaction of its exchange (the store's `saveExchange`).
 */
export class SqliteQueue {
  private readonly joinOne: Database.Transaction<
    (entry: QueueEntry, mode: ConflictMode, now: string) => QueueJoin
  >;
  private readonly admitOne: Database.Transaction<(id: string, now: string) => QueueTurn>;
  private readonly s: ReturnType<typeof prepare>;
  private readonly relaxed: RelaxedWrite;

  constructor(db: Database.Database) {
    const s = prepare(db);
    this.s = s;
    this.relaxed = relaxedWrites(db);
    const admit = (id: string, now: string): QueueTurn => {
      const own = s.get.get(id);
      if (!own) return "gone";
      if (own.admitted === 1) return "admitted";
      const ahead = s.ahead.get(id, now);
      if (ahead) return "waiting";
      s.admit.run(id);
      return "admitted";
    };
    this.joinOne = db.transaction((entry: QueueEntry, mode: ConflictMode, now: string): QueueJoin => {
      const { accountId, agentId, userId, roomId } = entry.key;
      const key = [accountId, agentId, userId, roomId] as const;
      s.dropExpired.run(...key, now);
      const others = s.live.all(...key, now).filter((row) => row.id !== entry.id);
      if (mode === "reject" && others.length > 0) return "refused";
      if (mode === "interrupt") s.interruptAll.run(...key, now, entry.id);
      // A place joined again by its owner, or by the process that took its run over, keeps its order in line.
      // Another attempt at the message (a schedule fire started by two processes) leaves the place as it is:
      // the place is that of the attempt whose run is recorded (`own`), never taken, then left, by the other.
      s.upsert.run({
        id: entry.id,
        account_id: accountId,
        agent_id: agentId,
        user_id: userId,
        room_id: roomId,
        holder: entry.holder,
        owner: entry.owner,
        takeover: entry.takeover ? 1 : 0,
        expires_at: entry.expiresAt,
        created_at: entry.createdAt,
      });
      // Joined in an empty line, the place is admitted with the same commit.
      return admit(entry.id, now) === "admitted" ? "admitted" : "waiting";
    });
    this.admitOne = db.transaction(admit);
  }

  join(entry: QueueEntry, mode: ConflictMode, now: string): QueueJoin {
    return this.relaxed(() => this.joinOne.immediate(entry, mode, now));
  }

  admit(id: string, now: string): QueueTurn {
    return this.relaxed(() => this.admitOne.immediate(id, now));
  }

  /** Gives the place `id` to the attempt whose run was just recorded (within that transaction). */
  own(id: string, holder: string, owner: string): void {
    this.s.own.run(holder, owner, id);
  }

  /** Leaves the line; `within`: in a transaction under way (it commits as that one does). */
  leave(id: string, owner: string, within = false): void {
    if (within) this.s.leave.run(id, owner);
    else this.relaxed(() => this.s.leave.run(id, owner));
  }

  renew(holder: string, ids: readonly string[], expiresAt: string): QueueRenewal[] {
    if (ids.length === 0) return [];
    return this.relaxed(() =>
      this.s.renew
        .all(expiresAt, holder, JSON.stringify(ids))
        .map((row) => ({ id: row.id, interrupted: row.interrupted === 1 })),
    );
  }
}

function prepare(db: Database.Database) {
  const conversation = "account_id = ? AND agent_id = ? AND user_id = ? AND room_id = ?";
  return {
    live: db.prepare<[string, string, string, string, string], { id: string }>(
      `SELECT id FROM conversation_queue WHERE ${conversation} AND expires_at > ?`,
    ),
    // Places whose holder stopped renewing them: their process is gone (a run taken over joins again).
    dropExpired: db.prepare<[string, string, string, string, string]>(
      `DELETE FROM conversation_queue WHERE ${conversation} AND expires_at <= ?`,
    ),
    interruptAll: db.prepare<[string, string, string, string, string, string]>(
      `UPDATE conversation_queue SET interrupted = 1 WHERE ${conversation} AND expires_at > ? AND id <> ?`,
    ),
    upsert: db.prepare<
      [
        {
          id: string;
          account_id: string;
          agent_id: string;
          user_id: string;
          room_id: string;
          holder: string;
          owner: string;
          takeover: number;
          expires_at: string;
          created_at: string;
        },
      ]
    >(
      `INSERT INTO conversation_queue (id, account_id, agent_id, user_id, room_id, holder, owner, expires_at,
         created_at)
       VALUES (@id, @account_id, @agent_id, @user_id, @room_id, @holder, @owner, @expires_at, @created_at)
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, expires_at = excluded.expires_at
       WHERE conversation_queue.owner = excluded.owner
         OR (@takeover = 1 AND EXISTS (SELECT 1 FROM message_runs WHERE id = @id AND lease_holder = @holder))`,
    ),
    get: db.prepare<[string], QueueRow>(
      "SELECT id, seq, admitted, interrupted FROM conversation_queue WHERE id = ?",
    ),
    // Ahead of an entry: a live one of its conversation before it in line, or one already admitted (a run taken
    // over, which kept its earlier place, finds the one admitted after it had gone quiet still running).
    ahead: db.prepare<[string, string], { id: string }>(
      `SELECT o.id FROM conversation_queue me JOIN conversation_queue o
         ON o.account_id = me.account_id AND o.agent_id = me.agent_id AND o.user_id = me.user_id
           AND o.room_id = me.room_id AND o.id <> me.id
       WHERE me.id = ? AND o.expires_at > ? AND (o.seq < me.seq OR o.admitted = 1)
       LIMIT 1`,
    ),
    admit: db.prepare<[string]>("UPDATE conversation_queue SET admitted = 1 WHERE id = ?"),
    own: db.prepare<[string, string, string]>(
      "UPDATE conversation_queue SET holder = ?, owner = ? WHERE id = ?",
    ),
    leave: db.prepare<[string, string]>("DELETE FROM conversation_queue WHERE id = ? AND owner = ?"),
    renew: db.prepare<[string, string, string], { id: string; interrupted: number }>(
      `UPDATE conversation_queue SET expires_at = ?
       WHERE holder = ? AND id IN (SELECT value FROM json_each(?))
       RETURNING id, interrupted`,
    ),
  };
}
