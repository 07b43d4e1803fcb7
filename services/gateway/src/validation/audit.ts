import { AUDIT_ACTOR_TYPES } from "@agentry/core";
import { z } from "zod";
import { cursorLimit, cursorOrder, cursors, oneCursor } from "./history.js";

/* The query of the audit log's routes (docs/api/audit.md). */

const once = { error: "must be given once" };

const word = (description: string, example: string, pattern: RegExp, issue: string) =>
  z
    .string(once)
    .max(200, issue)
    .regex(pattern, issue)
    .meta({ description, examples: [example] });

const time = (description: string) =>
  z.iso
    .datetime({ offset: true, error: "must be an ISO-8601 date and time, such as 2026-11-20T09:30:00Z" })
    .meta({ description, examples: ["2026-11-20T09:30:00Z"] });

/** The filters both routes take. */
export const auditFilters = {
  actorType: z
    .enum(AUDIT_ACTOR_TYPES, { error: `must be one of ${AUDIT_ACTOR_TYPES.join(", ")}` })
    .optional()
    .meta({
      description: "Only changes made by this kind of actor: a console `member`, an API `key`, the `cli`.",
    }),
  actorId: word(
    "Only changes made by this member (`usr_…`) or key (`key_…`).",
    "usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
    /^[\w-]{1,64}$/,
    "must be a member's or key's id (usr_… or key_…)",
  ).optional(),
  action: word(
    "Only this action, `<resource>.<verb>` (`agent.update`, `key.revoke`, …).",
    "agent.update",
    /^[a-z_]{1,40}\.[a-z_]{1,40}$/,
    "must be an action such as agent.update: a resource and a verb, in lowercase, joined by a dot",
  ).optional(),
  targetType: word(
    "Only changes to this kind of resource (`agent`, `key`, `member`, `webhook`, …).",
    "agent",
    /^[a-z_]{1,40}$/,
    "must be a kind of resource such as agent, in lowercase",
  ).optional(),
  targetId: z
    .string(once)
    .min(1, "must not be empty")
    .max(300, "must be at most 300 characters")
    .refine((value) => !value.includes("\u0000"), "must not contain U+0000")
    .optional()
    .meta({
      description: "Only changes to this resource (its id).",
      examples: ["agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1"],
    }),
  since: time("Only changes made at or after this time.").optional(),
  until: time("Only changes made before this time.").optional(),
};

function sinceBeforeUntil(
  query: { since?: string | undefined; until?: string | undefined },
  ctx: z.RefinementCtx,
) {
  if (query.since && query.until && Date.parse(query.since) >= Date.parse(query.until)) {
    ctx.addIssue({ code: "custom", path: ["until"], message: "must be later than since" });
  }
}

export const listAuditEventsQuery = z
  .strictObject({
    limit: cursorLimit,
    ...cursors("audit", "aud", "audit event"),
    order: cursorOrder,
    ...auditFilters,
  })
  .superRefine(oneCursor)
  .superRefine(sinceBeforeUntil);

export const exportAuditEventsQuery = z.strictObject(auditFilters).superRefine(sinceBeforeUntil);
