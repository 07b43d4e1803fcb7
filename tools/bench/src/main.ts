import { execSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { auth, Bench, log, median, percentile, type Settings, serviceEnv } from "./bench.js";
import {
  BENCH_DIR,
  cpuSecondsOf,
  forkWorker,
  freePort,
  ROOT,
  type Running,
  rssOf,
  type Seed,
  seed,
  sleep,
  start,
  waitUntilOk,
} from "./harness.js";
import {
  cpuCheckMs,
  describeMachine,
  type Report,
  renderAccountSize,
  renderFloor,
  renderMemoryRecall,
  renderReport,
  renderRunLease,
  renderScaledOut,
  renderTargets,
  writeSection,
} from "./report.js";
import { accountSize } from "./scenarios/account-size.js";
import { creates } from "./scenarios/creates.js";
import { floor } from "./scenarios/floor.js";
import { historyPage } from "./scenarios/history.js";
import { idempotency } from "./scenarios/idempotency.js";
import { memoryRecall } from "./scenarios/memory-recall.js";
import { usageRecording } from "./scenarios/recording.js";
import { runLease } from "./scenarios/run-lease.js";
import { scaledOut } from "./scenarios/scaled-out.js";
import { streamLog } from "./scenarios/stream-log.js";
import { toolTurns } from "./scenarios/tools.js";
import { usageQueries } from "./scenarios/usage.js";
import { webhooks } from "./scenarios/webhooks.js";
import type { Target } from "./workers/latency.js";

/**
 * `pnpm bench`: the services against baselines measured in the same run, load from other processes, loopback
 * only. See docs/benchmarks.md for what each figure means.
 */
const SCENARIOS = [
  "floor",
  "reads",
  "messages",
  "streams",
  "history",
  "usage",
  "recording",
  "tools",
  "webhooks",
  "idempotency",
  "creates",
  "account-size",
  "scaled-out",
  "stream-log",
  "run-lease",
  "memory-recall",
  "cold-start",
];
/** The scenarios that measure issue 32's targets (report.ts, renderTargets). */
const TARGET_SCENARIOS = ["reads", "messages", "streams", "history", "usage", "webhooks"];
const USAGE =
  "Usage: pnpm bench [--seconds N] [--rounds N] [--connections N] [--streams N] [--messages N] [--cold-starts N]\n" +
  "                  [--history-messages N] [--usage-sends N] [--usage-queries N] [--recordings N]\n" +
  "                  [--webhook-events N] [--only " +
  SCENARIOS.join(",") +
  "] [--no-write]\n" +
  "                  (BENCH_KEEP=1 keeps the run's logs; BENCH_PROFILE=<dir> writes each service's CPU profile there;\n" +
  "                  TEST_DATABASE_URL adds the usage query on Postgres)";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    rounds: { type: "string", default: "2" },
    connections: { type: "string", default: "10" },
    streams: { type: "string", default: "5000" },
    messages: { type: "string", default: "300" },
    "cold-starts": { type: "string", default: "5" },
    "history-messages": { type: "string", default: "100000" },
    "usage-sends": { type: "string", default: "1000000" },
    "usage-queries": { type: "string", default: "30" },
    recordings: { type: "string", default: "2000" },
    "webhook-events": { type: "string", default: "2000" },
    only: { type: "string", default: SCENARIOS.join(",") },
    "no-write": { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const only = new Set(args.only.split(","));
const unknown = [...only].filter((name) => !SCENARIOS.includes(name));
if (unknown.length > 0) {
  process.stderr.write(`unknown scenario ${unknown.join(", ")}\n${USAGE}\n`);
  process.exit(2);
}
const settings: Settings = {
  seconds: Number(args.seconds),
  rounds: Number(args.rounds),
  connections: Number(args.connections),
  streams: Number(args.streams),
  messages: Number(args.messages),
  coldStarts: Number(args["cold-starts"]),
  historyMessages: Number(args["history-messages"]),
  usageSends: Number(args["usage-sends"]),
  usageQueries: Number(args["usage-queries"]),
  recordings: Number(args.recordings),
  webhookEvents: Number(args["webhook-events"]),
};

/** Messages sent before the measured ones fill the conversation's history to its limit of 200 turns. */
const HISTORY_FILL_MESSAGES = 100;

/**
 * What the gateway's message round trip adds to calling the provider directly with the very request the service
 * sent it (the conversation's full history included), and what a bare proxy in front of the provider adds: the
 * three alternate request by request.
 */
async function messageOverhead(
  bench: Bench,
  gatewayUrl: string,
  tenant: Seed,
  providerUrl: string,
  proxyUrl: string,
  serving: Record<string, Running>,
) {
  const path = `${gatewayUrl}/v1/agents/${tenant.agentId}/messages`;
  const lastRequest = async () => (await fetch(`${providerUrl}/last-request`)).text();
  const providerPath = "/v1/chat/completions";
  const providerHeaders = { authorization: "Bearer sk-bench" };
  const warmup = Math.ceil(settings.messages / 10);
  const summary = ([via, base, proxied]: number[][]) => ({
    p50: median(via!),
    p99: percentile(via!, 99),
    baseP50: median(base!),
    baseP99: percentile(base!, 99),
    proxyP50: median(proxied!),
    proxyP99: percentile(proxied!, 99),
  });
  // The service, the provider directly and the provider through a bare proxy, in turn; the last two are sent the
  // request the service sent.
  const series = async (viaService: Target, marker?: string) => {
    const sent = await lastRequest();
    const direct = (base: string): Target => ({
      url: `${base}${providerPath}`,
      headers: providerHeaders,
      body: sent,
      mode: viaService.mode,
      ...(marker ? { marker } : {}),
    });
    return summary(
      await bench.latency([viaService, direct(providerUrl), direct(proxyUrl)], warmup, settings.messages),
    );
  };

  const plain: Target = {
    url: path,
    headers: auth(tenant),
    body: JSON.stringify({ text: "Hello there" }),
    mode: "json",
  };
  await bench.latency([plain], 0, HISTORY_FILL_MESSAGES);
  // The CPU time each serving process spent per message of the plain series (the direct calls cost them nothing).
  const cpu = () => Promise.all(Object.values(serving).map((running) => cpuSecondsOf(running.pid)));
  const cpuBefore = await cpu();
  const plainSummary = await series(plain);
  const cpuAfter = await cpu();
  const perMessage = Object.keys(serving).map(
    (name, i) =>
      `${name} ${Math.round(((cpuAfter[i]! - cpuBefore[i]!) * 1e6) / (warmup + settings.messages))} µs`,
  );
  log(`CPU per JSON message: ${perMessage.join(", ")}`);

  const streamed: Target = {
    url: path,
    headers: auth(tenant),
    body: JSON.stringify({ text: "Hello there", stream: true }),
    mode: "first-text",
    marker: "event: message.delta",
  };
  await bench.latency([streamed], 0, 1);
  return { plain: plainSummary, stream: await series(streamed, '"content":"Hello') };
}

/** Opens `count` streams through the gateway, reports, and holds them until `release` is called. */
async function holdStreams(gatewayUrl: string, tenant: Seed, count: number) {
  const worker = forkWorker("streams", {
    url: `${gatewayUrl}/v1/agents/${tenant.holdAgentId}/messages`,
    headers: auth(tenant),
    // A conversation answers one message at a time: each stream is a user of its own, as idle streams are.
    body: JSON.stringify({ text: "Hold on", stream: true, userId: `hold-${randomUUID()}-[<id>]` }),
    marker: "event: message.delta",
    count,
    concurrency: 100,
  });
  const [opened] = (await once(worker, "message")) as [{ open: number; failed: number; seconds: number }];
  if (opened.failed > 0) throw new Error(`${opened.failed} of ${count} streams failed to open`);
  return {
    ...opened,
    async release() {
      worker.send({ type: "close" });
      await once(worker, "exit");
    },
  };
}

/**
 * Memory of `count` idle streams held open through the gateway, against the provider holding the same: the
 * growth of the resident set from before the first stream to all of them open. The first fifth are opened
 * first and measured apart, so the figure also splits into what each further stream adds (the slope) and what
 * a process grows by once, when it first serves load (its young generation, compiled code, pools).
 */
async function idleStreams(gateway: Running, gatewayUrl: string, provider: Running, tenant: Seed) {
  const rss = async () => ({ gateway: await rssOf(gateway.pid), provider: await rssOf(provider.pid) });
  const firstCount = Math.max(1, Math.floor(settings.streams / 5));
  const before = await rss();
  const first = await holdStreams(gatewayUrl, tenant, firstCount);
  await sleep(2000);
  const middle = await rss();
  const rest = await holdStreams(gatewayUrl, tenant, settings.streams - firstCount);
  await sleep(2000);
  const after = await rss();
  await rest.release();
  await first.release();
  const restCount = rest.open;
  return {
    count: first.open + rest.open,
    openSeconds: first.seconds + rest.seconds,
    gatewayBytes: after.gateway - before.gateway,
    providerBytes: after.provider - before.provider,
    marginalGatewayBytes: restCount > 0 ? (after.gateway - middle.gateway) / restCount : Number.NaN,
  };
}

/** Process start to the first successful `GET /v1/agents/{id}` (or the baseline's same path), median of runs. */
async function coldStart(
  command: string,
  commandArgs: (port: number) => string[],
  env: Record<string, string>,
  path: string,
  headers: Record<string, string>,
  runs: number,
  dir: string,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const port = await freePort();
    const started = performance.now();
    const child = start(
      command,
      commandArgs(port),
      { ...env, PORT: String(port) },
      join(dir, "cold-start.log"),
    );
    await waitUntilOk(`http://127.0.0.1:${port}${path}`, child, {
      headers,
      intervalMs: 2,
      timeoutMs: 60_000,
    });
    times.push(performance.now() - started);
    await child.stop();
  }
  return times;
}

/** Bundles a deployable (`apps/server`, `services/registry`, ...) as `pnpm build` does. */
async function bundle(deployable: string): Promise<void> {
  const child = spawn(process.execPath, [join(ROOT, "scripts", "bundle.mjs"), join(ROOT, deployable)], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`bundling ${deployable} failed`);
}

async function main(): Promise<void> {
  const machine = describeMachine();
  const loadBefore = loadavg();
  const cpuCheckBefore = cpuCheckMs();
  log(
    `bench on ${machine}; load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")}; ` +
      `CPU check ${cpuCheckBefore.toFixed(0)} ms`,
  );
  // The floor runs in this process, from the sources: it needs no bundle.
  const bundled = [...only].some((name) => name !== "floor");
  if (bundled) log("bundling the services (scripts/bundle.mjs) ...");
  for (const deployable of bundled
    ? ["apps/server", "services/gateway", "services/registry", "services/conversation", "services/webhooks"]
    : [])
    await bundle(deployable);

  // Each stream held through the all-in-one gateway takes two descriptors there (the caller's and the provider's).
  const fdLimit = Number(execSync("ulimit -n", { shell: "/bin/sh" }).toString().trim());
  if (Number.isFinite(fdLimit) && settings.streams * 2 + 1024 > fdLimit) {
    const fits = Math.max(100, Math.floor((fdLimit - 1024) / 2));
    log(`open-file limit ${fdLimit} holds ${fits} streams, not ${settings.streams}: raise it with ulimit -n`);
    settings.streams = fits;
  }

  const dir = await mkdtemp(join(tmpdir(), "agentry-bench-"));
  const bench = new Bench(dir, settings);
  try {
    const dataDir = join(dir, "data");
    const tenant = await seed(dataDir);
    const provider = await bench.launchScript("provider", "fake-provider.mjs", ["0"]);
    const providerEnv = {
      DEFAULT_MODEL_PROVIDER: "openai",
      OPENAI_BASE_URL: `${provider.url}/v1`,
      OPENAI_API_KEY: "sk-bench",
    };

    const report: Report = {
      machine,
      loadBefore,
      loadAfter: [],
      cpuCheckBefore,
      cpuCheckAfter: 0,
      settings,
      throughput: [],
    };
    if (only.has("floor")) {
      log("the per-request floor, layer by layer ...");
      report.floor = await floor(bench);
    }
    if (["reads", "messages", "streams"].some((name) => only.has(name))) {
      Object.assign(report, await serviceOverhead(bench, dataDir, tenant, provider, providerEnv));
    }
    if (only.has("history")) {
      log("listing a page of a long conversation against reading an agent ...");
      report.history = await historyPage(bench, providerEnv);
    }
    if (only.has("usage")) report.usage = await usageQueries(bench, providerEnv);
    if (only.has("recording")) report.recording = await usageRecording(bench);
    if (only.has("tools")) report.tools = await toolTurns(bench);
    if (only.has("webhooks")) report.webhooks = await webhooks(bench, providerEnv);
    if (only.has("idempotency")) report.idempotency = await idempotency(bench, providerEnv);
    if (only.has("creates")) report.creates = await creates(bench, providerEnv);
    const accounts = only.has("account-size") ? await accountSize(bench, providerEnv) : undefined;
    const scaled = only.has("scaled-out") ? await scaledOut(bench, providerEnv) : undefined;
    if (only.has("stream-log")) report.streamLog = await streamLog(bench, provider.url);
    const leases = only.has("run-lease") ? await runLease(bench, provider.url) : undefined;
    const recall = only.has("memory-recall") ? await memoryRecall(bench) : undefined;
    await bench.stop();
    if (only.has("cold-start")) report.coldStart = await coldStarts(dir, dataDir, providerEnv, tenant);

    report.loadAfter = loadavg();
    report.cpuCheckAfter = cpuCheckMs();
    const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(" ");
    const conditions = `${machine}; load average ${load(report.loadBefore)} before, ${load(report.loadAfter)} after`;
    // The account-size and scaled-out measures have sections of their own, so that running them alone leaves
    // the rest.
    const ownSections = ["floor", "account-size", "scaled-out", "run-lease", "memory-recall"].filter((name) =>
      only.has(name),
    ).length;
    const sections = [
      ...(only.size > ownSections ? [renderReport(report)] : []),
      ...(report.floor ? [renderFloor(report.floor, conditions)] : []),
      ...(accounts ? [renderAccountSize(accounts, conditions, settings)] : []),
      ...(scaled ? [renderScaledOut(scaled, conditions, settings)] : []),
      ...(leases ? [renderRunLease(leases, conditions)] : []),
      ...(recall ? [renderMemoryRecall(recall, conditions)] : []),
    ];
    for (const section of sections) {
      log("");
      log(section);
      if (!args["no-write"]) await writeSection(section);
    }
    // The targets are printed after every run; written only by a run that measured all of them, so that a partial
    // run does not replace figures with "not run".
    const targets = renderTargets(report);
    log("");
    log(targets);
    if (!args["no-write"] && TARGET_SCENARIOS.every((name) => only.has(name))) await writeSection(targets);
    if (!args["no-write"]) log("\nwritten to docs/benchmarks.md");
  } finally {
    await bench.stop();
    // BENCH_KEEP=1 keeps the run's directory: the services' logs and data.
    if (process.env.BENCH_KEEP) log(`kept ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  }
}

/** Reads, messages and idle streams: the all-in-one gateway and the split services against their baselines. */
async function serviceOverhead(
  bench: Bench,
  dataDir: string,
  tenant: Seed,
  provider: { process: Running; url: string },
  providerEnv: Record<string, string>,
): Promise<Pick<Report, "throughput" | "messages" | "splitMessages" | "streams">> {
  const { dir } = bench;
  log("starting the all-in-one gateway, the split services and the bare baseline ...");
  const allInOne = await bench.startGateway(
    "gateway-all-in-one",
    { ...serviceEnv(dataDir), ...providerEnv },
    tenant,
  );
  const registryPort = await freePort();
  const conversationPort = await freePort();
  const registry = bench.launch(
    "registry",
    "node",
    [join(ROOT, "services", "registry", "dist", "main.mjs")],
    {
      ...serviceEnv(dataDir),
      REGISTRY_PORT: String(registryPort),
      SECRETS_KEY: Buffer.alloc(32, 1).toString("base64"),
      METRICS_PORT: String(await freePort()),
    },
  );
  const conversation = bench.launch(
    "conversation",
    "node",
    [join(ROOT, "services", "conversation", "dist", "main.mjs")],
    {
      ...serviceEnv(join(dir, "conversation")),
      ...providerEnv,
      CONVERSATION_PORT: String(conversationPort),
      METRICS_PORT: String(await freePort()),
    },
  );
  const webhooksPort = await freePort();
  const webhooks = bench.launch(
    "webhooks",
    "node",
    [join(ROOT, "services", "webhooks", "dist", "main.mjs")],
    {
      ...serviceEnv(join(dir, "webhooks")),
      WEBHOOKS_PORT: String(webhooksPort),
    },
  );
  const split = await bench.startGateway(
    "gateway-split",
    {
      ...serviceEnv(join(dir, "gateway-split")),
      REGISTRY_URL: `http://127.0.0.1:${registryPort}`,
      CONVERSATION_URL: `http://127.0.0.1:${conversationPort}`,
      WEBHOOKS_URL: `http://127.0.0.1:${webhooksPort}`,
    },
    tenant,
  );

  const paths = { get: `/v1/agents/${tenant.agentId}`, list: "/v1/agents" };
  const bodies: Record<string, string> = {};
  for (const path of Object.values(paths)) {
    bodies[path] = await (await fetch(`${allInOne.url}${path}`, { headers: auth(tenant) })).text();
  }
  await writeFile(join(dir, "bodies.json"), JSON.stringify(bodies));
  const bare = await bench.launchScript("bare", "bare-server.mjs", [join(dir, "bodies.json"), "0"]);
  const proxy = await bench.launchScript("proxy", "bare-proxy.mjs", [provider.url, "0"]);

  const throughput: Report["throughput"] = [];
  for (let round = 1; only.has("reads") && round <= settings.rounds; round++) {
    for (const [name, path] of Object.entries(paths)) {
      log(`round ${round}: GET ${path} on the bare server, all-in-one and split ...`);
      const baseline = await bench.load(`${bare.url}${path}`, {}, [bare.process]);
      const aio = await bench.load(`${allInOne.url}${path}`, auth(tenant), [allInOne.process]);
      const sep = await bench.load(`${split.url}${path}`, auth(tenant), [
        split.process,
        registry,
        conversation,
      ]);
      throughput.push({ round, name: name as "get" | "list", bare: baseline, allInOne: aio, split: sep });
    }
  }

  let messages: Report["messages"];
  let splitMessages: Report["splitMessages"];
  if (only.has("messages")) {
    log("message round trips through the all-in-one gateway and directly ...");
    messages = await messageOverhead(bench, allInOne.url, tenant, provider.url, proxy.url, {
      "all-in-one": allInOne.process,
    });
    log("message round trips through the split services ...");
    splitMessages = await messageOverhead(bench, split.url, tenant, provider.url, proxy.url, {
      gateway: split.process,
      registry,
      conversation,
    });
  }

  let streams: Report["streams"];
  if (only.has("streams")) {
    log(`holding ${settings.streams} idle streams open through the all-in-one gateway ...`);
    streams = await idleStreams(allInOne.process, allInOne.url, provider.process, tenant);
  }

  await bench.stop([
    allInOne.process,
    split.process,
    registry,
    conversation,
    webhooks,
    bare.process,
    proxy.process,
  ]);
  return {
    throughput,
    ...(messages && splitMessages ? { messages, splitMessages } : {}),
    ...(streams ? { streams } : {}),
  };
}

async function coldStarts(
  dir: string,
  dataDir: string,
  providerEnv: Record<string, string>,
  tenant: Seed,
): Promise<NonNullable<Report["coldStart"]>> {
  const path = `/v1/agents/${tenant.agentId}`;
  // The bare server answers the path with a body of about an agent's size.
  const bodies = join(dir, "cold-start-bodies.json");
  await writeFile(
    bodies,
    JSON.stringify({ [path]: JSON.stringify({ success: true, data: "x".repeat(600) }) }),
  );
  log("cold starts ...");
  const gatewayEnv = { ...serviceEnv(dataDir), ...providerEnv, METRICS_PORT: "0" };
  const coldBundle = await coldStart(
    "node",
    () => [join(ROOT, "apps", "server", "dist", "main.mjs")],
    gatewayEnv,
    path,
    auth(tenant),
    settings.coldStarts,
    dir,
  );
  const coldTsx = await coldStart(
    "node",
    () => ["--import", "tsx", join(ROOT, "apps", "server", "src", "main.ts")],
    gatewayEnv,
    path,
    auth(tenant),
    Math.max(1, Math.ceil(settings.coldStarts / 2)),
    dir,
  );
  const coldBare = await coldStart(
    "node",
    (port) => [join(BENCH_DIR, "src", "servers", "bare-server.mjs"), bodies, String(port)],
    {},
    path,
    {},
    settings.coldStarts,
    dir,
  );

  return { bundle: median(coldBundle), tsx: median(coldTsx), bare: median(coldBare) };
}

await main();
