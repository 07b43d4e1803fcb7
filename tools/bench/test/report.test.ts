import { describe, expect, it } from "vitest";
import { type Report, renderFloor, renderTargets } from "../src/report.js";

const load = (requestsPerSecond: number, cpuMicros: number) => ({
  requestsPerSecond,
  cpuMicros,
  p50Ms: 1,
  p99Ms: 2,
  total: 1000,
  answered: 1000,
  non2xx: 0,
  errors: 0,
});
const latency = (p50: number, baseP50: number) => ({
  p50,
  p99: p50 * 2,
  baseP50,
  baseP99: baseP50 * 2,
  proxyP50: baseP50,
  proxyP99: baseP50,
});

function report(overrides: Partial<Report> = {}): Report {
  return {
    machine: "test machine",
    loadBefore: [1, 2, 3],
    loadAfter: [4, 5, 6],
    cpuCheckBefore: 100,
    cpuCheckAfter: 100,
    settings: {} as Report["settings"],
    throughput: [],
    ...overrides,
  };
}

/** The row of a rendered table whose first cell starts with `target`, as its cells. */
function row(rendered: string, target: string): string[] {
  const line = rendered.split("\n").find((l) => l.startsWith(`| ${target}`));
  if (!line) throw new Error(`no row for ${target} in:\n${rendered}`);
  return line.split(" | ").map((cell) => cell.replace(/^\| | \|$/g, ""));
}

describe("issue 32's targets", () => {
  it("says which were not run, with the scenario that measures them", () => {
    const rendered = renderTargets(report());
    expect(rendered.startsWith("## Issue 32 targets\n")).toBe(true);
    expect(row(rendered, "History page")).toEqual([
      "History page ≤ 3× a read",
      "not run (`--only history`)",
      "",
      "",
    ]);
    expect(row(rendered, "5,000 idle streams")[1]).toBe("not run (`--only streams`)");
  });

  it("judges each target against its baseline from the same run, pass or miss", () => {
    const rendered = renderTargets(
      report({
        throughput: [
          {
            round: 1,
            name: "get",
            bare: load(20_000, 40),
            allInOne: load(6000, 150),
            split: load(2000, 600),
          },
          {
            round: 1,
            name: "list",
            bare: load(20_000, 40),
            allInOne: load(4000, 200),
            split: load(1000, 900),
          },
        ],
        splitMessages: { plain: latency(3, 1), stream: latency(3, 1) },
        history: {
          messages: 1000,
          seedSeconds: 1,
          rounds: [{ get: load(5000, 200), page: load(1000, 700) }],
        },
        usage: [
          {
            database: "Postgres",
            sends: 1000,
            seedSeconds: 1,
            p50: 51,
            p99: 60,
            cpuMs: 40,
            bytes: 1,
            queries: 3,
          },
        ],
        streams: {
          count: 5000,
          openSeconds: 1,
          gatewayBytes: 150 * 1024 ** 2,
          providerBytes: 40 * 1024 ** 2,
          marginalGatewayBytes: 1,
        },
      }),
    );
    // 6000 / 20000 = 0.30 ≥ 0.25.
    expect(row(rendered, "All-in-one")).toEqual([
      "All-in-one `GET /v1/agents/{id}` ≥ 0.25× the bare server (req/s)",
      "6000 req/s (0.30×)",
      "bare `node:http`: 20000 req/s",
      "pass",
    ]);
    // 2000 / 6000 = 0.33 < 0.5.
    expect(row(rendered, "Split `GET")[3]).toBe("**miss**");
    // 200 / 150 = 1.33 ≤ 1.5.
    expect(row(rendered, "`GET /v1/agents` (20)").slice(1)).toEqual([
      "200 µs CPU/req (1.33×)",
      "`GET /v1/agents/{id}`: 150 µs CPU/req",
      "pass",
    ]);
    // +2 ms ≤ +2.5 ms.
    expect(row(rendered, "Split message")[3]).toBe("pass");
    // 700 / 200 = 3.5 > 3.
    expect(row(rendered, "History page")[1]).toBe("700 µs CPU/req (3.50×)");
    expect(row(rendered, "History page")[3]).toBe("**miss**");
    expect(row(rendered, "31-day hourly usage")[3]).toBe("**miss**");
    expect(row(rendered, "5000 idle streams")[3]).toBe("pass");
    expect(row(rendered, "Agent create")[1]).toBe("not run (`--only webhooks`)");
  });
});

describe("the per-request floor", () => {
  it("gives each layer its own cost as the median of the rounds' differences, and its cost over bare Koa", () => {
    const rendered = renderFloor(
      {
        requests: 100,
        rounds: [
          [10, 14, 20, 21, 22, 30, 35, 40],
          [12, 15, 21, 23, 24, 31, 37, 42],
          [11, 16, 30, 22, 23, 32, 36, 41],
        ],
      },
      "test machine",
    );
    expect(row(rendered, "Bare Koa").slice(1)).toEqual(["11.0 µs", "", ""]);
    // Differences by round: 4, 3, 5 → 4; medians 15 − 11.
    expect(row(rendered, "Request id").slice(1)).toEqual(["15.0 µs", "+4.0 µs", "+4.0 µs"]);
    // Differences by round: 6, 6, 14 → 6.
    expect(row(rendered, "Access log").slice(1, 3)).toEqual(["21.0 µs", "+6.0 µs"]);
    // Differences: 1, 2, −8 → 1.
    expect(row(rendered, "Metrics")[2]).toBe("+1.0 µs");
  });
});
