import { definePlugin, defineTool } from "@agentry/plugin-kit";
import type { Temporal } from "temporal-polyfill";
import { z } from "zod";

type TemporalApi = typeof import("temporal-polyfill").Temporal;
let loading: Promise<TemporalApi> | undefined;

/**
 * The Temporal polyfill, loaded by the first tool call rather than when the service starts (loading it takes
 * about 20 ms, and most processes never run a time tool).
 */
function temporal(): Promise<TemporalApi> {
  loading ??= import("temporal-polyfill").then((module) => module.Temporal);
  return loading;
}

/** Whether the runtime knows the IANA time zone (`Europe/Paris`, `UTC`); names are matched case-insensitively. */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const timeZone = z
  .string()
  .min(1)
  .max(64)
  .refine(isTimeZone, { message: "must be an IANA time zone name, e.g. Europe/Paris or UTC" });

const config = z.object({
  /** The zone the tools use when a call names none. */
  timeZone: timeZone.default("UTC"),
});

export type TimeConfig = z.output<typeof config>;

const UNITS = ["years", "months", "weeks", "days", "hours", "minutes", "seconds"] as const;

const duration = z
  .object(Object.fromEntries(UNITS.map((unit) => [unit, z.number().int().min(-1e6).max(1e6).optional()])))
  .partial()
  .refine((amounts) => Object.values(amounts).some((amount) => amount !== undefined), {
    message: `must give an amount of at least one of ${UNITS.join(", ")}`,
  }) as z.ZodType<Partial<Record<(typeof UNITS)[number], number>>>;

/** A moment as a tool takes it: a date, a date-time in the zone, a date-time with an offset or `Z`, or a zoned one. */
type Moment = { kind: "date"; date: Temporal.PlainDate } | { kind: "zoned"; value: Temporal.ZonedDateTime };

function parseMoment(Temporal: TemporalApi, text: string, zone: string): Moment {
  try {
    if (text.includes("[")) return { kind: "zoned", value: Temporal.ZonedDateTime.from(text) };
    if (!text.includes("T") && !text.includes(" "))
      return { kind: "date", date: Temporal.PlainDate.from(text) };
    const time = text.replace(" ", "T");
    if (/(Z|[+-]\d\d(:?\d\d)?)$/i.test(time.slice(time.indexOf("T")))) {
      return { kind: "zoned", value: Temporal.Instant.from(time).toZonedDateTimeISO(zone) };
    }
    return { kind: "zoned", value: Temporal.PlainDateTime.from(time).toZonedDateTime(zone) };
  } catch {
    throw new Error(
      `${JSON.stringify(text)} is not an ISO 8601 date or date-time (e.g. 2025-03-30, 2025-03-30T14:00, ` +
        "2025-03-30T14:00Z or 2025-03-30T14:00[Europe/Paris])",
    );
  }
}

function describeZoned(value: Temporal.ZonedDateTime) {
  return {
    iso: value.toString({ smallestUnit: "second" }),
    date: value.toPlainDate().toString(),
    time: value.toPlainTime().toString({ smallestUnit: "second" }),
    timeZone: value.timeZoneId,
    offset: value.offset,
    weekday: value.toLocaleString("en-US", { weekday: "long" }),
    epochMilliseconds: value.epochMilliseconds,
  };
}

function describeDate(date: Temporal.PlainDate) {
  return { date: date.toString(), weekday: date.toLocaleString("en-US", { weekday: "long" }) };
}

const zoneInput = timeZone
  .optional()
  .describe("An IANA time zone, e.g. America/New_York; the agent's default when left out");

export const timePlugin = definePlugin<TimeConfig>({
  name: "time",
  version: "1.0.0",
  description:
    "The current date and time in any IANA time zone, and calendar arithmetic: adding or subtracting durations " +
    "and the difference between two dates, daylight saving time included.",
  config,
  secrets: [],
  tools: [
    defineTool({
      name: "now",
      description: "The current date and time in a time zone, with its UTC offset and weekday.",
      input: z.object({ timeZone: zoneInput }),
      timeoutMs: 1_000,
      run: async (input, context) => {
        const zone = input.timeZone ?? context.config.timeZone;
        const Temporal = await temporal();
        const instant = Temporal.Instant.fromEpochMilliseconds(context.host.now().getTime());
        return describeZoned(instant.toZonedDateTimeISO(zone));
      },
    }),
    defineTool({
      name: "add_duration",
      description:
        "Add a duration to a date or date-time (negative amounts subtract), e.g. 2025-01-31 plus 1 month is " +
        "2025-02-28. A date-time without an offset is read in the time zone.",
      input: z.object({
        date: z.string().min(1).max(100).describe("ISO 8601 date or date-time"),
        duration: duration.describe('Amounts per unit, e.g. {"months": 1, "days": -2}'),
        timeZone: zoneInput,
      }),
      timeoutMs: 1_000,
      run: async (input, context) => {
        const Temporal = await temporal();
        const moment = parseMoment(Temporal, input.date, input.timeZone ?? context.config.timeZone);
        const amount = Temporal.Duration.from(input.duration);
        const timeOnly = amount.hours || amount.minutes || amount.seconds;
        if (moment.kind === "date" && !timeOnly) return describeDate(moment.date.add(amount));
        const start =
          moment.kind === "date"
            ? moment.date.toZonedDateTime({ timeZone: input.timeZone ?? context.config.timeZone })
            : moment.value;
        return describeZoned(start.add(amount));
      },
    }),
    defineTool({
      name: "difference",
      description:
        "The time from one date or date-time to another, as an ISO 8601 duration and as a total in one unit " +
        "(negative when `to` is earlier).",
      input: z.object({
        from: z.string().min(1).max(100).describe("ISO 8601 date or date-time"),
        to: z.string().min(1).max(100).describe("ISO 8601 date or date-time"),
        unit: z
          .enum(UNITS)
          .default("days")
          .describe("The largest unit of the duration, and the unit of the total"),
        timeZone: zoneInput,
      }),
      timeoutMs: 1_000,
      run: async (input, context) => {
        const zone = input.timeZone ?? context.config.timeZone;
        const Temporal = await temporal();
        const from = parseMoment(Temporal, input.from, zone);
        const to = parseMoment(Temporal, input.to, zone);
        const zoned = (moment: Moment) =>
          moment.kind === "zoned" ? moment.value : moment.date.toZonedDateTime({ timeZone: zone });
        if (from.kind === "date" && to.kind === "date") {
          const dateUnit = ["hours", "minutes", "seconds"].includes(input.unit) ? "days" : input.unit;
          const between = from.date.until(to.date, { largestUnit: dateUnit as "days" });
          return {
            duration: between.toString(),
            total: zoned(from)
              .until(zoned(to), { largestUnit: input.unit })
              .total({ unit: input.unit, relativeTo: zoned(from) }),
            unit: input.unit,
          };
        }
        const between = zoned(from).until(zoned(to), { largestUnit: input.unit });
        return {
          duration: between.toString(),
          total: between.total({ unit: input.unit, relativeTo: zoned(from) }),
          unit: input.unit,
        };
      },
    }),
  ],
});
