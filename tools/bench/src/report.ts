import { readFile, writeFile } from "node:fs/promises";
import { cpus, release, totalmem, type } from "node:os";
import { join } from "node:path";
import { ROOT } from "./harness.js";

interface Load {
  cpuMicros: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

interface Latency {
  p50: number;
  p99: number;
  baseP50: number;
  baseP99: number;
  /** Through a bare node:http proxy in front of the provider: what any service in between adds at the least. */
  proxyP50: number;
  proxyP99: number;
}

export interface Report {
  machine: string;
  loadBefore: number[];
  loadAfter: number[];
  /** `cpuCheckMs` before and after the run: how fast the machine was then. */
  cpuCheckBefore: number;
  cpuCheckAfter: number;
  settings: {
    seconds: number;
    rounds: number;
    connections: number;
    streams: number;
    messages: number;
    coldStarts: number;
  };
  throughput: { round: number; name: "get" | "list"; bare: Load; allInOne: Load; split: Load }[];
  messages?: { plain: Latency; stream: Latency };
  splitMessages?: { plain: Latency; stream: Latency };
  streams?: {
    count: number;
    openSeconds: number;
    gatewayBytes: number;
    providerBytes: number;
    /** What each stream beyond the first fifth added to the gateway's resident set. */
    marginalGatewayBytes: number;
  };
  coldStart?: { bundle: number; tsx: number; bare: number };
}

/**
 * Milliseconds a fixed amount of JavaScript work takes: how fast this machine is right now. A virtual machine's
 * share of its host varies; runs whose figures differ can be told apart by this one.
 */
export function cpuCheckMs(): number {
  const started = performance.now();
  let sum = 0;
  for (let i = 0; i < 100_000_000; i++) sum += i % 7;
  if (sum < 0) throw new Error("unreachable");
  return performance.now() - started;
}

export function describeMachine(): string {
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  return `${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 1024 ** 3)} GiB, ${type()} ${release()}, Node ${process.versions.node}`;
}

const SECTION = "## Service overhead";

const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
const mb = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MB`;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const met = (ok: boolean) => (ok ? "yes" : "**no**");

export function renderReport(r: Report): string {
  const rows: string[] = [];
  const throughputRow = (
    name: "get" | "list",
    label: string,
    mode: "allInOne" | "split",
    target?: number,
  ) => {
    const runs = r.throughput.filter((t) => t.name === name);
    // Each round's ratio is taken against the baseline measured right before it; the median of the rounds is shown.
    const ratio = median(runs.map((t) => t[mode].requestsPerSecond / t.bare.requestsPerSecond));
    const service = median(runs.map((t) => t[mode].requestsPerSecond));
    const bare = median(runs.map((t) => t.bare.requestsPerSecond));
    const p50 = median(runs.map((t) => t[mode].p50Ms));
    const bareP50 = median(runs.map((t) => t.bare.p50Ms));
    const cpu = median(runs.map((t) => t[mode].cpuMicros));
    const bareCpu = median(runs.map((t) => t.bare.cpuMicros));
    rows.push(
      `| ${label} | ${Math.round(service)} req/s, p50 ${p50} ms, ${Math.round(cpu)} µs CPU/req | ` +
        `${Math.round(bare)} req/s, p50 ${bareP50} ms, ${Math.round(bareCpu)} µs CPU/req | ` +
        `${ratio.toFixed(2)}× req/s (${(bareCpu / cpu).toFixed(2)}× by CPU) | ` +
        `${target === undefined ? "" : `≥ ${target}×`} | ${target === undefined ? "" : met(ratio >= target)} |`,
    );
  };
  if (r.throughput.length > 0) {
    throughputRow("get", "`GET /v1/agents/{id}`, all-in-one", "allInOne", 0.5);
    throughputRow("get", "`GET /v1/agents/{id}`, split (3 processes, h2c)", "split");
    throughputRow("list", "`GET /v1/agents` (20 agents), all-in-one", "allInOne");
    throughputRow("list", "`GET /v1/agents` (20 agents), split", "split");
  }

  const latencyRow = (label: string, l: Latency, target?: number) => {
    const added = l.p50 - l.baseP50;
    rows.push(
      `| ${label} | p50 ${ms(l.p50)}, p99 ${ms(l.p99)} | p50 ${ms(l.baseP50)}, p99 ${ms(l.baseP99)} | ` +
        `+${ms(added)} p50, +${ms(l.p99 - l.baseP99)} p99 | ${target === undefined ? "" : `≤ +${target} ms p50`} | ` +
        `${target === undefined ? "" : met(added <= target)} |`,
    );
  };
  const proxyRow = (label: string, l: Latency) => {
    rows.push(
      `| ${label} | p50 ${ms(l.proxyP50)}, p99 ${ms(l.proxyP99)} | p50 ${ms(l.baseP50)}, p99 ${ms(l.baseP99)} | ` +
        `+${ms(l.proxyP50 - l.baseP50)} p50, +${ms(l.proxyP99 - l.baseP99)} p99 |  |  |`,
    );
  };
  if (r.messages && r.splitMessages) {
    latencyRow("Message round trip, all-in-one", r.messages.plain, 2);
    latencyRow("Time to first streamed text, all-in-one", r.messages.stream, 2);
    proxyRow(
      "Message round trip through a bare `node:http` proxy (the floor of any service in between)",
      r.messages.plain,
    );
    proxyRow("Time to first streamed text through the bare proxy", r.messages.stream);
    latencyRow("Message round trip, split", r.splitMessages.plain);
    latencyRow("Time to first streamed text, split", r.splitMessages.stream);
  }

  const s = r.streams;
  if (s)
    rows.push(
      `| ${s.count} idle streams held open, all-in-one | +${mb(s.gatewayBytes)} (${(s.gatewayBytes / s.count / 1024).toFixed(1)} KB each) | ` +
        `provider holding the same: +${mb(s.providerBytes)} (${(s.providerBytes / s.count / 1024).toFixed(1)} KB each) | ` +
        `${(s.gatewayBytes / Math.max(1, s.providerBytes)).toFixed(1)}× | ≤ 250 MB | ${met(s.gatewayBytes <= 250 * 1024 ** 2)} |`,
      `| Each stream beyond the first fifth, all-in-one | +${(s.marginalGatewayBytes / 1024).toFixed(1)} KB | | | | |`,
    );
  const cold = r.coldStart;
  if (cold)
    rows.push(
      `| Cold start: process start to first \`GET /v1/agents/{id}\` 200, bundle | ${ms(cold.bundle)} | ` +
        `bare server: ${ms(cold.bare)} | +${ms(cold.bundle - cold.bare)} | < 1500 ms | ` +
        `${met(cold.bundle < 1500)} |`,
    );
  if (cold)
    rows.push(
      `| Cold start from TypeScript sources (tsx) | ${ms(cold.tsx)} | bare server: ${ms(cold.bare)} | ` +
        `+${ms(cold.tsx - cold.bare)} | | |`,
    );

  const st = r.settings;
  return [
    SECTION,
    "",
    "What the services cost on top of the physical limit of the machine, each figure against a baseline measured in",
    "the same run: a bare `node:http` server answering the same JSON bytes from memory for the reads, the",
    "zero-latency fake provider called directly with the very request the service sent it for messages. Load comes",
    "from other processes on loopback (autocannon for throughput; for latency, one request at a time, alternating",
    "in a rotating order between the service, its baseline and a bare proxy in front of the provider, after 100",
    "messages that fill the conversation's history to its 200 turns). The services run from their bundles",
    "(`pnpm build`) with JSON access logs at `info` written to a file",
    "and metrics on (`METRICS_PORT`), as in production; tracing is off.",
    "",
    `- Machine: ${r.machine}; load average before ${r.loadBefore.map((l) => l.toFixed(2)).join(" ")}, after ${r.loadAfter
      .map((l) => l.toFixed(2))
      .join(
        " ",
      )}; CPU check (a fixed loop, lower is faster) ${r.cpuCheckBefore.toFixed(0)} ms before, ${r.cpuCheckAfter.toFixed(0)} ms after`,
    `- Settings: ${st.connections} connections × ${st.seconds} s per throughput run (after 2 s of warm-up), ${st.rounds} rounds ` +
      `alternating baseline and service; ${st.messages} messages to each side per latency series; ${st.streams} streams; ` +
      `median of ${st.coldStarts} cold starts`,
    "- Reproduce: `pnpm install && pnpm bench` (options: `--seconds`, `--rounds`, `--connections`, `--streams`, " +
      "`--messages`, `--only`, `--cold-starts`, `--no-write`; `BENCH_KEEP=1` keeps the run's logs)",
    "",
    "| Measure | Agentry | Baseline | Ratio / added | Target | Met |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

/** Replaces this benchmark's section of docs/benchmarks.md, or appends it; other sections are left alone. */
export async function writeSection(section: string): Promise<void> {
  const file = join(ROOT, "docs", "benchmarks.md");
  const current = await readFile(file, "utf8").catch(() => "# Benchmarks\n");
  const start = current.indexOf(`${SECTION}\n`);
  let next: string;
  if (start < 0) {
    next = `${current.trimEnd()}\n\n${section}\n`;
  } else {
    const after = current.indexOf("\n## ", start + 1);
    next = `${current.slice(0, start)}${section}\n${after < 0 ? "" : current.slice(after)}`;
  }
  await writeFile(file, next);
}
