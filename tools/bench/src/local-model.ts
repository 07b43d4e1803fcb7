import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem, type } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ensureModel, sharedModelDir, systemPrompt } from "@agentry/conversation";
import { listen } from "@agentry/gateway";
import { silentLogger } from "@agentry/logging";
import { Tier } from "@agentry/proto";
import { composeServer, loadServerConfig } from "@agentry/server";
import { type ChatHistoryItem, getLlama, LlamaChat } from "node-llama-cpp";

/**
 * Tokens per second of the local model through the whole service (HTTP, auth, registry, prompt building,
 * SSE, storage) against node-llama-cpp called directly, in one process, with the same model file, prompt,
 * settings, threads and context size. Greedy decoding makes both produce the same tokens, so the runs do the
 * same work; rounds alternate which goes first so drift in machine load hits both alike.
 */

const USAGE = `Usage: pnpm --filter @agentry/bench bench:local [--rounds N] [--max-tokens N] [--threads N] [--no-write]`;

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "15" },
    "max-tokens": { type: "string", default: "64" },
    threads: { type: "string", default: "1" },
    "no-write": { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const rounds = Number(args.rounds);
const maxTokens = Number(args["max-tokens"]);
const threads = Number(args.threads);
const contextSize = 2048;
const agentName = "Ada";
const prompt =
  "Write a long story about a lighthouse keeper who finds a map. Describe every place in detail.";

interface Run {
  tokens: number;
  seconds: number;
  /** CPU time of the whole process (all threads) during the run: llama.cpp's, plus the service's own work. */
  cpuMs: number;
  firstTokenMs: number;
  text: string;
}

const tokensPerSecond = (run: Run) => run.tokens / run.seconds;
const cpuMsPerToken = (run: Run) => run.cpuMs / run.tokens;
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main(): Promise<void> {
  const modelPath =
    process.env.LOCAL_MODEL_PATH ??
    (await ensureModel({ dir: sharedModelDir() }, { logger: silentLogger() })).path;

  // Direct: node-llama-cpp as its documentation shows, on its own model and context.
  const llama = await getLlama({ gpu: false, build: "never", skipDownload: true });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ sequences: 1, contextSize, threads });
  const chat = new LlamaChat({ contextSequence: context.getSequence() });
  const history: ChatHistoryItem[] = [
    {
      type: "system",
      text: systemPrompt({ name: agentName, bio: [], personality: {}, knowledge: [], goals: [] }),
    },
    { type: "user", text: prompt },
    { type: "model", response: [] },
  ];
  const direct = async (): Promise<Run> => {
    let tokens = 0;
    let firstTokenMs = 0;
    let streamed = "";
    const cpu = process.cpuUsage();
    const startedAt = performance.now();
    const result = await chat.generateResponse(history, {
      maxTokens,
      temperature: 0,
      // Streaming, as the service does: the text of each token as it comes.
      onTextChunk: (chunk) => {
        streamed += chunk;
      },
      onToken: (generated) => {
        if (tokens === 0) firstTokenMs = performance.now() - startedAt;
        tokens += generated.length;
      },
    });
    const seconds = (performance.now() - startedAt) / 1000;
    return { tokens, seconds, cpuMs: cpuMsSince(cpu), firstTokenMs, text: streamed || result.response };
  };

  // Through the service: the all-in-one gateway on port 0, no provider key, so agents use the local model.
  const dataDir = await mkdtemp(join(tmpdir(), "agentry-bench-local-"));
  const gateway = await composeServer(
    loadServerConfig({
      DATA_DIR: dataDir,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      LOCAL_MODEL_PATH: modelPath,
      LOCAL_THREADS: String(threads),
      LOCAL_CONTEXT_SIZE: String(contextSize),
      LOCAL_GPU: "off",
    }),
    silentLogger(),
  );
  const server = await listen(gateway.app, 0, "127.0.0.1");
  const { account } = await gateway.context.accounts.createAccount({
    name: `bench-${process.pid}`,
    tier: Tier.ENTERPRISE,
    limitOverrides: { messagesPerMinute: 1_000_000, requestsPerMinute: 1_000_000, concurrentMessages: 100 },
  });
  const { secret: key } = await gateway.context.accounts.createApiKey({
    accountId: account!.id,
    name: "bench",
    scopes: [],
  });
  const created = await fetch(`${server.url}/v1/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: agentName, settings: { temperature: 0, maxTokens } }),
  });
  const agentId = ((await created.json()) as { data: { id: string } }).data.id;
  let conversations = 0;
  const service = async (): Promise<Run> => {
    conversations += 1;
    const cpu = process.cpuUsage();
    const startedAt = performance.now();
    const response = await fetch(`${server.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      // A new user each time: every run sends the same prompt, with no history.
      body: JSON.stringify({ text: prompt, userId: `bench-${conversations}`, stream: true }),
    });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    let firstTokenMs = 0;
    let buffer = "";
    let completed: { text: string; usage: { outputTokens: number } } | undefined;
    const decoder = new TextDecoder();
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === "message.delta" && firstTokenMs === 0) firstTokenMs = performance.now() - startedAt;
        if (event === "message.completed" && data) completed = JSON.parse(data) as typeof completed;
        if (event === "error") throw new Error(`stream failed: ${data}`);
      }
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const cpuMs = cpuMsSince(cpu);
    if (!completed) throw new Error("the stream ended without message.completed");
    return { tokens: completed.usage.outputTokens, seconds, cpuMs, firstTokenMs, text: completed.text };
  };

  try {
    const loadBefore = loadavg()[0] ?? 0;
    // Warm-up, not counted: loads the service's model and fills both contexts with the prompt once.
    await direct();
    await service();
    const directRuns: Run[] = [];
    const serviceRuns: Run[] = [];
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        directRuns.push(await direct());
        serviceRuns.push(await service());
      } else {
        serviceRuns.push(await service());
        directRuns.push(await direct());
      }
      const d = directRuns.at(-1)!;
      const s = serviceRuns.at(-1)!;
      process.stdout.write(
        `round ${round + 1}: direct ${tokensPerSecond(d).toFixed(1)} tok/s (${d.tokens} tokens), ` +
          `service ${tokensPerSecond(s).toFixed(1)} tok/s (${s.tokens} tokens)\n`,
      );
    }
    const report = renderReport(
      directRuns,
      serviceRuns,
      modelPath.split("/").at(-1) ?? modelPath,
      loadBefore,
    );
    process.stdout.write(`\n${report}\n`);
    if (!args["no-write"]) {
      await writeSection(report);
      process.stdout.write("written to docs/benchmarks.md\n");
    }
  } finally {
    await server.close(1000);
    await gateway.close();
    await context.dispose();
    await model.dispose();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function renderReport(directRuns: Run[], serviceRuns: Run[], modelFile: string, loadBefore: number): string {
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  const sameOutput = serviceRuns.every((run, i) => run.text === directRuns[i]!.text);
  const directTps = median(directRuns.map(tokensPerSecond));
  const serviceTps = median(serviceRuns.map(tokensPerSecond));
  // The two runs of a round ran back to back, so their ratio is the least disturbed by other load.
  const ratios = serviceRuns.map((run, i) => 1 - tokensPerSecond(run) / tokensPerSecond(directRuns[i]!));
  const directCpu = median(directRuns.map(cpuMsPerToken));
  const serviceCpu = median(serviceRuns.map(cpuMsPerToken));
  const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
  const rows = directRuns.map((d, i) => {
    const s = serviceRuns[i]!;
    const cells = [
      i + 1,
      d.tokens,
      tokensPerSecond(d).toFixed(1),
      cpuMsPerToken(d).toFixed(1),
      Math.round(d.firstTokenMs),
      s.tokens,
      tokensPerSecond(s).toFixed(1),
      cpuMsPerToken(s).toFixed(1),
      Math.round(s.firstTokenMs),
    ];
    return `| ${cells.join(" | ")} |`;
  });
  return [
    "## Local model",
    "",
    "Streaming tokens per second of the local provider through the whole service (the all-in-one gateway in",
    "process on a loopback port: HTTP, API key, registry, prompt, SSE, SQLite, and the benchmark's own HTTP",
    "client) against node-llama-cpp called directly in the same run, with the same model file, prompt, greedy",
    "decoding, threads and context size. A rate is output tokens over the time from sending the request to the",
    "end of the reply, first token included; rounds alternate which side goes first. CPU per token is the whole",
    "process's CPU time during the run, so it counts everything the service adds, and depends far less than",
    "wall time on what else the machine is doing.",
    "",
    `- Machine: ${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 1024 ** 3)} GiB, ${type()}; Node ${process.versions.node}; load average ${loadBefore.toFixed(1)} before the run, ${(loadavg()[0] ?? 0).toFixed(1)} after`,
    `- Model: ${modelFile}, node-llama-cpp 3.22.1 (CPU build), ${threads} thread(s), context ${contextSize} tokens`,
    `- ${directRuns.length} rounds after one warm-up, up to ${maxTokens} tokens each; both sides produced ${sameOutput ? "the same text" : "different texts"}`,
    `- Reproduce: \`pnpm models:pull && pnpm --filter @agentry/bench bench:local --rounds ${directRuns.length} --max-tokens ${maxTokens} --threads ${threads}\``,
    "",
    "| Round | Direct tokens | Direct tok/s | Direct CPU ms/token | Direct first token (ms) | Service tokens | Service tok/s | Service CPU ms/token | Service first token (ms) |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
    "",
    `Tokens per second, median: direct ${directTps.toFixed(1)}, through the service ${serviceTps.toFixed(1)}. ` +
      `Overhead, median of the rounds' 1 - service/direct: ${pct(median(ratios))} ` +
      `(rounds ranged ${pct(Math.min(...ratios))} to ${pct(Math.max(...ratios))}). ` +
      `CPU per token, median: direct ${directCpu.toFixed(1)} ms, service ${serviceCpu.toFixed(1)} ms ` +
      `(${pct(serviceCpu / directCpu - 1)} more). Target: under 5%.`,
  ].join("\n");
}

/** Replaces the "Local model" section of docs/benchmarks.md, or appends it; other sections are left alone. */
async function writeSection(section: string): Promise<void> {
  const file = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "docs", "benchmarks.md");
  const current = await readFile(file, "utf8").catch(() => "# Benchmarks\n");
  const start = current.indexOf("## Local model");
  let next: string;
  if (start < 0) {
    next = `${current.trimEnd()}\n\n${section}\n`;
  } else {
    const after = current.indexOf("\n## ", start + 1);
    next = `${current.slice(0, start)}${section}\n${after < 0 ? "" : current.slice(after)}`;
  }
  await writeFile(file, next);
}

await main();
