import { MESSAGE_BOUNDS } from "@agentry/core";
import { z } from "zod";
import type { ComponentRegistry } from "../openapi/convert.js";
import { conversationPart, cursorLimit, cursorOrder, cursors, oneCursor } from "../validation/history.js";
import { notBlankText } from "../validation/text.js";
import { id, nullableTimestamp, timestamp } from "./common.schemas.js";

/* The bodies, query and answers of the schedule routes (docs/api/schedules.md). */

/** How many next fire times a schedule shows (the conversation service's NEXT_FIRES_SHOWN). */
export const NEXT_FIRES_SHOWN = 5;

const cron = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .meta({
    description:
      'A cron expression: 5 fields (minute hour day-of-month month day-of-week, e.g. `"0 9 * * 1-5"`: 09:00 on weekdays), or 6 with seconds first (`"*/30 * * * * *"`). Ranges, lists, steps, names (`MON`, `JAN`) and `L` are accepted. An expression that is not valid is answered 400 naming `cron`.',
    examples: ["0 9 * * 1-5"],
  });

const timezone = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .max(100, "must be at most 100 characters")
  .meta({
    description:
      'The IANA time zone the expression is read in (`"Europe/Berlin"`, `"America/New_York"`, `"UTC"`); daylight saving time is followed. An unknown one is answered 400 naming `timezone`.',
    examples: ["Europe/Berlin"],
  });

const text = notBlankText(MESSAGE_BOUNDS.textMaxLength).meta({
  description: `The message each fire sends to the agent, 1 to ${MESSAGE_BOUNDS.textMaxLength} characters.`,
  examples: ["Post today's summary of open tickets."],
});

const enabled = z.boolean({ error: "must be true or false" });

export const createScheduleBody = z.strictObject(
  {
    cron,
    timezone,
    text,
    userId: conversationPart(
      "The user id each fire's message gives (its conversation).",
      "ops-team",
    ).optional(),
    roomId: conversationPart(
      "The room id each fire's message gives: a connector chat's room id (`telegram:<chat id>`) keeps the conversation with that chat.",
      "telegram:123456",
    ).optional(),
    enabled: enabled.default(true).meta({ description: "Whether it fires; `true` when left out." }),
  },
  { error: "must be a JSON object" },
);

export const updateScheduleBody = z.strictObject(
  {
    cron: cron.optional(),
    timezone: timezone.optional(),
    text: text.optional(),
    userId: conversationPart("A new user id; `null` removes it.", "ops-team").nullable().optional(),
    roomId: conversationPart("A new room id; `null` removes it.", "telegram:123456").nullable().optional(),
    enabled: enabled.optional().meta({
      description: "`false` stops its fires; `true` starts them again from the next fire time after now.",
    }),
  },
  { error: "must be a JSON object" },
);

export const listSchedulesQuery = z
  .strictObject({ limit: cursorLimit, ...cursors("schedule", "sch", "schedule"), order: cursorOrder })
  .superRefine(oneCursor);

const ScheduleFire = z
  .object({
    scheduledAt: timestamp("The fire time it stands for."),
    firedAt: timestamp("When a process of the service ran it."),
    messageId: id(
      "msg",
      "The background message it sent (`GET …/messages/{messageId}`); null when none",
    ).nullable(),
    status: z.enum(["pending", "completed", "failed", "skipped"]).meta({
      description:
        "The message's status (`pending`, `completed`, `failed`), or `skipped` when no message was sent (the agent was inactive).",
    }),
    error: z.object({ code: z.string(), message: z.string() }).nullable().meta({
      description: "Why the message failed, or why none was sent; null otherwise.",
    }),
  })
  .meta({ description: "A schedule's last fire and how its message went." });

export const Schedule = z
  .object({
    id: id("sch", "The schedule's id"),
    agentId: id("agt", "The agent it messages"),
    cron: z.string().meta({ description: "The cron expression.", examples: ["0 9 * * 1-5"] }),
    timezone: z.string().meta({ description: "The IANA time zone.", examples: ["Europe/Berlin"] }),
    text: z.string().meta({ description: "The message each fire sends." }),
    userId: z.string().nullable().meta({ description: "The user id of each fire's message; null for none." }),
    roomId: z.string().nullable().meta({ description: "The room id of each fire's message; null for none." }),
    enabled: z.boolean().meta({ description: "Whether it fires." }),
    nextFireAt: nullableTimestamp("Its next fire time; null while disabled."),
    nextFireTimes: z.array(z.iso.datetime()).meta({
      description: `Its next ${NEXT_FIRES_SHOWN} fire times (UTC, ISO 8601), soonest first; empty while disabled.`,
    }),
    skippedFires: z.number().int().min(0).meta({
      description:
        "Fires not run because every process of the service was down past them by more than an hour (one missed by less runs once at start).",
    }),
    lastFire: ScheduleFire.nullable().meta({ description: "Its last fire; null before the first." }),
    createdAt: timestamp("When it was created."),
    updatedAt: timestamp("When it was last changed."),
  })
  .meta({
    description:
      "A schedule: at each time of its cron expression (in its time zone) the agent is sent `text` as one background message, once across all processes (docs/api/schedules.md).",
  });

export const ScheduleDeleted = z.object({
  id: id("sch", "The deleted schedule's id"),
  deleted: z.literal(true),
});

/** Names the schedule object in the document, so that the SDKs generate one type for it. */
export function registerScheduleSchemas(responses: ComponentRegistry): void {
  responses.add(ScheduleFire, { id: "ScheduleFire" });
  responses.add(Schedule, { id: "Schedule" });
}
