import { AUDIT_ACTOR_TYPES } from "@agentry/core";
import { z } from "zod";
import { cursorList, id, timestamp } from "./common.schemas.js";

/* The audit events of docs/api/audit.md, components of the document declared with their routes. */

export const AuditEvent = z
  .object({
    id: id("aud", "The event's id; ids sort by time"),
    at: timestamp("When the change was made."),
    actor: z
      .object({
        type: z.enum(AUDIT_ACTOR_TYPES).meta({
          description: "`member`: a console session's member; `key`: an API key; `cli`: the admin CLI.",
        }),
        id: z
          .string()
          .nullable()
          .meta({
            description: "The member's or key's id; `null` for the CLI.",
            examples: ["key_01JCZ3S8Q5M2T7V9X0B4D6F8H1"],
          }),
      })
      .meta({ description: "Who made the change." }),
    action: z.string().meta({
      description: "What was done, `<resource>.<verb>`: `agent.create`, `key.revoke`, `secret.set`, …",
      examples: ["agent.update"],
    }),
    target: z
      .object({
        type: z.string().meta({ description: "The kind of resource changed.", examples: ["agent"] }),
        id: z.string().meta({
          description: "The resource changed (an agent's secret: `<agentId>/<NAME>`).",
          examples: ["agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1"],
        }),
      })
      .meta({ description: "What was changed." }),
    ip: z
      .string()
      .nullable()
      .meta({
        description: "The caller's address; `null` when unknown (the CLI).",
        examples: ["203.0.113.7"],
      }),
    requestId: z
      .string()
      .nullable()
      .meta({
        description: "The request's id (`X-Request-Id`); `null` for the CLI.",
        examples: ["req_01JCZ3S8Q5M2T7V9X0B4D6F8H1"],
      }),
    changes: z
      .record(z.string(), z.object({ from: z.unknown(), to: z.unknown() }))
      .nullable()
      .meta({
        description:
          'The fields the change changed, `{field: {from, to}}` (a create: `from` is `null`); `null` when it lists none. A secret value, a key\'s secret or a signing secret never appears: such a field reads `"[redacted]"`.',
        examples: [{ name: { from: "Support bot", to: "Helpdesk" } }],
      }),
  })
  .meta({ description: "One change to the account: who made it, what it changed, when and from where." });

export const AuditEventListResponse = cursorList(AuditEvent);
