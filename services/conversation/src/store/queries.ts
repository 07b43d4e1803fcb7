import { AppError } from "@agentry/errors";
import type { ListedRunStatus, MessageFilter, PageRequest } from "./types.js";

/*
 * The history reads both stores run, written once: the SQL is the same but for how parameters are written
 * (`?` in SQLite, `$1` in Postgres) and how the table names are qualified.
 */

/** SQL text and its parameters, in order. */
export interface Query {
  text: string;
  values: unknown[];
}

/** How a dialect writes the n-th parameter (1-based). */
export type Placeholder = (n: number) => string;

class Params {
  readonly values: unknown[] = [];
  constructor(private readonly placeholder: Placeholder) {}
  add(value: unknown): string {
    this.values.push(value);
    return this.placeholder(this.values.length);
  }
}

/** Which way rows are read: toward older items, or newer. */
type Direction = "DESC" | "ASC";

/** The direction rows are read in: away from the cursor, or from the end the order starts at. */
function direction(page: PageRequest): Direction {
  if (page.before !== null) return "DESC";
  if (page.after !== null) return "ASC";
  return page.order === "desc" ? "DESC" : "ASC";
}

/**
 * The page from rows read in `direction(page)`, one more than the limit when another page follows: cut to the
 * limit and presented in the order asked.
 */
export function pageOf<R, T>(rows: readonly R[], page: PageRequest, record: (row: R) => T) {
  const items = rows.slice(0, page.limit).map(record);
  const read = direction(page) === "DESC" ? "desc" : "asc";
  if (read !== page.order) items.reverse();
  return { items, hasMore: rows.length > page.limit };
}

/** The 400 of a cursor that is not an item of the collection (unknown, or another agent's or account's). */
export function foreignCursor(page: PageRequest): AppError {
  const field = page.before !== null ? "before" : "after";
  return new AppError("INVALID_REQUEST", `The ${field} cursor is not an item of this list.`, {
    details: [{ field, issue: "is not the id of an item of this list" }],
  });
}

/** The cursor id of a page, if any. */
export function cursorOf(page: PageRequest): string | null {
  return page.before ?? page.after;
}

/** The sequence number of one of an agent's messages, to page from it. */
export function messagePosition(turns: string, placeholder: Placeholder, ids: CursorIds): Query {
  const p = new Params(placeholder);
  return {
    text: `SELECT seq FROM ${turns} WHERE id = ${p.add(ids.id)} AND account_id = ${p.add(ids.accountId)}
      AND agent_id = ${p.add(ids.agentId)}`,
    values: p.values,
  };
}

export interface CursorIds {
  id: string;
  accountId: string;
  agentId: string;
}

/**
 * One page of an agent's messages, `position` being the cursor's sequence number when there is a cursor: their
 * rows, or the columns named.
 */
export function messagesPage(
  turns: string,
  placeholder: Placeholder,
  scope: { accountId: string; agentId: string; filter: MessageFilter },
  page: PageRequest,
  position: unknown,
  columns = "*",
): Query {
  const p = new Params(placeholder);
  const where = [`account_id = ${p.add(scope.accountId)}`, `agent_id = ${p.add(scope.agentId)}`];
  const { conversationId, userId, roomId } = scope.filter;
  if (conversationId !== undefined) where.push(`conversation_id = ${p.add(conversationId)}`);
  if (userId !== undefined) where.push(`user_id = ${p.add(userId)}`);
  if (roomId !== undefined) where.push(`room_id = ${p.add(roomId)}`);
  if (page.before !== null) where.push(`seq < ${p.add(position)}`);
  else if (page.after !== null) where.push(`seq > ${p.add(position)}`);
  const text = `SELECT ${columns} FROM ${turns} WHERE ${where.join(" AND ")}
    ORDER BY seq ${direction(page)} LIMIT ${p.add(page.limit + 1)}`;
  return { text, values: p.values };
}

/** The activity position (latest message time, id) of one of an agent's conversations, to page from it. */
export function conversationPosition(conversations: string, placeholder: Placeholder, ids: CursorIds): Query {
  const p = new Params(placeholder);
  return {
    text: `SELECT updated_at, id FROM ${conversations} WHERE id = ${p.add(ids.id)}
      AND account_id = ${p.add(ids.accountId)} AND agent_id = ${p.add(ids.agentId)}`,
    values: p.values,
  };
}

/** One page of an agent's conversations by latest activity, ties broken by id. */
export function conversationsPage(
  conversations: string,
  placeholder: Placeholder,
  scope: { accountId: string; agentId: string; filter: { userId?: string; roomId?: string } },
  page: PageRequest,
  position: { updatedAt: unknown; id: string } | null,
): Query {
  const p = new Params(placeholder);
  const where = [`account_id = ${p.add(scope.accountId)}`, `agent_id = ${p.add(scope.agentId)}`];
  if (scope.filter.userId !== undefined) where.push(`user_id = ${p.add(scope.filter.userId)}`);
  if (scope.filter.roomId !== undefined) where.push(`room_id = ${p.add(scope.filter.roomId)}`);
  if (position) {
    const compare = page.before !== null ? "<" : ">";
    where.push(`(updated_at, id) ${compare} (${p.add(position.updatedAt)}, ${p.add(position.id)})`);
  }
  const order = direction(page);
  const text = `SELECT * FROM ${conversations} WHERE ${where.join(" AND ")}
    ORDER BY updated_at ${order}, id ${order} LIMIT ${p.add(page.limit + 1)}`;
  return { text, values: p.values };
}

/**
 * One page of an agent's runs that keep a log (streamed and background messages), by id (ids grow with time), the
 * cursor being a run's id. `yes` is how the dialect writes true for the `cancelled` column.
 */
export function runsPage(
  runs: string,
  placeholder: Placeholder,
  scope: { accountId: string; agentId: string; status: ListedRunStatus | null; yes: unknown; no: unknown },
  page: PageRequest,
): Query {
  const p = new Params(placeholder);
  const where = [`account_id = ${p.add(scope.accountId)}`, `agent_id = ${p.add(scope.agentId)}`, "logged"];
  // Cancelled: ended failed by the kill switch, or completed with the text it had when a later message
  // interrupted it.
  if (scope.status === "cancelled") where.push(`cancelled = ${p.add(scope.yes)}`);
  // A paused run is still pending in the store; its approval deadline is what tells it apart.
  else if (scope.status === "requires_action")
    where.push("status = 'pending' AND approval_expires_at IS NOT NULL");
  else if (scope.status === "pending") where.push("status = 'pending' AND approval_expires_at IS NULL");
  else if (scope.status !== null)
    where.push(`status = ${p.add(scope.status)} AND cancelled = ${p.add(scope.no)}`);
  if (page.before !== null) where.push(`id < ${p.add(page.before)}`);
  else if (page.after !== null) where.push(`id > ${p.add(page.after)}`);
  const text = `SELECT * FROM ${runs} WHERE ${where.join(" AND ")}
    ORDER BY id ${direction(page)} LIMIT ${p.add(page.limit + 1)}`;
  return { text, values: p.values };
}

/** Whether a run cursor is one of the agent's runs. */
export function runPosition(runs: string, placeholder: Placeholder, ids: CursorIds): Query {
  const p = new Params(placeholder);
  return {
    text: `SELECT id FROM ${runs} WHERE id = ${p.add(ids.id)} AND account_id = ${p.add(ids.accountId)}
      AND agent_id = ${p.add(ids.agentId)}`,
    values: p.values,
  };
}
