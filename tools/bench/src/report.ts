import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { cpus, release, totalmem, type } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { MEMORIES_RECALLED } from "@agentry/conversation";
import type { Settings } from "./bench.js";
import { ROOT } from "./harness.js";
import type { AccountSizeRow } from "./scenarios/account-size.js";
import type { CreatesResult } from "./scenarios/creates.js";
import { FLOOR_LABELS, FLOOR_LAYERS, type FloorResult } from "./scenarios/floor.js";
import type { HistoryResult } from "./scenarios/history.js";
import type { IdempotencyResult } from "./scenarios/idempotency.js";
import type { MemoryRecallResult } from "./scenarios/memory-recall.js";
import type { RecordingResult } from "./scenarios/recording.js";
import type { RunLeaseResult } from "./scenarios/run-lease.js";
import type { ScaledOutResult } from "./scenarios/scaled-out.js";
import type { StreamLogResult } from "./scenarios/stream-log.js";
import type { ToolTurnResult } from "./scenarios/tools.js";
import type { UsageResult } from "./scenarios/usage.js";
import type { WebhooksResult } from "./scenarios/webhooks.js";

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
  settings: Settings;
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
  history?: HistoryResult;
  usage?: UsageResult[];
  recording?: RecordingResult;
  tools?: ToolTurnResult;
  webhooks?: WebhooksResult;
  idempotency?: IdempotencyResult;
  creates?: CreatesResult;
  streamLog?: StreamLogResult;
  floor?: FloorResult;
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
const signed = (value: number) => `${value < 0 ? "−" : "+"}${ms(Math.abs(value))}`;

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
    throughputRow("get", "`GET /v1/agents/{id}`, all-in-one", "allInOne", 0.25);
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
        `${(s.gatewayBytes / Math.max(1, s.providerBytes)).toFixed(1)}× | ≤ 200 MB | ${met(s.gatewayBytes <= 200 * 1024 ** 2)} |`,
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

  const h = r.history;
  if (h) {
    const get = (key: "get" | "page", pick: (l: Load) => number) =>
      median(h.rounds.map((round) => pick(round[key])));
    const ratio = median(h.rounds.map((round) => round.page.cpuMicros / round.get.cpuMicros));
    const loadCell = (key: "get" | "page") =>
      `${Math.round(get(key, (l) => l.requestsPerSecond))} req/s, p50 ${get(key, (l) => l.p50Ms)} ms, ` +
      `${Math.round(get(key, (l) => l.cpuMicros))} µs CPU/req`;
    rows.push(
      `| \`GET /v1/agents/{id}/messages?conversationId=…&limit=100\` (newest 100 of a conversation of ${h.messages} messages), all-in-one | ` +
        `${loadCell("page")} | \`GET /v1/agents/{id}\`, same gateway: ${loadCell("get")} | ${ratio.toFixed(2)}× CPU/req | ` +
        `≤ 3× CPU/req | ${met(ratio <= 3)} |`,
    );
  }
  for (const u of r.usage ?? []) {
    rows.push(
      `| 31-day hourly \`GET /v1/usage\` (744 buckets) over ${u.sends} recorded sends, all-in-one, ${u.database} | ` +
        `p50 ${ms(u.p50)}, p99 ${ms(u.p99)}, ${ms(u.cpuMs)} CPU/query, ${(u.bytes / 1024).toFixed(0)} KB | | | ` +
        `< 50 ms p50 | ${met(u.p50 < 50)} |`,
    );
  }
  const rec = r.recording;
  if (rec) {
    const added = rec.withUsage.p50 - rec.withoutUsage.p50;
    rows.push(
      `| Storing a message's exchange with its usage rollup (\`saveExchange\`, SQLite, one durable transaction) | ` +
        `p50 ${ms(rec.withUsage.p50)}, p99 ${ms(rec.withUsage.p99)} | the same without the rollup: ` +
        `p50 ${ms(rec.withoutUsage.p50)}, p99 ${ms(rec.withoutUsage.p99)} | ${signed(added)} p50, ` +
        `${signed(rec.withUsage.p99 - rec.withoutUsage.p99)} p99 | ≤ +0.2 ms p50 | ${met(added <= 0.2)} |`,
    );
  }
  const t = r.tools;
  if (t) {
    const added = t.withTool.p50 - t.plain.p50 - t.providerRoundTrip.p50;
    rows.push(
      `| A turn with one local tool call (conversation service in process, fake OpenAI provider, SQLite) | ` +
        `p50 ${ms(t.withTool.p50)}, p99 ${ms(t.withTool.p99)} | a plain turn p50 ${ms(t.plain.p50)} plus a provider ` +
        `round trip p50 ${ms(t.providerRoundTrip.p50)} | ${signed(added)} p50 | ≤ +1 ms p50 | ${met(added <= 1)} |`,
    );
  }
  const w = r.webhooks;
  if (w) {
    const added = w.hooks.p50 - w.none.p50;
    rows.push(
      `| Agent create (\`POST /v1/agents\`) with 5 enabled endpoints subscribed to agent.created, all-in-one | ` +
        `p50 ${ms(w.hooks.p50)}, p99 ${ms(w.hooks.p99)} | no endpoints: p50 ${ms(w.none.p50)}, p99 ${ms(w.none.p99)} | ` +
        `${signed(added)} p50, ${signed(w.hooks.p99 - w.none.p99)} p99 | ≤ +0.5 ms p50 | ${met(added <= 0.5)} |`,
    );
    const t = w.throughput;
    rows.push(
      `| Webhook deliveries to a loopback receiver, webhooks service on its own (${t.events} events × 5 endpoints) | ` +
        `${Math.round(t.deliveries / t.seconds)} deliveries/s, ${Math.round(t.cpuMicros)} µs CPU each | | | | |`,
    );
  }
  const idem = r.idempotency;
  if (idem) {
    const added = idem.with.p50 - idem.without.p50;
    rows.push(
      `| Agent create with a new \`Idempotency-Key\` each time, all-in-one | p50 ${ms(idem.with.p50)}, ` +
        `p99 ${ms(idem.with.p99)} | without the header: p50 ${ms(idem.without.p50)}, p99 ${ms(idem.without.p99)} | ` +
        `${signed(added)} p50, ${signed(idem.with.p99 - idem.without.p99)} p99 | ≤ +0.3 ms p50 | ${met(added <= 0.3)} |`,
    );
  }
  const made = r.creates;
  if (made) {
    const { load } = made;
    const perSecond = Math.round(load.requestsPerSecond);
    rows.push(
      `| Durable agent creates (\`POST /v1/agents\`, ${made.connections} connections), all-in-one, SQLite \`synchronous = FULL\` | ` +
        `${perSecond} creates/s, p50 ${load.p50Ms} ms, ${Math.round(load.cpuMicros)} µs CPU/req | | | ≥ 2000/s | ${met(perSecond >= 2000)} |`,
    );
  }

  const logged = r.streamLog;
  if (logged) {
    const added = logged.firstText.kept.p50 - logged.firstText.unkept.p50;
    const share = logged.idleBytes.kept / Math.max(1, logged.idleBytes.unkept) - 1;
    rows.push(
      `| Time to first streamed text with the stream's events kept, conversation service (${logged.messages} each) | ` +
        `p50 ${ms(logged.firstText.kept.p50)}, p99 ${ms(logged.firstText.kept.p99)} | not kept: p50 ` +
        `${ms(logged.firstText.unkept.p50)}, p99 ${ms(logged.firstText.unkept.p99)} | ${signed(added)} p50 | ` +
        `≤ +0.2 ms p50 | ${met(added <= 0.2)} |`,
      `| ${logged.streams} idle streams with their events kept, conversation service heap | +${mb(logged.idleBytes.kept)} | ` +
        `not kept: +${mb(logged.idleBytes.unkept)} | ${share >= 0 ? "+" : ""}${(share * 100).toFixed(1)} % | ≤ +10 % | ` +
        `${met(share <= 0.1)} |`,
    );
  }

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
    "The measures of the announced features run on gateways of their own, each with its own data, after the ones",
    "above: the history page and the agent read under the same autocannon load, CPU per request compared; the",
    "usage query one at a time over rollups that the store's own recording path (`recordCalls`) filled in large",
    "transactions beforehand, on SQLite and, when `TEST_DATABASE_URL` is set, on a Postgres database of its own;",
    "what usage recording adds as `saveExchange` on the SQLite store with its rollup and without it (a subclass that",
    "leaves it out, in the benchmark only), alternating call by call; a turn with one local tool call against a plain",
    "turn and a provider round trip alone, alternating, in one process (the conversation service over the in-process",
    "transport, the OpenAI client and the fake provider of its tests); agent creates alternating one at a time",
    "between two gateways alike but for the five webhook endpoints of one (their deliveries going on meanwhile),",
    "and between creates with and without an `Idempotency-Key` on one gateway; deliveries per second of a webhooks",
    "service on its own, given events through `PublishEvents` for five endpoints on a loopback receiver. What",
    "keeping a stream's events costs is measured on two conversation services in the benchmark's process, alike but",
    "for the log (`keepStreams: false` on one), called through the in-process transport: the time from a",
    "StreamMessage call to its first text, alternating call by call, and the heap each grows by holding the idle",
    "streams open.",
    "",
    `- Machine: ${r.machine}; load average before ${r.loadBefore.map((l) => l.toFixed(2)).join(" ")}, after ${r.loadAfter
      .map((l) => l.toFixed(2))
      .join(
        " ",
      )}; CPU check (a fixed loop, lower is faster) ${r.cpuCheckBefore.toFixed(0)} ms before, ${r.cpuCheckAfter.toFixed(0)} ms after`,
    `- Settings: ${st.connections} connections × ${st.seconds} s per throughput run (after 2 s of warm-up), ${st.rounds} rounds ` +
      `alternating baseline and service; ${st.messages} messages to each side per latency series; ${st.streams} streams; ` +
      `median of ${st.coldStarts} cold starts`,
    ...(r.history || r.usage || r.recording || r.tools || r.webhooks || r.idempotency
      ? [
          `- Settings of the feature measures: ${r.messages ? "" : `${st.messages} requests to each side per latency series; `}` +
            [
              r.history
                ? `${r.history.messages} messages written in ${r.history.seedSeconds.toFixed(1)} s`
                : "",
              ...(r.usage ?? []).map(
                (u) =>
                  `${u.sends} sends recorded in ${u.seedSeconds.toFixed(0)} s on ${u.database}, ${u.queries} queries timed`,
              ),
              r.recording ? `${r.recording.count} exchanges stored each way` : "",
              r.tools ? `${r.tools.count} turns each way with and without a tool call` : "",
              r.webhooks
                ? `${r.webhooks.creates} creates each way, whose deliveries had all arrived ` +
                  `${r.webhooks.drainedSeconds.toFixed(2)} s after the last; ${r.webhooks.throughput.deliveries} deliveries ` +
                  `in ${r.webhooks.throughput.seconds.toFixed(2)} s for the rate`
                : "",
            ]
              .filter((part) => part !== "")
              .join("; "),
        ]
      : []),
    "- Reproduce: `pnpm install && pnpm bench` (options: `--seconds`, `--rounds`, `--connections`, `--streams`, " +
      "`--messages`, `--only`, `--cold-starts`, `--history-messages`, `--usage-sends`, `--usage-queries`, " +
      "`--recordings`, `--webhook-events`, `--no-write`; `BENCH_KEEP=1` keeps the run's logs; " +
      "`TEST_DATABASE_URL` adds the usage query on Postgres)",
    "",
    "| Measure | Agentry | Baseline | Ratio / added | Target | Met |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

const ACCOUNT_SIZE_SECTION = "## Cost by account size";

/** The account-size measures as a section of their own: each figure against the same one in the smallest account. */
export function renderAccountSize(accounts: AccountSizeRow[], machine: string, settings: Settings): string {
  const rows: string[] = [];
  const [smallest, ...larger] = accounts;
  if (smallest) {
    const measures = [
      ["create", "Agent create (`POST /v1/agents`)"],
      ["get", "Agent read (`GET /v1/agents/{id}`)"],
      ["listFirst", "List, first page of 20"],
      ["listPage500", "List, page 500 of 20"],
    ] as const;
    for (const row of larger) {
      for (const [measure, label] of measures) {
        const ratio = row[measure].p50 / smallest[measure].p50;
        rows.push(
          `| ${label} in an account of ${row.agents.toLocaleString("en")} agents, all-in-one | ` +
            `p50 ${ms(row[measure].p50)}, p99 ${ms(row[measure].p99)} | ${smallest.agents} agents: ` +
            `p50 ${ms(smallest[measure].p50)}, p99 ${ms(smallest[measure].p99)} | ${ratio.toFixed(2)}× p50 | ` +
            `≤ 1.2× | ${met(ratio <= 1.2)} |`,
        );
      }
    }
  }

  const grown = accounts
    .map((a) => `${a.agents.toLocaleString("en")} in ${a.growSeconds.toFixed(1)} s`)
    .join(", ");
  return [
    ACCOUNT_SIZE_SECTION,
    "",
    "What an account's size costs the requests that touch it: agent creates, reads, the first list page and page",
    "500 (`?page=500&limit=20`) in accounts of 100, 10,000 and 100,000 agents, each size on an all-in-one server",
    "(its bundle) with data of its own, the twelve requests alternating one at a time so that every size meets the",
    "same moments of the machine. The accounts are grown beforehand in one transaction straight in the SQLite file",
    "(copies of one agent with ids and times of their own; the store's triggers keep the counts).",
    "",
    `- Machine: ${machine}; accounts grown: ${grown}`,
    `- Settings: ${settings.messages} of each request per account after ${Math.ceil(settings.messages / 10)} of warm-up`,
    "- Reproduce: `pnpm bench --only account-size`",
    "",
    "| Measure | Agentry | Baseline | Ratio / added | Target | Met |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

/** What a background message's lease adds, against the same service without leases, in one process. */
export function renderRunLease(result: RunLeaseResult, machine: string): string {
  const added = result.completed.leased.p50 - result.completed.unleased.p50;
  const acceptedAdded = result.accepted.leased.p50 - result.accepted.unleased.p50;
  const row = (
    name: string,
    figures: RunLeaseResult["accepted"],
    delta: number,
    target: string,
    verdict: string,
  ) =>
    `| ${name} | p50 ${ms(figures.leased.p50)}, p99 ${ms(figures.leased.p99)} | p50 ${ms(figures.unleased.p50)}, ` +
    `p99 ${ms(figures.unleased.p99)} | ${delta >= 0 ? "+" : ""}${delta.toFixed(2)} ms p50 | ${target} | ${verdict} |`;
  return [
    "## Durable background messages",
    "",
    "What a background message's lease (its run taken over by another process when its own dies) costs, on the",
    "conversation service itself, in the benchmark's process: two services alike but for the lease",
    "(`durableRuns: false` on one), each on a SQLite file of its own, called through the in-process transport,",
    "alternating message by message, against the zero-latency fake provider. Timed: the StartMessage call (answered",
    "once the run, its lease and the message it records are committed) and the whole message, to its reply stored and",
    "its run ended (followed with WatchMessage to the terminal event). The renewal of leases (one statement per",
    "process every `RUN_LEASE_RENEW_MS`, for all its runs) and the scan for expired ones are not per message.",
    "",
    `- Machine: ${machine}`,
    `- Settings: ${result.messages} background messages to each side, after a tenth as many of warm-up`,
    "- Reproduce: `pnpm bench --only run-lease`",
    "",
    "| Measure | With the lease | Without | Added | Target | |",
    "| --- | --- | --- | --- | --- | --- |",
    row("Background message, call to answer", result.accepted, acceptedAdded, "", ""),
    row(
      "Background message, call to reply stored",
      result.completed,
      added,
      "≤ +0.5 ms p50",
      added <= 0.5 ? "met" : "not met",
    ),
  ].join("\n");
}

/** Recall of memories per turn on SQLite, and what an extraction costs a turn besides its model call. */
export function renderMemoryRecall(result: MemoryRecallResult, machine: string): string {
  const timing = (t: { p50: number; p99: number }) => `p50 ${ms(t.p50)}, p99 ${ms(t.p99)}`;
  const verdict = (t: { p50: number }) => (t.p50 <= 5 ? "met" : "not met");
  const tokens = Math.round(result.extractionPromptChars / 4);
  return [
    "## Memory recall and extraction",
    "",
    "What memories and documents cost a turn, on the conversation service's SQLite store itself, in the benchmark's process: the",
    `recall of the ${MEMORIES_RECALLED} most relevant of one user's ${result.memories} memories (another user of the same`,
    "agent holds as many) for each of a series of messages, by full text alone (no embeddings provider), and fused",
    `with vectors (${result.dimensions} dimensions, from the fake embeddings server: a sqlite-vec \`vec0\` index`,
    "partitioned by agent and user, its candidates by one bit a dimension ranked by exact cosine distance, then",
    "reciprocal rank fusion with the full-text ranking); the message's embeddings call, to the",
    "fake server on loopback, is timed apart (a hosted provider takes tens of milliseconds instead). Extraction runs",
    "after the reply, off the turn's path: its store work (the known memories recalled, a new one stored with its",
    "vector) is timed, and its model call is sized by its prompt (a token taken as four characters).",
    "",
    `- Machine: ${machine}`,
    `- Settings: ${result.turns} turns (extraction: ${result.extractions}) after 50 of warm-up; seeding took ` +
      `${result.seedSeconds.toFixed(1)} s`,
    "- Reproduce: `pnpm bench --only memory-recall`",
    "",
    "| Measure | Time | Target | |",
    "| --- | --- | --- | --- |",
    `| Recall, full text | ${timing(result.fullText)} | ≤ 5 ms p50 | ${verdict(result.fullText)} |`,
    `| Recall, full text and vectors | ${timing(result.hybrid)} | ≤ 5 ms p50 | ${verdict(result.hybrid)} |`,
    `| The message's embeddings call (fake, loopback) | ${timing(result.embedding)} | | |`,
    `| Extraction, store work per turn | ${timing(result.extractionStore)} | | |`,
    `| Extraction, model call per turn | about ${tokens} input tokens, at most 300 output | | |`,
    `| Documents, full text (${result.chunks} chunks of the agent) | ${timing(result.chunksFullText)} | ≤ 5 ms p50 | ${verdict(result.chunksFullText)} |`,
    `| Documents, full text and vectors (${result.chunks} chunks) | ${timing(result.chunksHybrid)} | ≤ 5 ms p50 | ${verdict(result.chunksHybrid)} |`,
  ].join("\n");
}

/** The scaled-out system under load on two gateways at once, per gateway and in total, with CPU per process. */
export function renderScaledOut(result: ScaledOutResult, machine: string, settings: Settings): string {
  const parts = Object.keys(result.rows[0]?.cpuMicros ?? {});
  const label = {
    get: "`GET /v1/agents/{id}`",
    list: "`GET /v1/agents` (20)",
    create: "`POST /v1/agents`",
    message: "`POST .../messages`",
  };
  const perGateway = (r: ScaledOutResult["rows"][number]) =>
    r.gateways.map((g) => `${Math.round(g.requestsPerSecond)} req/s, p50 ${ms(g.p50Ms)}, p99 ${ms(g.p99Ms)}`);
  return [
    "## Scaled out",
    "",
    'The system as the README\'s "Running in production" runs it, on loopback: a Postgres server and a Redis server',
    "of the run's own (Postgres without fsync: the figures are of the services, not of a disk), the registry, the",
    "conversation service, the webhooks service and two gateways, each its own process from its bundle, with JSON",
    "access logs at `info`. Each request is loaded on both gateways at once, autocannon in one process per gateway;",
    "the CPU time of every process (Postgres with its backends) over the run is divided by the requests answered.",
    "Messages go to the zero-latency fake provider, each from a new user (a new conversation).",
    "",
    `- Machine: ${machine}`,
    `- Settings: ${result.connectionsPerGateway} connections per gateway × ${settings.seconds} s (after 2 s of warm-up)`,
    "- Reproduce: `pnpm bench --only scaled-out`",
    "",
    "| Request | Gateway 1 | Gateway 2 | Total | CPU per request |",
    "| --- | --- | --- | --- | --- |",
    ...result.rows.map((r) => {
      const [one, two] = perGateway(r);
      const cpu = parts.map((part) => `${part} ${Math.round(r.cpuMicros[part] ?? 0)} µs`).join(", ");
      return `| ${label[r.name]} | ${one} | ${two} | ${Math.round(r.totalPerSecond)} req/s | ${cpu} |`;
    }),
  ].join("\n");
}

/**
 * Replaces a section of docs/benchmarks.md (found by its heading, its first line), or appends it, and formats the
 * file as the repository's formatter does (tables aligned), so that what a run wrote passes `biome check`.
 */
export async function writeSection(section: string): Promise<void> {
  const file = join(ROOT, "docs", "benchmarks.md");
  const current = await readFile(file, "utf8").catch(() => "# Benchmarks\n");
  const heading = section.slice(0, section.indexOf("\n"));
  const start = current.indexOf(`${heading}\n`);
  let next: string;
  if (start < 0) {
    next = `${current.trimEnd()}\n\n${section}\n`;
  } else {
    const after = current.indexOf("\n## ", start + 1);
    next = `${current.slice(0, start)}${section}\n${after < 0 ? "" : current.slice(after)}`;
  }
  await writeFile(file, next);
  await promisify(execFile)(join(ROOT, "node_modules", ".bin", "biome"), ["format", "--write", file], {
    cwd: ROOT,
  });
}

/** The per-request floor as a section of its own: each layer's CPU per request against the app before it. */
export function renderFloor(result: FloorResult, machine: string): string {
  const cpuOf = (layers: number) => median(result.rounds.map((round) => round[layers]!));
  const bare = cpuOf(0);
  const names = ["koa", ...FLOOR_LAYERS] as const;
  const rows = names.map((name, layers) => {
    const cpu = cpuOf(layers);
    // Each round's difference, the median of them: the apps of one round ran within a second of each other.
    const added = median(result.rounds.map((round) => round[layers]! - round[layers - 1]!));
    return (
      `| ${FLOOR_LABELS[name]} | ${cpu.toFixed(1)} µs | ${layers === 0 ? "" : signedMicros(added)} | ` +
      `${layers === 0 ? "" : signedMicros(cpu - bare)} |`
    );
  });
  return [
    FLOOR_SECTION,
    "",
    "What the gateway's middleware costs a request, layer by layer, in the benchmark's process: one Koa app per",
    "prefix of the layers, each the gateway's own code (`requestFrame`'s parts in its order, then `requestFrame`",
    "itself; every declared route dispatched as `buildApp` does, through `routesOf`, each route's chain checking the",
    "request's template as `serveRoute` does; the `Authenticator` against a registry that answers at once;",
    "`limitsMiddleware` on the in-memory limiter), answering an agent-sized JSON body from memory. Requests are handed",
    "to each app's Koa handler one after another without a socket (the socket and HTTP parsing cost every app the",
    "same), the apps in a turned order each round; CPU time per request, the median of the rounds. A layer's own cost",
    "is the median of its app's CPU per request less that of the app before it, round by round.",
    "",
    `- Machine: ${machine}`,
    `- Settings: ${result.requests} requests per app and round after 2000 of warm-up, ${result.rounds.length} rounds`,
    "- Reproduce: `pnpm bench --only floor`",
    "",
    "| Layers, each added to those above | CPU per request | Layer's own | Over bare Koa |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

const FLOOR_SECTION = "## The per-request floor";

const signedMicros = (value: number) => `${value < 0 ? "−" : "+"}${Math.abs(value).toFixed(1)} µs`;

/** One of issue 32's targets: what was measured, its baseline from the same run, and whether it is met. */
interface TargetRow {
  target: string;
  measured: string;
  baseline: string;
  met: boolean | undefined;
}

/**
 * Issue 32's targets, each against its baseline from the same run, pass or miss; a target whose scenario did not
 * run says so. Printed at the end of every run and written as a section of its own.
 */
export function renderTargets(r: Report): string {
  const rows: TargetRow[] = [];
  const notRun = (target: string, scenario: string): TargetRow => ({
    target,
    measured: `not run (\`--only ${scenario}\`)`,
    baseline: "",
    met: undefined,
  });
  const runs = (name: "get" | "list") => r.throughput.filter((t) => t.name === name);
  const gets = runs("get");
  const lists = runs("list");
  if (gets.length > 0) {
    const ratio = median(gets.map((t) => t.allInOne.requestsPerSecond / t.bare.requestsPerSecond));
    rows.push({
      target: "All-in-one `GET /v1/agents/{id}` ≥ 0.25× the bare server (req/s)",
      measured: `${Math.round(median(gets.map((t) => t.allInOne.requestsPerSecond)))} req/s (${ratio.toFixed(2)}×)`,
      baseline: `bare \`node:http\`: ${Math.round(median(gets.map((t) => t.bare.requestsPerSecond)))} req/s`,
      met: ratio >= 0.25,
    });
    const split = median(gets.map((t) => t.split.requestsPerSecond / t.allInOne.requestsPerSecond));
    rows.push({
      target: "Split `GET /v1/agents/{id}` ≥ 0.5× all-in-one (req/s)",
      measured: `${Math.round(median(gets.map((t) => t.split.requestsPerSecond)))} req/s (${split.toFixed(2)}×)`,
      baseline: `all-in-one: ${Math.round(median(gets.map((t) => t.allInOne.requestsPerSecond)))} req/s`,
      met: split >= 0.5,
    });
  } else {
    rows.push(notRun("All-in-one `GET /v1/agents/{id}` ≥ 0.25× the bare server", "reads"));
    rows.push(notRun("Split `GET /v1/agents/{id}` ≥ 0.5× all-in-one", "reads"));
  }
  if (lists.length > 0 && gets.length > 0) {
    const list = median(lists.map((t) => t.allInOne.cpuMicros));
    const get = median(gets.map((t) => t.allInOne.cpuMicros));
    rows.push({
      target: "`GET /v1/agents` (20) ≤ 1.5× a read (CPU/req, all-in-one)",
      measured: `${Math.round(list)} µs CPU/req (${(list / get).toFixed(2)}×)`,
      baseline: `\`GET /v1/agents/{id}\`: ${Math.round(get)} µs CPU/req`,
      met: list / get <= 1.5,
    });
  } else {
    rows.push(notRun("`GET /v1/agents` (20) ≤ 1.5× a read", "reads"));
  }
  const sm = r.splitMessages?.plain;
  rows.push(
    sm
      ? {
          target: "Split message round trip ≤ +2.5 ms p50 over the provider",
          measured: `p50 ${ms(sm.p50)} (${signed(sm.p50 - sm.baseP50)})`,
          baseline: `the provider directly: p50 ${ms(sm.baseP50)}`,
          met: sm.p50 - sm.baseP50 <= 2.5,
        }
      : notRun("Split message round trip ≤ +2.5 ms p50 over the provider", "messages"),
  );
  const h = r.history;
  if (h) {
    const ratio = median(h.rounds.map((round) => round.page.cpuMicros / round.get.cpuMicros));
    rows.push({
      target: "History page (newest 100) ≤ 3× a read (CPU/req)",
      measured: `${Math.round(median(h.rounds.map((round) => round.page.cpuMicros)))} µs CPU/req (${ratio.toFixed(2)}×)`,
      baseline: `\`GET /v1/agents/{id}\`, same gateway: ${Math.round(median(h.rounds.map((round) => round.get.cpuMicros)))} µs`,
      met: ratio <= 3,
    });
  } else {
    rows.push(notRun("History page ≤ 3× a read", "history"));
  }
  const w = r.webhooks;
  rows.push(
    w
      ? {
          target: "Agent create with 5 webhook endpoints ≤ +0.5 ms p50",
          measured: `p50 ${ms(w.hooks.p50)} (${signed(w.hooks.p50 - w.none.p50)})`,
          baseline: `no endpoints: p50 ${ms(w.none.p50)}`,
          met: w.hooks.p50 - w.none.p50 <= 0.5,
        }
      : notRun("Agent create with 5 webhook endpoints ≤ +0.5 ms p50", "webhooks"),
  );
  const pg = r.usage?.find((u) => u.database === "Postgres");
  rows.push(
    pg
      ? {
          target: "31-day hourly usage query < 50 ms p50 on Postgres",
          measured: `p50 ${ms(pg.p50)} over ${pg.sends} sends`,
          baseline: "",
          met: pg.p50 < 50,
        }
      : notRun("31-day hourly usage query < 50 ms p50 on Postgres (needs TEST_DATABASE_URL)", "usage"),
  );
  const st = r.streams;
  rows.push(
    st
      ? {
          target: `${st.count} idle streams ≤ 200 MB`,
          measured: `+${mb(st.gatewayBytes)}`,
          baseline: `the provider holding the same: +${mb(st.providerBytes)}`,
          met: st.gatewayBytes <= 200 * 1024 ** 2,
        }
      : notRun("5,000 idle streams ≤ 200 MB", "streams"),
  );
  const verdict = (row: TargetRow) => (row.met === undefined ? "" : row.met ? "pass" : "**miss**");
  return [
    TARGETS_SECTION,
    "",
    "Issue 32's targets, each from the last run of `pnpm bench` that measured it, against its baseline from that",
    "same run (the sections above explain each measure and why a missed one misses).",
    "",
    `- Run: ${r.machine}; load average ${r.loadBefore.map((l) => l.toFixed(2)).join(" ")} before, ` +
      `${r.loadAfter.map((l) => l.toFixed(2)).join(" ")} after`,
    "",
    "| Target | Measured | Baseline, same run | |",
    "| --- | --- | --- | --- |",
    ...rows.map((row) => `| ${row.target} | ${row.measured} | ${row.baseline} | ${verdict(row)} |`),
  ].join("\n");
}

const TARGETS_SECTION = "## Issue 32 targets";
