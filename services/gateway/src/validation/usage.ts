import { z } from "zod";
import { conversationPart } from "./history.js";

/*
 * Query values of the usage routes (docs/api/usage.md, "Queries"). Ranges are checked by the conversation
 * service, which knows the bounds of its rollups; these only check that each value is well formed.
 */

export const USAGE_DIMENSIONS = ["agentId", "userId", "model", "apiKeyId"] as const;
export type UsageDimensionName = (typeof USAGE_DIMENSIONS)[number];

const once = { error: "must be given once" };

const instant = (description: string) =>
  z
    .string(once)
    .refine((value) => !Number.isNaN(Date.parse(value)) && /^\d{4}-\d{2}-\d{2}/.test(value), {
      message: "must be an ISO 8601 date or date-time, e.g. 2026-03-01 or 2026-03-01T00:00:00Z",
    })
    .meta({ description, format: "date-time", examples: ["2026-03-01T00:00:00Z"] })
    .optional();

const groupBy = z
  .string(once)
  .transform((value, ctx) => {
    const names = value.split(",").filter((name) => name !== "");
    const unknown = names.filter((name) => !(USAGE_DIMENSIONS as readonly string[]).includes(name));
    if (unknown.length > 0 || names.length === 0) {
      ctx.addIssue({
        code: "custom",
        message: `must be a comma-separated list of ${USAGE_DIMENSIONS.join(", ")}`,
      });
      return z.NEVER;
    }
    if (new Set(names).size !== names.length) {
      ctx.addIssue({ code: "custom", message: "must not name a dimension twice" });
      return z.NEVER;
    }
    return names as UsageDimensionName[];
  })
  .meta({
    description: `What each bucket's groups are: any of ${USAGE_DIMENSIONS.map((name) => `\`${name}\``).join(", ")}, comma-separated. Unset: one group per bucket.`,
    examples: ["agentId,model"],
  })
  .optional();

const common = {
  from: instant(
    "The start of the range, inclusive, rounded down to the granularity. Default: `to` less 7 days.",
  ),
  to: instant(
    "The end of the range, exclusive, rounded up to the granularity; it may lie in the future. Default: now.",
  ),
  granularity: z.enum(["hour", "day"], { error: "must be hour or day" }).default("day").meta({
    description:
      "The width of the buckets, in UTC. A range may cover at most 31 days of hours or 400 days of days.",
  }),
  userId: conversationPart("Only the messages of this user id.", "user-42").optional(),
  groupBy,
};

export const accountUsageQuery = z.strictObject({
  ...common,
  agentId: conversationPart("Only the messages to this agent.", "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1").optional(),
});
export const agentUsageQuery = z.strictObject(common);

export type UsageQuery = z.infer<typeof accountUsageQuery>;
