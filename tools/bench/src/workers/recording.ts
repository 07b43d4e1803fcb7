import { join } from "node:path";
import {
  type CallRecord,
  CONVERSATION_DB_FILE,
  type NewExchange,
  openSqliteConversationStore,
  SqliteConversationStore,
} from "@agentry/conversation";
import { newId } from "@agentry/core";

/**
 * What recording usage adds to storing a message's exchange: `saveExchange` on the SQLite store as it is, and on
 * the same store without its usage rollup, each in a database of its own, one call at a time, alternating in a
 * rotating order. Both write the same exchange and call record in one durable transaction; only the rollup
 * differs. Reports every sample in milliseconds: [with usage, without].
 */
interface Input {
  /** Two empty directories, one for each store. */
  dirs: [string, string];
  warmup: number;
  count: number;
}

/** The store without its usage rollups: for this comparison only. */
class StoreWithoutUsage extends SqliteConversationStore {
  protected override addUsage(): void {}
}

const input = JSON.parse(process.argv[2]!) as Input;
const stores = [
  openSqliteConversationStore({ dataDir: input.dirs[0] }),
  new StoreWithoutUsage(join(input.dirs[1], CONVERSATION_DB_FILE)),
];
const key = { accountId: "acct_bench", agentId: "agt_bench", userId: "", roomId: "" };

/** A message and its reply as the service stores them, with their call record. */
function exchange(): [NewExchange, CallRecord] {
  const now = new Date();
  const createdAt = now.toISOString();
  const asked = new Date(now.getTime() - 2).toISOString();
  const id = newId("message");
  return [
    {
      key,
      user: { id: newId("message"), text: "Hello there", createdAt: asked },
      reply: {
        id,
        text: "Hello from the bench.",
        model: "bench-model",
        provider: "openai",
        inputTokens: 12,
        outputTokens: 3,
        latencyMs: 2,
        finishReason: "stop",
        createdAt,
      },
    },
    {
      ...key,
      id,
      requestId: newId("request"),
      apiKeyId: "key_bench",
      provider: "openai",
      model: "bench-model",
      stream: false,
      outcome: "completed",
      errorCode: null,
      errorMessage: null,
      latencyMs: 2,
      firstTokenMs: 2,
      inputTokens: 12,
      outputTokens: 3,
      createdAt,
    },
  ];
}

const samples: number[][] = stores.map(() => []);
for (let i = 0; i < input.warmup + input.count; i++) {
  for (let k = 0; k < stores.length; k++) {
    const index = (i + k) % stores.length;
    const [ex, call] = exchange();
    const started = performance.now();
    await stores[index]!.saveExchange(ex, call);
    const took = performance.now() - started;
    if (i >= input.warmup) samples[index]!.push(took);
  }
}
for (const store of stores) await store.close();
process.stdout.write(`${JSON.stringify({ samples })}\n`);
