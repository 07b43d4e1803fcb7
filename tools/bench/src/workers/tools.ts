import { buildConversation, createOpenAIProvider } from "@agentry/conversation";
import { startFakeOpenAI } from "@agentry/conversation/testing";
import { silentLogger } from "@agentry/logging";
import { Catalogue, definePlugin, defineTool } from "@agentry/plugin-kit";
import { AgentSchema, ConversationService, PluginService } from "@agentry/proto";
import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { z } from "zod";

/**
 * What a tool call adds to a message's turn beyond the provider round trip it needs: in one process, the
 * conversation service (SQLite in `dir`) answering through the real OpenAI client from a local fake provider,
 * alternating in a rotating order: a plain turn (one provider call), a turn with one local tool call (two provider
 * calls and the tool), and a provider round trip alone (the same client, the same fake). Each turn has a
 * conversation of its own, so every prompt is the same size. Reports every sample in milliseconds:
 * [plain turn, tool turn, provider round trip].
 */
interface Input {
  dir: string;
  warmup: number;
  count: number;
}

const input = JSON.parse(process.argv[2]!) as Input;

const echo = definePlugin({
  name: "bench",
  version: "1.0.0",
  description: "A local tool that answers at once.",
  config: z.object({}),
  secrets: [],
  tools: [
    defineTool({
      name: "echo",
      description: "Echoes its text.",
      input: z.object({ text: z.string() }),
      run: async ({ text }) => ({ text }),
    }),
  ],
});

const fake = await startFakeOpenAI({ apiKey: "sk-bench" });
const conversation = await buildConversation({
  dataDir: input.dir,
  logger: silentLogger(),
  providers: {
    defaultProvider: "openai",
    openai: { apiKey: "sk-bench", baseURL: fake.baseURL },
    local: { enabled: false },
  },
  plugins: {
    catalogue: new Catalogue([echo]),
    // The tool reads no secret and no knowledge: the registry is never called.
    service: createClient(
      PluginService,
      createRouterTransport(() => {}),
    ),
    fetch: () => Promise.reject(new Error("no outbound HTTP in the bench")),
  },
});
const client = createClient(ConversationService, createRouterTransport(conversation.routes));
const provider = createOpenAIProvider({
  apiKey: "sk-bench",
  baseURL: fake.baseURL,
  defaultModel: "gpt-4o-mini",
  timeoutMs: 10_000,
});
// The plain turn's agent has no plugin: the tool turn pays for preparing its tools too.
const plain = create(AgentSchema, {
  id: "agt_01JBENCHPLA1N0000000000000",
  accountId: "acct_bench",
  spec: { name: "Ada", bio: ["Counts things."] },
});
const withTools = create(AgentSchema, {
  id: "agt_01JBENCHT00LS0000000000000",
  accountId: "acct_bench",
  spec: { name: "Ada", bio: ["Counts things."], plugins: fromJson(ValueSchema, ["bench"]) },
});

let turn = 0;
function send(agent: typeof plain) {
  turn += 1;
  return client.sendMessage({ accountId: "acct_bench", agent, text: "Echo hello", userId: `u${turn}` });
}

const runs: (() => Promise<unknown>)[] = [
  () => {
    fake.reply("Hello.");
    return send(plain);
  },
  () => {
    fake.callTools([{ name: "bench__echo", arguments: { text: "hello" } }]);
    fake.reply("Hello.");
    return send(withTools);
  },
  () => {
    fake.reply("Hello.");
    return provider.complete(
      {
        model: "gpt-4o-mini",
        system: "You are Ada.",
        messages: [{ role: "user", text: "Echo hello" }],
        maxTokens: 64,
      },
      new AbortController().signal,
    );
  },
];

const samples: number[][] = runs.map(() => []);
for (let i = 0; i < input.warmup + input.count; i++) {
  for (let k = 0; k < runs.length; k++) {
    const index = (i + k) % runs.length;
    const started = performance.now();
    await runs[index]!();
    const took = performance.now() - started;
    if (i >= input.warmup) samples[index]!.push(took);
  }
  // The fake keeps every request it received; these need not pile up.
  fake.requests.length = 0;
}
await conversation.close();
await fake.close();
process.stdout.write(`${JSON.stringify({ samples })}\n`);
