import { z } from "zod";
import { timestamp } from "./common.schemas.js";

/* The usage report (docs/api/usage.md): figures per bucket and group, from rollups recorded with each send. */

const Percentiles = z
  .object({
    p50: z.number().nullable().meta({ description: "The median, in ms; `null` without a completed send." }),
    p95: z
      .number()
      .nullable()
      .meta({ description: "The 95th percentile, in ms; `null` without a completed send." }),
  })
  .meta({ description: "Percentiles from mergeable sketches, with at most 1 % relative error." });

const usageFigures = {
  messages: z.number().int().min(0).meta({ description: "Every send, failed ones included." }),
  errors: z
    .number()
    .int()
    .min(0)
    .meta({ description: "Sends that ended in an error (any code; cancelled ones are not errors)." }),
  inputTokens: z.number().int().min(0).meta({ description: "Prompt tokens." }),
  outputTokens: z.number().int().min(0).meta({ description: "Reply tokens." }),
  totalTokens: z.number().int().min(0).meta({ description: "inputTokens + outputTokens." }),
  costUsd: z
    .number()
    .min(0)
    .meta({
      description:
        'What the tokens cost, in US dollars, at the configured prices of each model (docs/api/budgets.md, "Prices"): exact to the billionth of a dollar.',
      examples: [0.0042],
    }),
  latencyMs: Percentiles.meta({ description: "From receipt to the complete reply, of completed sends." }),
  timeToFirstTokenMs: Percentiles.meta({
    description:
      "From receipt to the reply's first text (a reply not streamed: its arrival), of completed sends.",
  }),
};

const groupKey = (description: string) => z.string().nullable().optional().meta({ description });

export const UsageGroup = z
  .object({
    agentId: groupKey("The group's agent; present when grouping by `agentId`."),
    userId: groupKey(
      "The group's user id; present when grouping by `userId`; `null` for messages without one and for erased users.",
    ),
    model: groupKey("The group's model; present when grouping by `model`."),
    apiKeyId: groupKey("The group's API key; present when grouping by `apiKeyId`."),
    ...usageFigures,
  })
  .meta({ description: "One combination of the grouped dimensions, with its figures." });

export const UsageReport = z
  .object({
    from: timestamp("The start of the range, rounded down to the granularity."),
    to: timestamp("The end of the range, exclusive, rounded up to the granularity."),
    granularity: z.enum(["hour", "day"]).meta({ description: "The width of the buckets, in UTC." }),
    groupBy: z
      .array(z.enum(["agentId", "userId", "model", "apiKeyId"]))
      .optional()
      .meta({ description: "The dimensions asked for; absent without grouping." }),
    buckets: z
      .array(
        z.object({
          start: timestamp("The bucket's start, inclusive."),
          end: timestamp("The bucket's end, exclusive."),
          groups: z.array(UsageGroup).meta({
            description:
              "One group per combination seen in the bucket; without grouping, exactly one (zero-filled when nothing was sent).",
          }),
        }),
      )
      .meta({ description: "Every bucket of the range, oldest first, zero-filled." }),
    totals: z
      .object({
        ...usageFigures,
        groups: z
          .array(UsageGroup)
          .optional()
          .meta({ description: "The range's figures per group; present when grouping." }),
      })
      .meta({ description: "The figures of the whole range." }),
  })
  .meta({
    description:
      "Usage from hourly and daily rollups, recorded with each send: counts are exact, percentiles come from sketches.",
  });
