import { newId } from "@agentry/core";

/**
 * Event ids for outbox rows written without one (before ids existed, or by an older version during a rolling
 * upgrade), each dated by its row's time. Stores write them only where the row still has none, so when two
 * readers name the same row at once the first id stays and both read it back.
 */
export function nameOutboxEvents<S>(rows: readonly { seq: S; created_at: string | Date }[]): [S, string][] {
  return rows.map((row) => [row.seq, newId("event", new Date(row.created_at).getTime())]);
}
