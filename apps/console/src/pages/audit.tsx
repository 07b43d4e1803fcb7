import type { Member } from "@agentry/sdk";
import { Fragment } from "preact";
import { useEffect, useId, useState } from "preact/hooks";
import { api, withQuery } from "../api";
import { ErrorMessage, Field, formatTime, TableScroll, useAction } from "../widgets/common";

/** One change on the record, as `GET /v1/audit-events` answers it. */
export interface AuditEvent {
  id: string;
  at: string;
  actor: { type: "member" | "key" | "cli"; id: string | null };
  action: string;
  target: { type: string; id: string };
  ip: string | null;
  requestId: string | null;
  changes: Record<string, { from?: unknown; to?: unknown }> | null;
}

/** The list's filters as the form holds them: `since` and `until` as a `datetime-local` input writes them. */
export interface AuditFilters {
  actorType: "" | "member" | "key" | "cli";
  actorId: string;
  action: string;
  targetType: string;
  targetId: string;
  since: string;
  until: string;
}

export const NO_FILTERS: AuditFilters = {
  actorType: "",
  actorId: "",
  action: "",
  targetType: "",
  targetId: "",
  since: "",
  until: "",
};

/** Where a page starts: nowhere (the newest), below an event (older ones) or above it (newer ones). */
export type Cursor = { before: string } | { after: string } | null;

const PAGE = 20;

/** A local date and time from the form as the API takes it (RFC 3339 in UTC); blank or unreadable is left out. */
function instant(local: string): string | undefined {
  if (local.trim() === "") return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The filters as query parameters of both the list and the export: blank ones left out, text trimmed. */
export function filterQuery(filters: AuditFilters): Record<string, string | undefined> {
  const text = (value: string) => value.trim() || undefined;
  return {
    actorType: filters.actorType || undefined,
    actorId: text(filters.actorId),
    action: text(filters.action),
    targetType: text(filters.targetType),
    targetId: text(filters.targetId),
    since: instant(filters.since),
    until: instant(filters.until),
  };
}

/** The query of one page of the list, newest first. */
export function pageQuery(
  filters: AuditFilters,
  cursor: Cursor,
): Record<string, string | number | undefined> {
  return { ...filterQuery(filters), order: "desc", limit: PAGE, ...(cursor ?? {}) };
}

/** The address of the NDJSON export of every event the filters match (the browser sends the session cookie). */
export function exportUrl(filters: AuditFilters): string {
  return withQuery("/v1/audit-events/export", filterQuery(filters));
}

/**
 * The cursors of the pages beside the one shown, newest first: older events lie below its last event, newer ones
 * above its first. A page reached from newer ones has older ones after it, and one reached from older ones has
 * newer ones before it, whatever `hasMore` (which speaks of the direction just paged) says.
 */
export function neighbours(
  cursor: Cursor,
  events: readonly AuditEvent[],
  hasMore: boolean,
): { newer: Cursor; older: Cursor } {
  const first = events[0]?.id;
  const last = events.at(-1)?.id;
  if (cursor === null) return { newer: null, older: hasMore && last ? { before: last } : null };
  if ("before" in cursor) {
    // An empty page still leads back the way it came.
    return { newer: { after: first ?? cursor.before }, older: hasMore && last ? { before: last } : null };
  }
  return { newer: hasMore && first ? { after: first } : null, older: { before: last ?? cursor.after } };
}

/** A value of a change as JSON; a field that was not set on one side says so. */
export function changeValue(value: unknown): string {
  return value === undefined ? "(not set)" : JSON.stringify(value);
}

/** A change's fields in order, each with its value before and after. */
export function changeRows(changes: AuditEvent["changes"]): { field: string; from: string; to: string }[] {
  return Object.entries(changes ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([field, change]) => ({ field, from: changeValue(change.from), to: changeValue(change.to) }));
}

/** Who acted, in words: a member by email where the console knows it. */
export function actorWords(actor: AuditEvent["actor"], emails: ReadonlyMap<string, string>): string {
  if (actor.type === "cli") return "the admin CLI";
  if (actor.id === null) return actor.type;
  return actor.type === "member" ? (emails.get(actor.id) ?? `member ${actor.id}`) : `key ${actor.id}`;
}

/** Audit log: every change to the account, newest first, with filters, pages, each change's fields and an export. */
export function AuditPage() {
  const id = useId();
  const [form, setForm] = useState<AuditFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const [cursor, setCursor] = useState<Cursor>(null);
  const [events, setEvents] = useState<AuditEvent[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [emails, setEmails] = useState<ReadonlyMap<string, string>>(new Map());
  const load = useAction(async () => {
    const { data, pagination } = await api<AuditEvent[]>("GET", "/v1/audit-events", {
      query: pageQuery(filters, cursor),
    });
    setEvents(data);
    setHasMore(pagination?.hasMore ?? false);
    setOpen(new Set());
  });
  useEffect(() => {
    void load.run();
  }, [filters, cursor]);
  useEffect(() => {
    // Names members by email where the role may read them; otherwise the ids stand.
    api<Member[]>("GET", "/v1/members", { query: { limit: 100 } }).then(
      ({ data }) => setEmails(new Map(data.flatMap((m) => (m.email ? [[m.id, m.email] as const] : [])))),
      () => undefined,
    );
  }, []);
  const { newer, older } = neighbours(cursor, events ?? [], hasMore);
  const set = (field: keyof AuditFilters) => (event: Event) =>
    setForm({ ...form, [field]: (event.currentTarget as HTMLInputElement).value });
  const toggle = (eventId: string) => {
    const next = new Set(open);
    if (!next.delete(eventId)) next.add(eventId);
    setOpen(next);
  };

  return (
    <>
      <p class="muted">
        Every change to this account, through the API, the console or the admin CLI: who made it, from where,
        and what changed.
      </p>
      <form
        class="card audit-filters"
        aria-label="Filter the audit log"
        onSubmit={(event) => {
          event.preventDefault();
          setCursor(null);
          setFilters({ ...form });
        }}
      >
        <Field label="Actor" id={`${id}-actor-type`}>
          <select id={`${id}-actor-type`} value={form.actorType} onChange={set("actorType")}>
            <option value="">Anyone</option>
            <option value="member">A member</option>
            <option value="key">An API key</option>
            <option value="cli">The admin CLI</option>
          </select>
        </Field>
        <Field label="Actor id" id={`${id}-actor-id`} hint="usr_… or key_…">
          <input
            id={`${id}-actor-id`}
            aria-describedby={`${id}-actor-id-hint`}
            value={form.actorId}
            onInput={set("actorId")}
          />
        </Field>
        <Field label="Action" id={`${id}-action`} hint="For example agent.update">
          <input
            id={`${id}-action`}
            aria-describedby={`${id}-action-hint`}
            value={form.action}
            onInput={set("action")}
          />
        </Field>
        <Field label="Target type" id={`${id}-target-type`} hint="For example agent">
          <input
            id={`${id}-target-type`}
            aria-describedby={`${id}-target-type-hint`}
            value={form.targetType}
            onInput={set("targetType")}
          />
        </Field>
        <Field label="Target id" id={`${id}-target-id`}>
          <input id={`${id}-target-id`} value={form.targetId} onInput={set("targetId")} />
        </Field>
        <Field label="Since" id={`${id}-since`}>
          <input id={`${id}-since`} type="datetime-local" value={form.since} onInput={set("since")} />
        </Field>
        <Field label="Until" id={`${id}-until`}>
          <input id={`${id}-until`} type="datetime-local" value={form.until} onInput={set("until")} />
        </Field>
        <div class="actions">
          <button type="submit" class="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setForm(NO_FILTERS);
              setFilters(NO_FILTERS);
              setCursor(null);
            }}
          >
            Clear
          </button>
          {/* What the list is refused (a role without audit:read, a bad filter), the export would be too. */}
          {load.error ? null : (
            <a class="button" href={exportUrl(filters)} download="audit-events.ndjson">
              Export NDJSON
            </a>
          )}
        </div>
      </form>
      <ErrorMessage error={load.error} />
      {events === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : events.length === 0 ? (
        <p class="muted">
          {Object.values(filterQuery(filters)).some((value) => value !== undefined)
            ? "No changes on the record match these filters."
            : "No changes on the record yet."}
        </p>
      ) : (
        <TableScroll label="Audit events">
          <table class="audit-events">
            <caption class="visually-hidden">Audit events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">From</th>
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <Fragment key={event.id}>
                  <tr>
                    <td>{formatTime(event.at)}</td>
                    <td>{actorWords(event.actor, emails)}</td>
                    <td class="action">
                      <code>{event.action}</code>
                    </td>
                    <td>
                      {event.target.type} <code>{event.target.id}</code>
                    </td>
                    <td>
                      {event.ip ?? "—"}
                      {event.requestId ? <small class="muted mono"> {event.requestId}</small> : null}
                    </td>
                    <td>
                      {event.changes && Object.keys(event.changes).length > 0 ? (
                        <button
                          type="button"
                          class="link"
                          aria-expanded={open.has(event.id)}
                          aria-controls={`${id}-${event.id}`}
                          onClick={() => toggle(event.id)}
                        >
                          {open.has(event.id) ? "Hide" : "Show"} {Object.keys(event.changes).length} change(s)
                          <span class="visually-hidden"> of {event.action}</span>
                        </button>
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                  {open.has(event.id) ? (
                    <tr id={`${id}-${event.id}`} class="changes">
                      <td colSpan={6}>
                        <table>
                          <caption class="visually-hidden">Changes of {event.action}</caption>
                          <thead>
                            <tr>
                              <th scope="col">Field</th>
                              <th scope="col">Before</th>
                              <th scope="col">After</th>
                            </tr>
                          </thead>
                          <tbody>
                            {changeRows(event.changes).map((row) => (
                              <tr key={row.field}>
                                <th scope="row">
                                  <code>{row.field}</code>
                                </th>
                                <td class="mono">{row.from}</td>
                                <td class="mono">{row.to}</td>
                              </tr>
                            ))}
                          </tbody>
                        </table>
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {newer || older ? (
        <nav class="pages" aria-label="Pages of the audit log">
          <button type="button" disabled={!newer || load.busy} onClick={() => setCursor(newer)}>
            Previous page
          </button>
          <button type="button" disabled={!older || load.busy} onClick={() => setCursor(older)}>
            Next page
          </button>
        </nav>
      ) : null}
    </>
  );
}
