import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { buildConversation } from "@agentry/conversation";
import { silentLogger } from "@agentry/logging";
import { ConversationService } from "@agentry/proto";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { type Bench, log, median, percentile } from "../bench.js";
import type { Latencies } from "./webhooks.js";

export interface RunLeaseResult {
  messages: number;
  /** From a StartMessage call to its answer (the run recorded durably), with a lease and without. */
  accepted: { leased: Latencies; unleased: Latencies };
  /** From a StartMessage call to the reply stored and the run ended, with a lease and without. */
  completed: { leased: Latencies; unleased: Latencies };
}

const ACCOUNT = "acct_01JBENCHBENCHBENCHBENCHBE02";
const AGENT = "agt_01JBENCHBENCHBENCHBENCHBE02";

/**
 * What a background message's lease (durable runs) costs, on the conversation service itself, in process: two
 * services alike but for the lease (`durableRuns: false` on the other), each on its own SQLite file, called
 * through the in-process transport, alternating call by call. Timed: the StartMessage call (the run, with its
 * lease and its recorded message, committed before the answer), and the whole message to its end (the reply
 * stored, the run ended), read by following its events to the terminal one.
 */
export async function runLease(bench: Bench, providerUrl: string): Promise<RunLeaseResult> {
  const open = async (name: string, durableRuns: boolean) => {
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
      durableRuns,
    });
    return {
      conversation,
      client: createClient(ConversationService, createRouterTransport(conversation.routes)),
    };
  };
  const leased = await open("run-lease-leased", true);
  const unleased = await open("run-lease-unleased", false);
  const request = (userId: string) => ({
    accountId: ACCOUNT,
    agent: {
      id: AGENT,
      accountId: ACCOUNT,
      spec: { name: "Bench", modelProvider: "openai", model: "bench-model" },
    },
    text: "Hello there",
    userId,
  });

  const messages = bench.settings.messages;
  log(`${messages} background messages with a lease and without, alternating ...`);
  const accepted: [number[], number[]] = [[], []];
  const completed: [number[], number[]] = [[], []];
  const warmup = Math.ceil(messages / 10);
  for (let i = 0; i < warmup + messages; i++) {
    // Each first in turn, so that neither always follows the other.
    for (const side of i % 2 === 0 ? [leased, unleased] : [unleased, leased]) {
      const started = performance.now();
      const { messageId } = await side.client.startMessage(request(`u${i % 50}`));
      const answered = performance.now() - started;
      for await (const _ of side.client.watchMessage({
        accountId: ACCOUNT,
        agentId: AGENT,
        messageId,
        endOnly: true,
      })) {
        // The terminal event ends the watch.
      }
      const ended = performance.now() - started;
      if (i >= warmup) {
        accepted[side === leased ? 0 : 1].push(answered);
        completed[side === leased ? 0 : 1].push(ended);
      }
    }
  }
  await leased.conversation.close();
  await unleased.conversation.close();
  const summary = (values: number[]) => ({ p50: median(values), p99: percentile(values, 99) });
  return {
    messages,
    accepted: { leased: summary(accepted[0]), unleased: summary(accepted[1]) },
    completed: { leased: summary(completed[0]), unleased: summary(completed[1]) },
  };
}
