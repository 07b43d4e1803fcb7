import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "./index.js";
import { OutageLog } from "./outage.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ service: "test", destination }) };
}

describe("OutageLog", () => {
  it("writes the start, a summary per period and the end, however many requests fail", () => {
    const { lines, logger } = capture();
    let clock = 1_000;
    const outage = new OutageLog(logger, "postgres", {
      summaryEveryMs: 30_000,
      settleMs: 0,
      now: () => clock,
    });
    outage.recovered();
    expect(lines).toHaveLength(0);

    for (let i = 0; i < 5_000; i++) {
      outage.failed(new Error("connection refused"));
      clock += 10;
    }
    // 50 s of failures: the start, then one summary 30 s in.
    expect(lines.map((line) => line.msg)).toEqual([
      "postgres unavailable: failing requests that need it until it returns",
      "postgres still unavailable",
    ]);
    expect(lines[0]).toMatchObject({
      level: 50,
      dependency: "postgres",
      err: { message: "connection refused" },
    });
    expect(lines[1]).toMatchObject({
      level: 40,
      failures: 3_001,
      failuresSinceLastLine: 3_000,
      downForMs: 30_000,
    });
    expect(outage.down).toBe(true);

    outage.recovered();
    outage.recovered();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({
      level: 30,
      msg: "postgres available again",
      failures: 5_000,
      downForMs: 50_000,
    });
    expect(outage.down).toBe(false);

    outage.failed(new Error("again"));
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatchObject({ level: 50, err: { message: "again" } });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("takes failures mixed with successes for a moment as one outage, ended once they stop", () => {
    vi.useFakeTimers();
    const { lines, logger } = capture();
    const outage = new OutageLog(logger, "redis", { settleMs: 1_000 });
    outage.failed(new Error("ECONNREFUSED"));
    vi.advanceTimersByTime(100);
    outage.recovered();
    vi.advanceTimersByTime(100);
    outage.failed(new Error("ECONNRESET"));
    vi.advanceTimersByTime(100);
    outage.recovered();
    expect(lines.map((line) => line.msg)).toEqual([
      "redis unavailable: failing requests that need it until it returns",
    ]);
    // No failure for a second after the last one: over, without needing another success.
    vi.advanceTimersByTime(1_000);
    expect(lines.map((line) => line.msg)).toEqual([
      "redis unavailable: failing requests that need it until it returns",
      "redis available again",
    ]);
    expect(lines[1]).toMatchObject({ failures: 2 });
  });

  it("does not end an outage on a timer when a failure followed the last success", () => {
    vi.useFakeTimers();
    const { lines, logger } = capture();
    const outage = new OutageLog(logger, "registry", { settleMs: 1_000 });
    outage.failed(new Error("down"));
    outage.recovered();
    outage.failed(new Error("still down"));
    vi.advanceTimersByTime(5_000);
    expect(lines).toHaveLength(1);
    expect(outage.down).toBe(true);
    outage.recovered();
    expect(lines.at(-1)).toMatchObject({ msg: "registry available again" });
  });
});
