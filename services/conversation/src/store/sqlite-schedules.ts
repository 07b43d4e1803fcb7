import { currentAuditStamp, newAuditEvent } from "@agentry/core";
import type { SqliteAuditLog } from "@agentry/sqlite";
import type Database from "better-sqlite3";
import { scheduleAudit } from "./audit.js";
import { cursorOf, foreignCursor, pageOf } from "./queries.js";
import type { FireClaim, Page, PageRequest, SchedulePatch, ScheduleRecord, ScheduleStore } from "./types.js";

interface SqliteScheduleRow {
  id: string;
  account_id: string;
  agent_id: string;
  cron: string;
  timezone: string;
  text: string;
  user_id: string | null;
  room_id: string | null;
  enabled: number;
  next_fire_at: string | null;
  skipped_fires: number;
  last_scheduled_at: string | null;
  last_fired_at: string | null;
  last_message_id: string | null;
  last_error_code: string | null;
  last_error_message: string | null;
  created_at: string;
  updated_at: string;
}

/** The columns a PATCH may set, by the record's field names. */
const PATCHABLE = {
  cron: "cron",
  timezone: "timezone",
  text: "text",
  userId: "user_id",
  roomId: "room_id",
  enabled: "enabled",
  nextFireAt: "next_fire_at",
} as const;

/**
 * The schedules of the SQLite store (its tables of migration 13). A claim is one immediate transaction: SQLite
 * runs one writer at a time, so the conditional update and the fire's insert see no other claim between them.
 */
export class SqliteSchedules implements ScheduleStore {
  private readonly s: ReturnType<typeof prepare>;
  private readonly claim: Database.Transaction<(claim: FireClaim) => boolean>;

  constructor(
    private readonly db: Database.Database,
    private readonly audit: SqliteAuditLog,
  ) {
    const s = prepare(db);
    this.s = s;
    this.claim = db.transaction((claim: FireClaim) => {
      const advanced = s.advance.run({
        id: claim.scheduleId,
        scheduled_at: claim.scheduledAt,
        next_fire_at: claim.nextFireAt,
        skipped: claim.skipped,
      }).changes;
      if (advanced === 0 || !claim.fire) return false;
      const owner = s.owner.get(claim.scheduleId)!;
      const inserted = s.insertFire.run({
        schedule_id: claim.scheduleId,
        scheduled_at: claim.fire.scheduledAt,
        account_id: owner.account_id,
        agent_id: owner.agent_id,
        fired_at: claim.fire.firedAt,
        message_id: claim.fire.messageId,
      }).changes;
      if (inserted === 0) return false;
      s.lastFire.run({
        id: claim.scheduleId,
        scheduled_at: claim.fire.scheduledAt,
        fired_at: claim.fire.firedAt,
        message_id: claim.fire.messageId,
        error_code: claim.fire.error?.code ?? null,
        error_message: claim.fire.error?.message ?? null,
      });
      return true;
    });
  }

  async createSchedule(schedule: ScheduleRecord): Promise<ScheduleRecord> {
    const stamp = currentAuditStamp();
    return this.db.transaction(() => {
      this.insert(schedule);
      const created = this.read(schedule.accountId, schedule.agentId, schedule.id)!;
      this.audit.record(schedule.accountId, newAuditEvent(scheduleAudit.create(created), stamp));
      return created;
    })();
  }

  private read(accountId: string, agentId: string, id: string): ScheduleRecord | null {
    const row = this.s.get.get(id, accountId, agentId);
    return row ? scheduleRecord(row) : null;
  }

  private insert(schedule: ScheduleRecord): void {
    this.s.insert.run({
      id: schedule.id,
      account_id: schedule.accountId,
      agent_id: schedule.agentId,
      cron: schedule.cron,
      timezone: schedule.timezone,
      text: schedule.text,
      user_id: schedule.userId,
      room_id: schedule.roomId,
      enabled: schedule.enabled ? 1 : 0,
      next_fire_at: schedule.nextFireAt,
      created_at: schedule.createdAt,
      updated_at: schedule.updatedAt,
    });
  }

  async getSchedule(accountId: string, agentId: string, id: string): Promise<ScheduleRecord | null> {
    const row = this.s.get.get(id, accountId, agentId);
    return row ? scheduleRecord(row) : null;
  }

  async listSchedules(accountId: string, agentId: string, page: PageRequest): Promise<Page<ScheduleRecord>> {
    const cursor = cursorOf(page);
    if (cursor !== null && !this.s.get.get(cursor, accountId, agentId)) throw foreignCursor(page);
    const reading = page.before !== null ? "DESC" : page.after !== null ? "ASC" : page.order.toUpperCase();
    const bound = page.before !== null ? "AND id < ?" : page.after !== null ? "AND id > ?" : "";
    const rows = this.db
      .prepare<unknown[], SqliteScheduleRow>(
        `SELECT * FROM schedules WHERE account_id = ? AND agent_id = ? ${bound} ORDER BY id ${reading} LIMIT ?`,
      )
      .all(accountId, agentId, ...(cursor !== null ? [cursor] : []), page.limit + 1);
    return pageOf(rows, page, scheduleRecord);
  }

  async updateSchedule(
    accountId: string,
    agentId: string,
    id: string,
    patch: SchedulePatch,
  ): Promise<ScheduleRecord | null> {
    const sets = ["updated_at = @updated_at"];
    const values: Record<string, unknown> = { id, account_id: accountId, agent_id: agentId };
    values.updated_at = patch.updatedAt;
    for (const [field, column] of Object.entries(PATCHABLE)) {
      const value = patch[field as keyof typeof PATCHABLE];
      if (value === undefined) continue;
      sets.push(`${column} = @${column}`);
      values[column] = typeof value === "boolean" ? (value ? 1 : 0) : value;
    }
    const update = this.db.prepare(
      `UPDATE schedules SET ${sets.join(", ")} WHERE id = @id AND account_id = @account_id AND agent_id = @agent_id`,
    );
    const stamp = currentAuditStamp();
    return this.db.transaction(() => {
      const before = this.read(accountId, agentId, id);
      if (!before || update.run(values).changes === 0) return null;
      const after = this.read(accountId, agentId, id)!;
      this.audit.record(accountId, newAuditEvent(scheduleAudit.update(before, after), stamp));
      return after;
    })();
  }

  async deleteSchedule(accountId: string, agentId: string, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const deleted = this.s.delete.run(id, accountId, agentId).changes > 0;
      if (deleted) {
        this.s.deleteFires.run(id);
        this.audit.record(accountId, newAuditEvent(scheduleAudit.delete(id)));
      }
      return deleted;
    })();
  }

  async dueSchedules(now: string, limit: number): Promise<ScheduleRecord[]> {
    return this.s.due.all(now, limit).map(scheduleRecord);
  }

  async claimFire(claim: FireClaim): Promise<boolean> {
    return this.claim.immediate(claim);
  }

  async removeOldFires(before: string, limit: number): Promise<number> {
    return this.s.removeOld.run(before, limit).changes;
  }

  /** Within the store's purge transaction. */
  deleteAgent(accountId: string, agentId: string): void {
    this.s.deleteAgent.run(accountId, agentId);
    this.s.deleteAgentFires.run(accountId, agentId);
  }
}

function prepare(db: Database.Database) {
  return {
    insert: db.prepare(
      `INSERT INTO schedules (id, account_id, agent_id, cron, timezone, text, user_id, room_id, enabled,
         next_fire_at, created_at, updated_at)
       VALUES (@id, @account_id, @agent_id, @cron, @timezone, @text, @user_id, @room_id, @enabled, @next_fire_at,
         @created_at, @updated_at)`,
    ),
    get: db.prepare<[string, string, string], SqliteScheduleRow>(
      "SELECT * FROM schedules WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    owner: db.prepare<[string], { account_id: string; agent_id: string }>(
      "SELECT account_id, agent_id FROM schedules WHERE id = ?",
    ),
    delete: db.prepare("DELETE FROM schedules WHERE id = ? AND account_id = ? AND agent_id = ?"),
    deleteFires: db.prepare("DELETE FROM schedule_fires WHERE schedule_id = ?"),
    due: db.prepare<[string, number], SqliteScheduleRow>(
      `SELECT * FROM schedules WHERE enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= ?
       ORDER BY next_fire_at LIMIT ?`,
    ),
    advance: db.prepare(
      `UPDATE schedules SET next_fire_at = @next_fire_at, skipped_fires = skipped_fires + @skipped
       WHERE id = @id AND enabled = 1 AND next_fire_at = @scheduled_at`,
    ),
    insertFire: db.prepare(
      `INSERT INTO schedule_fires (schedule_id, scheduled_at, account_id, agent_id, fired_at, message_id)
       VALUES (@schedule_id, @scheduled_at, @account_id, @agent_id, @fired_at, @message_id)
       ON CONFLICT DO NOTHING`,
    ),
    lastFire: db.prepare(
      `UPDATE schedules SET last_scheduled_at = @scheduled_at, last_fired_at = @fired_at,
         last_message_id = @message_id, last_error_code = @error_code, last_error_message = @error_message
       WHERE id = @id`,
    ),
    removeOld: db.prepare<[string, number]>(
      `DELETE FROM schedule_fires WHERE rowid IN
         (SELECT rowid FROM schedule_fires WHERE scheduled_at < ? LIMIT ?)`,
    ),
    deleteAgent: db.prepare<[string, string]>("DELETE FROM schedules WHERE account_id = ? AND agent_id = ?"),
    deleteAgentFires: db.prepare<[string, string]>(
      "DELETE FROM schedule_fires WHERE account_id = ? AND agent_id = ?",
    ),
  };
}

function scheduleRecord(row: SqliteScheduleRow): ScheduleRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    cron: row.cron,
    timezone: row.timezone,
    text: row.text,
    userId: row.user_id,
    roomId: row.room_id,
    enabled: row.enabled === 1,
    nextFireAt: row.next_fire_at,
    skippedFires: row.skipped_fires,
    lastFire:
      row.last_scheduled_at !== null && row.last_fired_at !== null
        ? {
            scheduledAt: row.last_scheduled_at,
            firedAt: row.last_fired_at,
            messageId: row.last_message_id,
            error:
              row.last_error_code !== null
                ? { code: row.last_error_code, message: row.last_error_message ?? "" }
                : null,
          }
        : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
