import { type PgDatabase, run } from "@agentry/pg";
import type pg from "pg";
import type {
  ConflictMode,
  ConversationKey,
  QueueEntry,
  QueueJoin,
  QueueRenewal,
  QueueTurn,
} from "./types.js";

/**
 * The conversations' queues of the Postgres store (migration 15). Joining and admitting hold a transaction lock
 * on the conversation (an advisory lock on its key's hash), so that places are numbered in the order they commit
 * and no two messages of one conversation are admitted at once. Its commits wait for the WAL's flush, unlike
 * SQLite's (sqlite-queue.ts): a database that crashes and restarts leaves the conversation processes running, so
 * a place it took back would let a second message of a conversation in while the first is answered.
 */
export class PostgresQueue {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    private readonly db: PgDatabase,
    schema: string,
  ) {
    this.sql = statements(schema);
  }

  async join(entry: QueueEntry, mode: ConflictMode, now: string): Promise<QueueJoin> {
    const key = conversationValues(entry.key);
    return this.db.transaction(async (client): Promise<QueueJoin> => {
      await lock(client, entry.key);
      await run(client, this.sql.dropExpired, [...key, now]);
      const live = await run<{ id: string }>(client, this.sql.live, [...key, now, entry.id]);
      if (mode === "reject" && live.rows.length > 0) return "refused";
      if (mode === "interrupt") await run(client, this.sql.interruptAll, [...key, now, entry.id]);
      await run(client, this.sql.upsert, [
        entry.id,
        ...key,
        entry.holder,
        entry.owner,
        entry.expiresAt,
        entry.createdAt,
        entry.takeover === true,
      ]);
      // Joined in an empty line, the place is admitted with the same commit (the lock is held already).
      const own = await run<{ admitted: boolean }>(client, this.sql.get, [entry.id]);
      if (own.rows[0]?.admitted) return "admitted";
      if ((await run(client, this.sql.ahead, [entry.id, now])).rows.length > 0) return "waiting";
      await run(client, this.sql.admit, [entry.id]);
      return "admitted";
    });
  }

  async admit(id: string, now: string): Promise<QueueTurn> {
    return this.db.transaction(async (client) => {
      const own = await run<ConversationRow & { admitted: boolean }>(client, this.sql.get, [id]);
      const row = own.rows[0];
      if (!row) return "gone";
      if (row.admitted) return "admitted";
      await lock(client, {
        accountId: row.account_id,
        agentId: row.agent_id,
        userId: row.user_id,
        roomId: row.room_id,
      });
      const ahead = await run(client, this.sql.ahead, [id, now]);
      if (ahead.rows.length > 0) return "waiting";
      await run(client, this.sql.admit, [id]);
      return "admitted";
    });
  }

  /** Gives the place `id` to the attempt whose run was just recorded, within `client`'s transaction. */
  async own(client: pg.PoolClient, id: string, holder: string, owner: string): Promise<void> {
    await run(client, this.sql.own, [id, holder, owner]);
  }

  /** Leaves the line; with `client`, in that client's transaction. */
  async leave(id: string, owner: string, client?: pg.PoolClient): Promise<void> {
    if (client) await run(client, this.sql.leave, [id, owner]);
    else await this.db.query(this.sql.leave, [id, owner]);
  }

  async renew(holder: string, ids: readonly string[], expiresAt: string): Promise<QueueRenewal[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<{ id: string; interrupted: boolean }>(this.sql.renew, [
      expiresAt,
      holder,
      ids,
    ]);
    return rows.map((row) => ({ id: row.id, interrupted: row.interrupted }));
  }
}

interface ConversationRow {
  account_id: string;
  agent_id: string;
  user_id: string;
  room_id: string;
}

function conversationValues(key: ConversationKey): [string, string, string, string] {
  return [key.accountId, key.agentId, key.userId, key.roomId];
}

/** Held to the transaction's end: one conversation's line is changed by one transaction at a time. */
async function lock(client: pg.PoolClient, key: ConversationKey): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 15))", [
    JSON.stringify(conversationValues(key)),
  ]);
}

function statements(s: string) {
  const prepared = (name: string, text: string) => ({ name: `${s}.${name}`, text });
  const conversation = "account_id = $1 AND agent_id = $2 AND user_id = $3 AND room_id = $4";
  return {
    dropExpired: prepared(
      "queueDropExpired",
      `DELETE FROM ${s}.conversation_queue WHERE ${conversation} AND expires_at <= $5`,
    ),
    live: prepared(
      "queueLive",
      `SELECT id FROM ${s}.conversation_queue WHERE ${conversation} AND expires_at > $5 AND id <> $6`,
    ),
    interruptAll: prepared(
      "queueInterruptAll",
      `UPDATE ${s}.conversation_queue SET interrupted = true
       WHERE ${conversation} AND expires_at > $5 AND id <> $6`,
    ),
    // A place joined again by its owner, or by the process that took its run over, keeps its order in line.
    // Another attempt at the message (a schedule fire started by two processes) leaves the place as it is: the
    // place is that of the attempt whose run is recorded (`own`), never taken, then left, by the other.
    upsert: prepared(
      "queueUpsert",
      `INSERT INTO ${s}.conversation_queue (id, account_id, agent_id, user_id, room_id, holder, owner, expires_at,
         created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, expires_at = excluded.expires_at
       WHERE ${s}.conversation_queue.owner = excluded.owner
         OR ($10::boolean AND EXISTS (
           SELECT 1 FROM ${s}.message_runs r WHERE r.id = excluded.id AND r.lease_holder = excluded.holder))`,
    ),
    get: prepared(
      "queueGet",
      `SELECT account_id, agent_id, user_id, room_id, admitted FROM ${s}.conversation_queue WHERE id = $1`,
    ),
    ahead: prepared(
      "queueAhead",
      `SELECT o.id FROM ${s}.conversation_queue me JOIN ${s}.conversation_queue o
         ON o.account_id = me.account_id AND o.agent_id = me.agent_id AND o.user_id = me.user_id
           AND o.room_id = me.room_id AND o.id <> me.id
       WHERE me.id = $1 AND o.expires_at > $2 AND (o.seq < me.seq OR o.admitted)
       LIMIT 1`,
    ),
    admit: prepared("queueAdmit", `UPDATE ${s}.conversation_queue SET admitted = true WHERE id = $1`),
    own: prepared("queueOwn", `UPDATE ${s}.conversation_queue SET holder = $2, owner = $3 WHERE id = $1`),
    leave: prepared("queueLeave", `DELETE FROM ${s}.conversation_queue WHERE id = $1 AND owner = $2`),
    renew: prepared(
      "queueRenew",
      `UPDATE ${s}.conversation_queue SET expires_at = $1 WHERE holder = $2 AND id = ANY($3)
       RETURNING id, interrupted`,
    ),
  };
}
