import type { PluginHost, ToolContext } from "@agentry/plugin-kit";
import { describe, expect, it } from "vitest";
import { isTimeZone, type TimeConfig, timePlugin } from "../src/index.js";

const tool = (name: string) => timePlugin.tools.find((each) => each.name === name)!;
const context = (timeZone = "UTC", now = new Date("2025-03-30T00:30:00Z")) =>
  ({
    config: timePlugin.config.parse({ timeZone }),
    host: { now: () => now } as PluginHost,
  }) as ToolContext<TimeConfig>;

describe("time zones", () => {
  it("knows IANA names and refuses others", () => {
    expect(isTimeZone("Europe/Paris")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Mars/Olympus_Mons")).toBe(false);
    expect(isTimeZone("")).toBe(false);
    expect(timePlugin.config.safeParse({ timeZone: "Nowhere/Special" }).success).toBe(false);
    expect(timePlugin.config.parse({})).toEqual({ timeZone: "UTC" });
  });
});

describe("now", () => {
  it("tells the host's time in the agent's zone, or in the one asked for", async () => {
    await expect(tool("now").call({}, context("Asia/Tokyo"))).resolves.toMatchObject({
      iso: "2025-03-30T09:30:00+09:00[Asia/Tokyo]",
      date: "2025-03-30",
      time: "09:30:00",
      offset: "+09:00",
      weekday: "Sunday",
      epochMilliseconds: Date.parse("2025-03-30T00:30:00Z"),
    });
    await expect(tool("now").call({ timeZone: "America/New_York" }, context())).resolves.toMatchObject({
      iso: "2025-03-29T20:30:00-04:00[America/New_York]",
      weekday: "Saturday",
    });
  });

  it("refuses a time zone that does not exist", async () => {
    await expect(tool("now").call({ timeZone: "Atlantis/Capital" }, context())).rejects.toThrow(/IANA/);
  });
});

describe("add_duration", () => {
  it("adds calendar units to dates, clamping to the month's end", async () => {
    await expect(
      tool("add_duration").call({ date: "2024-01-31", duration: { months: 1 } }, context()),
    ).resolves.toEqual({ date: "2024-02-29", weekday: "Thursday" });
    await expect(
      tool("add_duration").call({ date: "2025-03-01", duration: { days: -1 } }, context()),
    ).resolves.toEqual({ date: "2025-02-28", weekday: "Friday" });
  });

  it("keeps the wall-clock time across a daylight saving change, and counts exact hours", async () => {
    const paris = context("Europe/Paris");
    await expect(
      tool("add_duration").call({ date: "2025-03-29T12:00", duration: { days: 1 } }, paris),
    ).resolves.toMatchObject({ iso: "2025-03-30T12:00:00+02:00[Europe/Paris]" });
    await expect(
      tool("add_duration").call({ date: "2025-03-29T12:00", duration: { hours: 24 } }, paris),
    ).resolves.toMatchObject({ iso: "2025-03-30T13:00:00+02:00[Europe/Paris]" });
    await expect(
      tool("add_duration").call({ date: "2025-03-29T12:00Z", duration: { minutes: 90 } }, context()),
    ).resolves.toMatchObject({ iso: "2025-03-29T13:30:00+00:00[UTC]" });
  });

  it("needs an amount of some unit", async () => {
    await expect(tool("add_duration").call({ date: "2025-01-01", duration: {} }, context())).rejects.toThrow(
      /duration: must give an amount of at least one of years/,
    );
  });

  it("says what a date must look like", async () => {
    await expect(
      tool("add_duration").call({ date: "next tuesday", duration: { days: 1 } }, context()),
    ).rejects.toThrow(/not an ISO 8601 date/);
  });
});

describe("difference", () => {
  it("counts days between dates, and years and months when asked", async () => {
    await expect(
      tool("difference").call({ from: "2024-01-01", to: "2025-03-01" }, context()),
    ).resolves.toEqual({ duration: "P425D", total: 425, unit: "days" });
    await expect(
      tool("difference").call({ from: "2024-01-15", to: "2025-03-01", unit: "months" }, context()),
    ).resolves.toMatchObject({ duration: "P13M14D", unit: "months" });
    await expect(
      tool("difference").call({ from: "2025-03-01", to: "2024-03-01", unit: "years" }, context()),
    ).resolves.toMatchObject({ duration: "-P1Y", total: -1 });
  });

  it("counts a day of 23 hours where the clocks go forward", async () => {
    await expect(
      tool("difference").call(
        { from: "2025-03-30T00:00", to: "2025-03-31T00:00", unit: "hours", timeZone: "Europe/Paris" },
        context(),
      ),
    ).resolves.toEqual({ duration: "PT23H", total: 23, unit: "hours" });
  });
});
