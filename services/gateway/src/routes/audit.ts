import type { ServerResponse } from "node:http";
import {
  auditQueryMessage,
  type PlainAuditEvent,
  type PlainAuditQuery,
  plainAuditEvent,
} from "@agentry/proto";
import { CURSOR_NOTE } from "../openapi/operations.js";
import { exportAuditEventsQuery, listAuditEventsQuery } from "../validation/audit.js";
import { AuditEvent, AuditEventListResponse } from "./audit.schemas.js";
import { component, defineRoute, type RequestContext, type Route } from "./define.js";

/*
 * The audit log (docs/api/audit.md). Each service records the changes it makes in its own store, in the change's
 * transaction: the registry (agents, secrets, keys, members, budgets, accounts), the conversation service
 * (schedules, documents, memories, conversations, erasures, runs cancelled) and the webhooks service (endpoints).
 * A page here is the merge of the three services' pages: ids sort by time across services, so the page is the
 * `limit` ids nearest the cursor among the ones each service answered.
 */

type Page = { items: PlainAuditEvent[]; hasMore: boolean };

/** One page of the account's events from every service, merged. */
async function auditPage(input: RequestContext, query: PlainAuditQuery): Promise<Page> {
  const { gateway, principal, rpc } = input;
  const message = { query: auditQueryMessage(principal.accountId, query) };
  const pages = await Promise.all([
    gateway.accounts.listAuditEvents(message, rpc),
    gateway.conversations.listConversationAuditEvents(message, rpc),
    gateway.webhooks.listWebhookAuditEvents(message, rpc),
  ]);
  return mergeAuditPages(
    pages.map((page) => ({ items: page.events.map(plainAuditEvent), hasMore: page.hasMore })),
    query,
  );
}

/**
 * The page of the query made of the services' pages of it: each holds its own `limit` events nearest the cursor
 * (or the list's start), so the `limit` nearest of them all are the page; more follow when any service had more,
 * or when the union had more than the page takes.
 */
export function mergeAuditPages(pages: readonly Page[], query: PlainAuditQuery): Page {
  // Read away from the cursor: `before` (and a newest-first start) downwards, `after` (and an oldest-first start) up.
  const downwards = query.before !== undefined || (query.after === undefined && !query.ascending);
  const all = pages.flatMap((page) => page.items);
  all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (downwards) all.reverse();
  const items = all.slice(0, query.limit);
  if (downwards === query.ascending) items.reverse();
  return { items, hasMore: all.length > query.limit || pages.some((page) => page.hasMore) };
}

const NDJSON = "application/x-ndjson; charset=utf-8";
const EXPORT_PAGE = 100;

/** Resolves once the response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

const FILTERS_NOTE =
  "Filters: `actorType`, `actorId`, `action`, `targetType`, `targetId`, and the time range `since` (inclusive) to `until` (exclusive).";

export const auditRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/v1/audit-events",
    scope: "audit:read",
    limit: "listPerMinute",
    operationId: "listAuditEvents",
    sdk: { resource: ["auditEvents"], method: "list" },
    tag: "Audit",
    summary: "List audit events",
    description: `Every change made to the account through any route, the console or the admin CLI, newest first unless \`order=asc\`: who made it (a member, a key or the CLI), what it changed, when and from where. ${FILTERS_NOTE} ${CURSOR_NOTE}`,
    query: listAuditEventsQuery,
    pagination: "cursor",
    success: {
      status: 200,
      schema: component("AuditEventListResponse", AuditEventListResponse),
      description: "One page of audit events.",
    },
    errors: ["INVALID_REQUEST"],
    async handler(input) {
      const query = input.query();
      const page = await auditPage(input, {
        limit: query.limit,
        ascending: query.order === "asc",
        ...(query.before ? { before: query.before } : {}),
        ...(query.after ? { after: query.after } : {}),
        ...filtersOf(query),
      });
      input.ctx.body = {
        success: true,
        data: page.items,
        pagination: { limit: query.limit, hasMore: page.hasMore },
      };
    },
  }),
  /**
   * Streams the events as NDJSON, oldest first, a page at a time: the next page is read once the last one has been
   * handed to the socket. Nothing is written before the first page, so a failure to start is an ordinary error.
   */
  defineRoute({
    method: "GET",
    path: "/v1/audit-events/export",
    scope: "audit:read",
    limit: "listPerMinute",
    operationId: "exportAuditEvents",
    sdk: { resource: ["auditEvents"], method: "export" },
    tag: "Audit",
    summary: "Export audit events",
    description: `Every audit event matching the filters, oldest first, as NDJSON (\`application/x-ndjson\`): one \`AuditEvent\` per line, each line ending in \`\\n\`. The response is streamed as it is read, so its size is not limited; no events is \`200\` with an empty body. ${FILTERS_NOTE} A failure after the first line cuts the response short, which HTTP clients report as an incomplete body: retry the export.`,
    query: exportAuditEventsQuery,
    success: {
      status: 200,
      schema: component("AuditEvent", AuditEvent),
      description: "The events, one JSON object per line; an empty body when there are none.",
    },
    errors: ["INVALID_REQUEST"],
    ndjson: true,
    async handler(input) {
      const { ctx, gateway } = input;
      const filters = filtersOf(input.query());
      const next = (after?: string) =>
        auditPage(input, { limit: EXPORT_PAGE, ascending: true, ...(after ? { after } : {}), ...filters });
      let page = await next();
      if (page.items.length === 0) {
        ctx.status = 200;
        ctx.type = NDJSON;
        ctx.body = "";
        return;
      }
      ctx.respond = false;
      ctx.res.writeHead(200, {
        "Content-Type": NDJSON,
        "Cache-Control": "no-store",
        "X-Accel-Buffering": "no",
      });
      try {
        for (;;) {
          const lines = page.items.map((event) => `${JSON.stringify(event)}\n`).join("");
          if (!ctx.res.write(lines)) await drained(ctx.res);
          if (ctx.res.destroyed || !page.hasMore) break;
          page = await next(page.items.at(-1)!.id);
          if (page.items.length === 0) break;
        }
        ctx.res.end();
      } catch (error) {
        if (ctx.res.destroyed) gateway.logger.info("caller left during an audit export");
        else gateway.logger.error({ err: error }, "audit export failed after it started");
        ctx.res.destroy();
      }
    },
  }),
];

function filtersOf(query: {
  actorType?: PlainAuditQuery["actorType"] | undefined;
  actorId?: string | undefined;
  action?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}) {
  return {
    ...(query.actorType ? { actorType: query.actorType } : {}),
    ...(query.actorId ? { actorId: query.actorId } : {}),
    ...(query.action ? { action: query.action } : {}),
    ...(query.targetType ? { targetType: query.targetType } : {}),
    ...(query.targetId ? { targetId: query.targetId } : {}),
    ...(query.since ? { since: new Date(query.since).toISOString() } : {}),
    ...(query.until ? { until: new Date(query.until).toISOString() } : {}),
  };
}
