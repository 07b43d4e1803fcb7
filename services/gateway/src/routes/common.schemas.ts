import { ERROR_CODES } from "@agentry/errors";
import { z } from "zod";
import { HISTORY_PAGE } from "../validation/history.js";

/*
 * What the response bodies of every resource share (docs/api/errors-and-status-codes.md, "Envelope"): ids, times,
 * the `{success, data}` envelope, pages, field problems, the error body and the service's own answers.
 */

export const EXAMPLE_ULID = "01JCZ3S8Q5M2T7V9X0B4D6F8H1";

export const id = (prefix: string, what: string) =>
  z.string().meta({
    description: `${what}: \`${prefix}_\` and a ULID. Treat it as opaque.`,
    examples: [`${prefix}_${EXAMPLE_ULID}`],
  });

export const timestamp = (description: string) =>
  z.iso.datetime().meta({ description, examples: ["2026-11-20T09:30:00.000Z"] });

export const nullableTimestamp = (description: string) =>
  z.iso
    .datetime()
    .meta({ examples: ["2026-11-20T09:30:00.000Z"] })
    .nullable()
    .meta({ description });

export const success = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

export const Pagination = z
  .object({
    page: z.number().int().min(1).meta({ description: "This page's number." }),
    limit: z.number().int().min(1).meta({ description: "Page size asked for." }),
    total: z.number().int().min(0).meta({ description: "Agents matching the filter, on all pages." }),
    totalPages: z.number().int().min(0),
    hasMore: z.boolean().meta({ description: "Whether a page after this one exists." }),
  })
  .meta({ description: "Where a page of a list is." });

export const CursorPagination = z
  .object({
    limit: z.number().int().min(1).max(HISTORY_PAGE.maxLimit).meta({ description: "Page size asked for." }),
    hasMore: z.boolean().meta({
      description:
        "Whether more items lie beyond this page in the direction of paging: the next page is `before` (for `desc`) or `after` (for `asc`) this page's last item's id.",
    }),
  })
  .meta({ description: "Where a page of a cursor-paged list is." });

export const cursorList = <T extends z.ZodType>(item: T) =>
  z.object({ success: z.literal(true), data: z.array(item), pagination: CursorPagination });

export const FieldIssue = z
  .object({
    field: z.string().meta({
      description: "The field, in dotted and indexed notation; `body` for the body as a whole.",
      examples: ["bio[2]"],
    }),
    issue: z.string().meta({ examples: ["must not be empty"] }),
  })
  .meta({ description: "One problem with one field of the request." });

export const ErrorResponse = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(ERROR_CODES).meta({ description: "What went wrong; each code has one HTTP status." }),
      message: z.string().meta({ description: "What went wrong, for a person." }),
      details: z
        .array(FieldIssue)
        .optional()
        .meta({ description: "Each field problem, on `INVALID_REQUEST` about fields." }),
      budget: z
        .object({
          id: z.string().meta({ examples: [`bdg_${EXAMPLE_ULID}`] }),
          unit: z.enum(["tokens", "usd"]),
          period: z.enum(["day", "month"]),
          limit: z.number().meta({ description: "In the budget's unit: tokens, or US dollars." }),
          spent: z.number().meta({ description: "Spent this period, messages under way included." }),
          resetsAt: z.iso.datetime().meta({ description: "When the budget starts again at zero." }),
        })
        .optional()
        .meta({
          description: "On `BUDGET_EXCEEDED`: the budget that refused the message (docs/api/budgets.md).",
        }),
      requestId: z.string().meta({
        description: "The request's id, as in `X-Request-Id`.",
        examples: [`req_${EXAMPLE_ULID}`],
      }),
    }),
  })
  .meta({ description: "Every error response." });

export const Health = z.object({ status: z.literal("ok") });
export const Readiness = z.object({
  status: z.enum(["ready", "draining"]),
  dependencies: z
    .record(z.string(), z.enum(["up", "down"]))
    .optional()
    .describe(
      "Whether each service and store this gateway calls answers now (`registry`, `conversation`, `webhooks`, `redis`). Reported, not required: while one is down, requests that need it answer 503 AGENT_UNAVAILABLE.",
    ),
});
