import type { PgDatabase } from "@agentry/pg";
import type pg from "pg";
import { nameOutboxEvents } from "../outbox-ids.js";
import type { JsonObject, NewOutboxEvent, OutboxChannel, OutboxEvent, OutboxStore } from "../types.js";
import { iso, now } from "./shared.js";

interface OutboxRow {
  seq: string;
  event_id: string | null;
  type: OutboxEvent["type"];
  account_id: string;
  agent_id: string;
  payload: JsonObject;
  created_at: Date;
}

function statements(s: string) {
  return {
    insertEvent: `INSERT INTO ${s}.outbox (event_id, type, account_id, agent_id, payload, created_at)
      VALUES ($1, $2, $3, $4, $5, $6)`,
    // One statement per channel, each reading its own column (and partial index).
    unpublished: {
      conversation: `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM ${s}.outbox
        WHERE published_at IS NULL ORDER BY seq LIMIT $1`,
      webhooks: `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM ${s}.outbox
        WHERE webhooks_published_at IS NULL ORDER BY seq LIMIT $1`,
    } satisfies Record<OutboxChannel, string>,
    markPublished: {
      conversation: `UPDATE ${s}.outbox SET published_at = $2
        WHERE seq = ANY($1::bigint[]) AND published_at IS NULL`,
      webhooks: `UPDATE ${s}.outbox SET webhooks_published_at = $2
        WHERE seq = ANY($1::bigint[]) AND webhooks_published_at IS NULL`,
    } satisfies Record<OutboxChannel, string>,
    // COALESCE keeps an id another reader gave first; either way the statement answers the one that stays.
    nameEvents: `UPDATE ${s}.outbox o SET event_id = COALESCE(o.event_id, t.id)
      FROM unnest($1::bigint[], $2::text[]) AS t (seq, id)
      WHERE o.seq = t.seq RETURNING o.seq, o.event_id`,
  };
}

/** The outbox: what agent writes emit in their transactions (`emit`), and its reading by each channel. */
export function postgresOutbox(
  db: PgDatabase,
  schema: string,
): { store: OutboxStore; emit(client: pg.PoolClient, events: readonly NewOutboxEvent[]): Promise<void> } {
  const sql = statements(schema);
  async function emit(client: pg.PoolClient, events: readonly NewOutboxEvent[]): Promise<void> {
    for (const event of events) {
      await client.query(sql.insertEvent, [
        event.id,
        event.type,
        event.accountId,
        event.agentId,
        JSON.stringify(event.payload),
        now(),
      ]);
    }
  }

  const store: OutboxStore = {
    async unpublishedEvents(channel: OutboxChannel, limit: number): Promise<OutboxEvent[]> {
      const rows = await db.query<OutboxRow>(sql.unpublished[channel], [limit]);
      const unnamed = rows.filter((row) => row.event_id === null);
      if (unnamed.length > 0) {
        // Rows an older version wrote without an event id get one, the first reader's.
        const names = nameOutboxEvents(unnamed);
        const named = await db.query<{ seq: string; event_id: string }>(sql.nameEvents, [
          names.map(([seq]) => seq),
          names.map(([, id]) => id),
        ]);
        const ids = new Map(named.map((row) => [row.seq, row.event_id]));
        for (const row of unnamed) row.event_id = ids.get(row.seq) ?? null;
      }
      return rows.map((row) => ({
        seq: Number(row.seq),
        id: row.event_id!,
        type: row.type,
        accountId: row.account_id,
        agentId: row.agent_id,
        payload: row.payload,
        createdAt: iso(row.created_at),
      }));
    },
    async markEventsPublished(channel: OutboxChannel, seqs: number[]): Promise<void> {
      if (seqs.length > 0) await db.query(sql.markPublished[channel], [seqs, now()]);
    },
  };
  return { store, emit };
}
