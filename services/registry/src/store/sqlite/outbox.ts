import type Database from "better-sqlite3";
import { nameOutboxEvents } from "../outbox-ids.js";
import type { JsonObject, NewOutboxEvent, OutboxChannel, OutboxEvent, OutboxStore } from "../types.js";
import { now, preparer } from "./shared.js";

interface OutboxRow {
  seq: number;
  event_id: string | null;
  type: OutboxEvent["type"];
  account_id: string;
  agent_id: string;
  payload: string;
  created_at: string;
}

/** The outbox: what agent writes emit in their transactions (`emit`), and its reading by each channel. */
export function sqliteOutbox(db: Database.Database): {
  store: OutboxStore;
  emit(events: readonly NewOutboxEvent[]): void;
} {
  const prepare = preparer(db);
  const sql = {
    insertEvent: prepare<[string, string, string, string, string, string]>(
      "INSERT INTO outbox (event_id, type, account_id, agent_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    // One statement per channel, each reading its own column (and partial index).
    unpublished: {
      conversation: prepare<[number], OutboxRow>(
        `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM outbox
         WHERE published_at IS NULL ORDER BY seq LIMIT ?`,
      ),
      webhooks: prepare<[number], OutboxRow>(
        `SELECT seq, event_id, type, account_id, agent_id, payload, created_at FROM outbox
         WHERE webhooks_published_at IS NULL ORDER BY seq LIMIT ?`,
      ),
    } satisfies Record<OutboxChannel, unknown>,
    markPublished: {
      conversation: prepare<[string, number]>(
        "UPDATE outbox SET published_at = ? WHERE seq = ? AND published_at IS NULL",
      ),
      webhooks: prepare<[string, number]>(
        "UPDATE outbox SET webhooks_published_at = ? WHERE seq = ? AND webhooks_published_at IS NULL",
      ),
    } satisfies Record<OutboxChannel, unknown>,
    nameEvent: prepare<[string, number]>("UPDATE outbox SET event_id = ? WHERE seq = ? AND event_id IS NULL"),
    eventId: prepare<[number], string>("SELECT event_id FROM outbox WHERE seq = ?").pluck(),
  };

  const emit = (events: readonly NewOutboxEvent[]) => {
    for (const event of events) {
      sql.insertEvent.run(
        event.id,
        event.type,
        event.accountId,
        event.agentId,
        JSON.stringify(event.payload),
        now(),
      );
    }
  };

  const markPublished = db.transaction((channel: OutboxChannel, seqs: number[]) => {
    const at = now();
    for (const seq of seqs) sql.markPublished[channel].run(at, seq);
  });
  /** Rows an older version wrote without an event id get one, the first reader's. */
  const nameEvents = db.transaction((rows: OutboxRow[]) => {
    for (const [seq, id] of nameOutboxEvents(rows)) sql.nameEvent.run(id, seq);
    for (const row of rows) row.event_id = sql.eventId.get(row.seq) ?? null;
  });

  const store: OutboxStore = {
    async unpublishedEvents(channel, limit) {
      const rows = sql.unpublished[channel].all(limit);
      const unnamed = rows.filter((row) => row.event_id === null);
      if (unnamed.length > 0) nameEvents.immediate(unnamed);
      return rows.map((row) => ({
        seq: row.seq,
        id: row.event_id!,
        type: row.type,
        accountId: row.account_id,
        agentId: row.agent_id,
        payload: JSON.parse(row.payload) as JsonObject,
        createdAt: row.created_at,
      }));
    },
    async markEventsPublished(channel, seqs) {
      if (seqs.length > 0) markPublished.immediate(channel, seqs);
    },
  };
  return { store, emit };
}
