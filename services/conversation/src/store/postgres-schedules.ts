import { newAuditEvent } from "@agentry/core";
import type { PgAuditLog, PgDatabase } from "@agentry/pg";
import type pg from "pg";
import { scheduleAudit } from "./audit.js";
import { cursorOf, foreignCursor, pageOf } from "./queries.js";
import type { FireClaim, Page, PageRequest, SchedulePatch, ScheduleRecord, ScheduleStore } from "./types.js";

interface PgScheduleRow {
  id: string;
  account_id: string;
  agent_id: string;
  cron: string;
  timezone: string;
  text: string;
  user_id: string | null;
  room_id: string | null;
  enabled: boolean;
  next_fire_at: Date | null;
  skipped_fires: string;
  last_scheduled_at: Date | null;
  last_fired_at: Date | null;
  last_message_id: string | null;
  last_error_code: string | null;
  last_error_message: string | null;
  created_at: Date;
  updated_at: Date;
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
 * The schedules of the Postgres store (its tables of migration 13). A claim is one transaction: the conditional
 * update of the schedule waits for a concurrent claim's commit and then finds `next_fire_at` moved (read
 * committed re-reads the row), so only one claimer advances it; the fire's primary key refuses a second row
 * for the same time whatever happened to the schedule meanwhile.
 */
export class PostgresSchedules implements ScheduleStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    private readonly db: PgDatabase,
    private readonly schema: string,
    private readonly audit: PgAuditLog,
  ) {
    this.sql = statements(schema);
  }

  async createSchedule(schedule: ScheduleRecord): Promise<ScheduleRecord> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<PgScheduleRow>(this.sql.insert, [
        schedule.id,
        schedule.accountId,
        schedule.agentId,
        schedule.cron,
        schedule.timezone,
        schedule.text,
        schedule.userId,
        schedule.roomId,
        schedule.enabled,
        schedule.nextFireAt,
        schedule.createdAt,
        schedule.updatedAt,
      ]);
      const created = scheduleRecord(rows[0]!);
      await this.audit.record(client, schedule.accountId, newAuditEvent(scheduleAudit.create(created)));
      return created;
    });
  }

  async getSchedule(accountId: string, agentId: string, id: string): Promise<ScheduleRecord | null> {
    const rows = await this.db.query<PgScheduleRow>(this.sql.get, [id, accountId, agentId]);
    return rows[0] ? scheduleRecord(rows[0]) : null;
  }

  async listSchedules(accountId: string, agentId: string, page: PageRequest): Promise<Page<ScheduleRecord>> {
    const cursor = cursorOf(page);
    if (cursor !== null && !(await this.getSchedule(accountId, agentId, cursor))) throw foreignCursor(page);
    const reading = page.before !== null ? "DESC" : page.after !== null ? "ASC" : page.order.toUpperCase();
    const bound = page.before !== null ? "AND id < $4" : page.after !== null ? "AND id > $4" : "";
    const rows = await this.db.query<PgScheduleRow>(
      `SELECT * FROM ${this.schema}.schedules WHERE account_id = $1 AND agent_id = $2 ${bound}
       ORDER BY id ${reading} LIMIT $3`,
      [accountId, agentId, page.limit + 1, ...(cursor !== null ? [cursor] : [])],
    );
    return pageOf(rows, page, scheduleRecord);
  }

  async updateSchedule(
    accountId: string,
    agentId: string,
    id: string,
    patch: SchedulePatch,
  ): Promise<ScheduleRecord | null> {
    const values: unknown[] = [id, accountId, agentId, patch.updatedAt];
    const sets = ["updated_at = $4"];
    for (const [field, column] of Object.entries(PATCHABLE)) {
      const value = patch[field as keyof typeof PATCHABLE];
      if (value === undefined) continue;
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    }
    return this.db.transaction(async (client) => {
      const old = (await client.query<PgScheduleRow>(`${this.sql.get} FOR UPDATE`, [id, accountId, agentId]))
        .rows[0];
      if (!old) return null;
      const { rows } = await client.query<PgScheduleRow>(
        `UPDATE ${this.schema}.schedules SET ${sets.join(", ")}
         WHERE id = $1 AND account_id = $2 AND agent_id = $3 RETURNING *`,
        values,
      );
      if (!rows[0]) return null;
      const after = scheduleRecord(rows[0]);
      await this.audit.record(
        client,
        accountId,
        newAuditEvent(scheduleAudit.update(scheduleRecord(old), after)),
      );
      return after;
    });
  }

  async deleteSchedule(accountId: string, agentId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const deleted = ((await client.query(this.sql.delete, [id, accountId, agentId])).rowCount ?? 0) > 0;
      if (deleted) {
        await client.query(this.sql.deleteFires, [id]);
        await this.audit.record(client, accountId, newAuditEvent(scheduleAudit.delete(id)));
      }
      return deleted;
    });
  }

  async dueSchedules(now: string, limit: number): Promise<ScheduleRecord[]> {
    return (await this.db.query<PgScheduleRow>(this.sql.due, [now, limit])).map(scheduleRecord);
  }

  async claimFire(claim: FireClaim): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const advanced = await client.query<{ account_id: string; agent_id: string }>(this.sql.advance, [
        claim.scheduleId,
        claim.scheduledAt,
        claim.nextFireAt,
        claim.skipped,
      ]);
      const owner = advanced.rows[0];
      if (!owner || !claim.fire) return false;
      const inserted = await client.query(this.sql.insertFire, [
        claim.scheduleId,
        claim.fire.scheduledAt,
        owner.account_id,
        owner.agent_id,
        claim.fire.firedAt,
        claim.fire.messageId,
      ]);
      if ((inserted.rowCount ?? 0) === 0) return false;
      await client.query(this.sql.lastFire, [
        claim.scheduleId,
        claim.fire.scheduledAt,
        claim.fire.firedAt,
        claim.fire.messageId,
        claim.fire.error?.code ?? null,
        claim.fire.error?.message ?? null,
      ]);
      return true;
    });
  }

  async removeOldFires(before: string, limit: number): Promise<number> {
    const rows = await this.db.query<{ n: string }>(this.sql.removeOld, [before, limit]);
    return Number(rows[0]?.n ?? 0);
  }

  /** Within the store's purge transaction. */
  async deleteAgent(client: pg.PoolClient, accountId: string, agentId: string): Promise<void> {
    await client.query(this.sql.deleteAgent, [accountId, agentId]);
    await client.query(this.sql.deleteAgentFires, [accountId, agentId]);
  }
}

function statements(s: string) {
  return {
    insert: `INSERT INTO ${s}.schedules (id, account_id, agent_id, cron, timezone, text, user_id, room_id, enabled,
        next_fire_at, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
    get: `SELECT * FROM ${s}.schedules WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    delete: `DELETE FROM ${s}.schedules WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    deleteFires: `DELETE FROM ${s}.schedule_fires WHERE schedule_id = $1`,
    due: `SELECT * FROM ${s}.schedules WHERE enabled AND next_fire_at IS NOT NULL AND next_fire_at <= $1
      ORDER BY next_fire_at LIMIT $2`,
    advance: `UPDATE ${s}.schedules SET next_fire_at = $3, skipped_fires = skipped_fires + $4
      WHERE id = $1 AND enabled AND next_fire_at = $2 RETURNING account_id, agent_id`,
    insertFire: `INSERT INTO ${s}.schedule_fires (schedule_id, scheduled_at, account_id, agent_id, fired_at,
        message_id)
      VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    lastFire: `UPDATE ${s}.schedules SET last_scheduled_at = $2, last_fired_at = $3, last_message_id = $4,
        last_error_code = $5, last_error_message = $6
      WHERE id = $1`,
    removeOld: `WITH gone AS (
        DELETE FROM ${s}.schedule_fires WHERE ctid IN
          (SELECT ctid FROM ${s}.schedule_fires WHERE scheduled_at < $1 LIMIT $2)
        RETURNING 1)
      SELECT count(*) AS n FROM gone`,
    deleteAgent: `DELETE FROM ${s}.schedules WHERE account_id = $1 AND agent_id = $2`,
    deleteAgentFires: `DELETE FROM ${s}.schedule_fires WHERE account_id = $1 AND agent_id = $2`,
  };
}

function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

function scheduleRecord(row: PgScheduleRow): ScheduleRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    cron: row.cron,
    timezone: row.timezone,
    text: row.text,
    userId: row.user_id,
    roomId: row.room_id,
    enabled: row.enabled,
    nextFireAt: iso(row.next_fire_at),
    skippedFires: Number(row.skipped_fires),
    lastFire:
      row.last_scheduled_at !== null && row.last_fired_at !== null
        ? {
            scheduledAt: row.last_scheduled_at.toISOString(),
            firedAt: row.last_fired_at.toISOString(),
            messageId: row.last_message_id,
            error:
              row.last_error_code !== null
                ? { code: row.last_error_code, message: row.last_error_message ?? "" }
                : null,
          }
        : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
