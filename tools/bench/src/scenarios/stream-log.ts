import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { buildConversation, type Conversation } from "@agentry/conversation";
import { silentLogger } from "@agentry/logging";
import { ConversationService } from "@agentry/proto";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { type Bench, log, median, percentile } from "../bench.js";
import type { Latencies } from "./webhooks.js";

export interface StreamLogResult {
  messages: number;
  streams: number;
  /** From the call to its first text, with the log and without. */
  firstText: { kept: Latencies; unkept: Latencies };
  /** Heap growth of holding `streams` idle streams open, with the log and without. */
  idleBytes: { kept: number; unkept: number };
}

const ACCOUNT = "acct_01JBENCHBENCHBENCHBENCHBE01";
const AGENT = "agt_01JBENCHBENCHBENCHBENCHBE01";

/**
 * What keeping a stream's events (resumable streams) costs, on the conversation service itself, in process: two
 * services alike but for the log (`keepStreams: false` on the other), called through the in-process transport.
 * The time from a StreamMessage call to its first text, alternating between the two call by call; and the heap
 * each grows by while `streams` idle streams (the fake provider's "hold" model: one chunk, then silence) are open.
 */
export async function streamLog(bench: Bench, providerUrl: string): Promise<StreamLogResult> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const open = async (name: string, keepStreams: boolean) => {
    const dataDir = join(bench.dir, name);
    await mkdir(dataDir, { recursive: true });
    const conversation = await buildConversation({
      dataDir,
      logger: silentLogger(),
      providers: {
        defaultProvider: "openai",
        openai: { apiKey: "sk-bench", baseURL: `${providerUrl}/v1`, model: "bench-model" },
        local: { enabled: false },
      },
      keepStreams,
    });
    return {
      conversation,
      client: createClient(ConversationService, createRouterTransport(conversation.routes)),
    };
  };
  const kept = await open("stream-log-kept", true);
  const unkept = await open("stream-log-unkept", false);
  const request = (model: string, userId: string) => ({
    accountId: ACCOUNT,
    agent: { id: AGENT, accountId: ACCOUNT, spec: { name: "Bench", modelProvider: "openai", model } },
    text: "Hello there",
    userId,
  });

  const messages = bench.settings.messages;
  log(`${messages} streamed replies with their events kept and without, alternating, to the first text ...`);
  const times: [number[], number[]] = [[], []];
  const warmup = Math.ceil(messages / 10);
  for (let i = 0; i < warmup + messages; i++) {
    // Each first in turn, so that neither always follows the other.
    for (const side of i % 2 === 0 ? [kept, unkept] : [unkept, kept]) {
      const started = performance.now();
      let first = Number.NaN;
      for await (const response of side.client.streamMessage(request("bench-model", `u${i % 50}`))) {
        if (Number.isNaN(first) && response.event.case === "delta") first = performance.now() - started;
      }
      if (i >= warmup) times[side === kept ? 0 : 1].push(first);
    }
  }

  const streams = bench.settings.streams;
  const idle = async (side: typeof kept, count: number) => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const aborts = Array.from({ length: count }, () => new AbortController());
    const held = aborts.map(async (abort, i) => {
      const events = side.client.streamMessage(request("hold", `hold-${i}`), { signal: abort.signal });
      const reading = events[Symbol.asyncIterator]();
      // Open once its first text is in: from then on it is idle.
      for (let next = await reading.next(); !next.done; next = await reading.next()) {
        if (next.value.event.case === "delta") break;
      }
      return reading;
    });
    const readers = await Promise.all(held);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    for (const abort of aborts) abort.abort();
    await Promise.all(readers.map((reader) => reader.return?.().catch(() => undefined)));
    // What the cancelled streams still hold (their last writes) is let go before the next measure.
    await new Promise((resolve) => setTimeout(resolve, 500));
    return grown;
  };
  log(`holding ${streams} idle streams without their events kept, then with ...`);
  // A first round on each warms what a process builds once (compiled code, statements, pools).
  const warm = Math.min(streams, 100);
  await idle(kept, warm);
  await idle(unkept, warm);
  const unkeptBytes = await idle(unkept, streams);
  const idleBytes = { kept: await idle(kept, streams), unkept: unkeptBytes };

  await close(kept.conversation);
  await close(unkept.conversation);
  const summary = (values: number[]) => ({ p50: median(values), p99: percentile(values, 99) });
  return {
    messages,
    streams,
    firstText: { kept: summary(times[0]), unkept: summary(times[1]) },
    idleBytes,
  };
}

async function close(conversation: Conversation): Promise<void> {
  await conversation.close();
}
