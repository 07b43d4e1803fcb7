import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem, type } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  createLocalProvider,
  DEFAULT_LOCAL_MAX_TOKENS,
  DEFAULT_LOCAL_REPLY_TIMEOUT_MS,
  ensureModel,
  LOCAL_REPEAT_PENALTY,
  LoopDetector,
  sharedModelDir,
  systemPrompt,
} from "@agentry/conversation";
import { silentLogger } from "@agentry/logging";
import { type ChatHistoryItem, getLlama, LlamaChat } from "node-llama-cpp";

/**
 * The local model on a busy machine, to choose its bounds: how fast the provider generates, with the service's
 * own settings (threads, context, sampling), while other processes keep every core busy; and how often everyday
 * prompts fall into a loop with node-llama-cpp's default repetition penalty and with the provider's.
 */

const USAGE =
  "Usage: pnpm --filter @agentry/bench bench:local-load [--busy N] [--rounds N] [--max-tokens N] [--no-write]";

const { values: args } = parseArgs({
  options: {
    busy: { type: "string", default: "2" },
    rounds: { type: "string", default: "2" },
    "max-tokens": { type: "string", default: "256" },
    "no-write": { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const busy = Number(args.busy);
const rounds = Number(args.rounds);
const maxTokens = Number(args["max-tokens"]);
/** Tokens of each reply in the loop comparison. */
const LOOP_TOKENS = 128;
/** The busy processes stop by themselves after this long, should the benchmark die without ending them. */
const BUSY_LIMIT_MS = 30 * 60_000;
const system = systemPrompt({ name: "Ada", bio: [], personality: {}, knowledge: [], goals: [] });
const PROMPTS = [
  "Hi! Who are you?",
  "List ten fruits.",
  "Explain how a bicycle works in detail.",
  "Write a poem about the sea.",
  "What are the days of the week?",
  "Give me a table of planets and their sizes.",
];

interface Reply {
  prompt: string;
  tokens: number;
  seconds: number;
  firstTokenMs: number;
  finishReason: string;
}

const rate = (reply: Reply) => reply.tokens / reply.seconds;
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
};

/** Processes that keep one core each busy; killed at the end, and ending by themselves after BUSY_LIMIT_MS. */
function startBusy(count: number): ChildProcess[] {
  const loop = `const end = Date.now() + ${BUSY_LIMIT_MS}; while (Date.now() < end) {}`;
  return Array.from({ length: count }, () => spawn(process.execPath, ["-e", loop], { stdio: "ignore" }));
}

async function main(): Promise<void> {
  const modelPath =
    process.env.LOCAL_MODEL_PATH ??
    (await ensureModel({ dir: sharedModelDir() }, { logger: silentLogger() })).path;
  const scratch = await mkdtemp(join(tmpdir(), "agentry-bench-local-load-"));
  // The provider as the service makes it by default, but with no time limit: the rates are what is measured.
  const provider = createLocalProvider({
    location: { path: modelPath, dir: scratch },
    maxQueue: 1,
    gpu: false,
    threads: 0,
    contextSize: 0,
    replyTimeoutMs: 3_600_000,
    defaultMaxTokens: maxTokens,
    logger: silentLogger(),
  });
  await provider.warmUp();
  const llama = await getLlama({ gpu: false, build: "never", skipDownload: true });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ sequences: 1, contextSize: 2048, threads: 1 });
  const chat = new LlamaChat({ contextSequence: context.getSequence() });

  // Greedy decoding makes the loop comparison the same under any load: it runs before the busy processes.
  const loops: { prompt: string; defaultLoop: boolean; providerLoop: boolean }[] = [];
  for (const prompt of PROMPTS) {
    const history: ChatHistoryItem[] = [
      { type: "system", text: system },
      { type: "user", text: prompt },
      { type: "model", response: [] },
    ];
    const loopsWith = async (repeatPenalty: { lastTokens?: number; penalty?: number }) => {
      const detector = new LoopDetector();
      let looped = false;
      await chat.generateResponse(history, {
        maxTokens: LOOP_TOKENS,
        temperature: 0,
        repeatPenalty,
        onToken: (tokens) => {
          if (detector.push(tokens)) looped = true;
        },
      });
      return looped;
    };
    loops.push({
      prompt,
      defaultLoop: await loopsWith({}),
      providerLoop: await loopsWith(LOCAL_REPEAT_PENALTY),
    });
    process.stdout.write(`loops "${prompt}": ${JSON.stringify(loops.at(-1))}\n`);
  }

  const load = { before: loadavg()[0] ?? 0, after: 0 };
  const children = startBusy(busy);
  // Interrupted, the busy processes end with the benchmark rather than after BUSY_LIMIT_MS.
  const stop = () => {
    for (const child of children) child.kill();
    process.exit(130);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    // The busy processes take a moment to start spinning.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const replies: Reply[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const prompt of PROMPTS) {
        const startedAt = performance.now();
        let firstTokenMs = 0;
        let done: { finishReason: string; tokens: number } | undefined;
        for await (const event of await provider.stream(
          { model: provider.defaultModel, system, messages: [{ role: "user", text: prompt }], maxTokens },
          new AbortController().signal,
        )) {
          if (event.type === "delta" && firstTokenMs === 0) firstTokenMs = performance.now() - startedAt;
          if (event.type === "done")
            done = { finishReason: event.finishReason, tokens: event.usage.outputTokens };
        }
        const reply: Reply = {
          prompt,
          tokens: done?.tokens ?? 0,
          seconds: (performance.now() - startedAt) / 1000,
          firstTokenMs,
          finishReason: done?.finishReason ?? "none",
        };
        replies.push(reply);
        process.stdout.write(
          `round ${round + 1} "${prompt}": ${reply.tokens} tokens in ${reply.seconds.toFixed(1)} s ` +
            `(${rate(reply).toFixed(1)} tok/s, ${reply.finishReason})\n`,
        );
      }
    }

    load.after = loadavg()[0] ?? 0;

    const report = renderReport(replies, loops, modelPath.split("/").at(-1) ?? modelPath, load);
    process.stdout.write(`\n${report}\n`);
    if (!args["no-write"]) {
      await writeSection(report);
      process.stdout.write("written to docs/benchmarks.md\n");
    }
  } finally {
    for (const child of children) child.kill();
    await provider.close();
    await context.dispose();
    await model.dispose();
    await rm(scratch, { recursive: true, force: true });
  }
}

function renderReport(
  replies: Reply[],
  loops: { prompt: string; defaultLoop: boolean; providerLoop: boolean }[],
  modelFile: string,
  load: { before: number; after: number },
): string {
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  const rates = replies.map(rate);
  const firstTokens = replies.map((reply) => reply.firstTokenMs);
  const slowest = Math.min(...rates);
  const p10 = quantile(rates, 0.1);
  const budgetS = DEFAULT_LOCAL_REPLY_TIMEOUT_MS / 1000;
  const worstFirstS = Math.max(...firstTokens) / 1000;
  const fits = Math.floor(slowest * (budgetS - worstFirstS));
  const rows = replies.map((reply) => {
    const cells = [
      reply.prompt,
      reply.tokens,
      reply.seconds.toFixed(1),
      rate(reply).toFixed(1),
      Math.round(reply.firstTokenMs),
      reply.finishReason,
    ];
    return `| ${cells.join(" | ")} |`;
  });
  const loopRows = loops.map(
    (row) => `| ${row.prompt} | ${row.defaultLoop ? "loops" : "-"} | ${row.providerLoop ? "loops" : "-"} |`,
  );
  const count = (key: "defaultLoop" | "providerLoop") => loops.filter((row) => row[key]).length;
  return [
    "## Local model under load",
    "",
    "The local provider as the service makes it by default (threads: half the cores; the model's context;",
    "temperature 0.2, top-p 0.9, its repetition penalty), streaming replies of up to the given tokens to",
    `everyday prompts while ${busy} other process(es) each keep a core busy with a loop, on top of whatever else`,
    "the machine runs. A rate is output tokens over the time from the request to the end of the reply, first",
    "token included. This chooses the local model's bounds: `LOCAL_MAX_TOKENS` must fit in the reply's time limit",
    "(`LOCAL_REPLY_TIMEOUT_MS`) at the slowest rate seen, and the time limit cuts short what still does not.",
    "",
    `- Machine: ${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 1024 ** 3)} GiB, ${type()}; Node ${process.versions.node}; load average ${load.before.toFixed(1)} before the run, ${load.after.toFixed(1)} at its end`,
    `- Model: ${modelFile}, node-llama-cpp 3.22.1 (CPU build); ${rounds} round(s) of ${PROMPTS.length} prompts, up to ${maxTokens} tokens each`,
    `- Reproduce: \`pnpm models:pull && pnpm --filter @agentry/bench bench:local-load --busy ${busy} --rounds ${rounds} --max-tokens ${maxTokens}\``,
    "",
    "| Prompt | Tokens | Seconds | Tok/s | First token (ms) | Finish |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
    ...rows,
    "",
    `Tokens per second: median ${quantile(rates, 0.5).toFixed(1)}, slowest tenth ${p10.toFixed(1)}, slowest ` +
      `${slowest.toFixed(1)}; first token at most ${Math.round(worstFirstS * 1000)} ms. At the slowest rate, ` +
      `${fits} tokens fit in the ${budgetS} s time limit after the slowest first token; the default ` +
      `\`LOCAL_MAX_TOKENS\` is ${DEFAULT_LOCAL_MAX_TOKENS}, which takes ` +
      `${(DEFAULT_LOCAL_MAX_TOKENS / quantile(rates, 0.5)).toFixed(1)} s at the median rate; the time limit ends ` +
      "a reply that goes on longer.",
    "",
    `Loops (the same token or short sequence repeated over 32 tokens) in ${LOOP_TOKENS}-token greedy replies, with`,
    `node-llama-cpp's default repetition penalty (1.1 over the last 64 tokens) and with the provider's`,
    `(${LOCAL_REPEAT_PENALTY.penalty} over the last ${LOCAL_REPEAT_PENALTY.lastTokens}), one thread, context 2048, before the busy processes start:`,
    "",
    "| Prompt | Default penalty | Provider's penalty |",
    "| --- | --- | --- |",
    ...loopRows,
    "",
    `Replies that fell into a loop: ${count("defaultLoop")} of ${loops.length} with the default penalty, ` +
      `${count("providerLoop")} of ${loops.length} with the provider's.`,
  ].join("\n");
}

/** Replaces the "Local model under load" section of docs/benchmarks.md, or appends it; others are left alone. */
async function writeSection(section: string): Promise<void> {
  const file = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "docs", "benchmarks.md");
  const current = await readFile(file, "utf8").catch(() => "# Benchmarks\n");
  const heading = "## Local model under load";
  const start = current.indexOf(heading);
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
