import { type AuditEvent, type AuditQuery, PAGE_LIMIT } from "@agentry/core";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import { formatTime, renderTable } from "../format.js";
import { findAccount } from "./keys.js";

function parseLimit(value: string | undefined): number {
  if (value === undefined) return PAGE_LIMIT.default;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT.max) {
    throw new UsageError(`--limit must be an integer from 1 to ${PAGE_LIMIT.max}, got '${value}'`);
  }
  return limit;
}

function eventRow(event: AuditEvent): string[] {
  return [
    formatTime(event.at),
    event.actor.id === null ? event.actor.type : `${event.actor.type}:${event.actor.id}`,
    event.action,
    `${event.target.type}:${event.target.id}`,
    event.ip ?? "-",
  ];
}

export const audit: Command = {
  group: "audit",
  name: "",
  synopsis: "--account NAME [--limit N] [--action ACTION] [--actor ID] [--json]",
  summary: "List an account's latest audit events",
  help: `Lists the latest changes made to an account, newest first: agents, secrets, keys, members, budgets and the
account itself (the registry's), and schedules, documents, memories and erasures (the conversation service's).
Webhook endpoints' changes are kept by the webhooks service: read them with GET /v1/audit-events.

Options:
  --account NAME    The account's name (or id)
  --limit N         How many events, 1 to ${PAGE_LIMIT.max} (default ${PAGE_LIMIT.default})
  --action ACTION   Only this action, e.g. agent.update
  --actor ID        Only the changes of this member (usr_…) or key (key_…)
  --json            Print the events as a JSON array`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, {
      account: { type: "string" },
      limit: { type: "string" },
      action: { type: "string" },
      actor: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help) return context.printHelp();
    if (values.account === undefined || values.account.trim() === "")
      throw new UsageError("missing --account NAME");
    const query: AuditQuery = {
      limit: parseLimit(values.limit),
      ascending: false,
      ...(values.action ? { action: values.action } : {}),
      ...(values.actor ? { actorId: values.actor } : {}),
    };
    const store = await context.store();
    const account = await findAccount(store, values.account.trim());
    const conversations = await context.conversations();
    const pages = await Promise.all([
      store.listAuditEvents(account.id, query),
      conversations.listAuditEvents(account.id, query),
    ]);
    // Ids sort by time across services: the newest of both pages are the newest of all.
    const events = pages
      .flatMap((page) => page.items)
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .slice(0, query.limit);
    if (values.json) return context.printJson(events);
    if (events.length === 0) return context.print(`Account ${account.name} has no audit events.`);
    context.print(...renderTable(["AT", "ACTOR", "ACTION", "TARGET", "IP"], events.map(eventRow)));
  },
};
