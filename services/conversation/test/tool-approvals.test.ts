import type { PublicEvent } from "@agentry/events";
import { Catalogue, definePlugin, defineTool } from "@agentry/plugin-kit";
import {
  AgentSchema,
  type BackgroundMessage,
  MessageStatus,
  PluginService,
  type StreamMessageResponse,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { PluginRuntime } from "../src/index.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

/** What the bank's tools were asked to do: each run, with its arguments. */
const ran: { tool: string; input: unknown }[] = [];

const bank = definePlugin({
  name: "bank",
  version: "1.0.0",
  description: "Moves money, and reads balances.",
  config: z.object({}),
  secrets: [],
  tools: [
    defineTool({
      name: "transfer",
      description: "Transfers an amount.",
      input: z.object({ amount: z.number() }),
      async run(input) {
        ran.push({ tool: "transfer", input });
        return { done: true, amount: input.amount };
      },
    }),
    defineTool({
      name: "balance",
      description: "The balance.",
      input: z.object({}),
      async run(input) {
        ran.push({ tool: "balance", input });
        return { balance: 100 };
      },
    }),
  ],
});

const runtime: PluginRuntime = {
  catalogue: new Catalogue([bank]),
  service: createClient(
    PluginService,
    createRouterTransport(({ service }) => {
      service(PluginService, {
        revealSecrets: () => ({ values: {} }),
        searchKnowledge: () => ({ hits: [] }),
      });
    }),
  ),
  fetch: () => Promise.reject(new Error("no network in tests")),
};

const published: PublicEvent[] = [];
let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    plugins: runtime,
    publish: async (events) => {
      published.push(...events);
    },
    runLeases: { scanMs: 50 },
  });
});
afterAll(() => h.close());
beforeEach(() => {
  h.openai.reset();
  ran.length = 0;
});

type Event = StreamMessageResponse["event"];

async function collect(stream: AsyncIterable<StreamMessageResponse>): Promise<Event[]> {
  const all: Event[] = [];
  for await (const response of stream) all.push(response.event);
  return all;
}

/** An agent whose bank transfers wait for approval (balances do not). */
const gated = () =>
  agent({ plugins: [{ name: "bank", requireApproval: ["transfer"] }], settings: undefined });

async function state(agentId: string, messageId: string): Promise<BackgroundMessage> {
  const { background } = await h.client.getMessage({ accountId: ACCOUNT, agentId, messageId });
  if (!background) throw new Error("not a background message");
  return background;
}

async function settledState(agentId: string, messageId: string): Promise<BackgroundMessage> {
  let last: BackgroundMessage | undefined;
  await vi.waitFor(
    async () => {
      last = await state(agentId, messageId);
      expect([MessageStatus.COMPLETED, MessageStatus.FAILED]).toContain(last.status);
    },
    { timeout: 5_000, interval: 20 },
  );
  return last!;
}

const eventsOf = (messageId: string) =>
  published.filter((event) => event.data.messageId === messageId || event.data.id === messageId);

/** Streams a message to `a` whose model calls a transfer of 40; answers the paused stream's events and id. */
async function pausedStream(a: ReturnType<typeof agent>) {
  h.openai.callTools([{ id: "call_t", name: "bank__transfer", arguments: { amount: 40 } }]);
  const events = await collect(
    h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "Send Bob 40", userId: "u1" }),
  );
  const started = events[0];
  if (started?.case !== "started") throw new Error("no started event");
  return { events, id: started.value.messageId };
}

describe("tool approvals", () => {
  it("pauses a stream before a tool that waits for approval, and runs it once approved", async () => {
    const a = gated();
    const { events, id } = await pausedStream(a);

    expect(events.map((event) => event.case)).toEqual(["started", "toolCall", "approvalRequired"]);
    const last = events.at(-1)!;
    if (last.case !== "approvalRequired") throw new Error("unexpected");
    expect(last.value.pendingToolCalls).toMatchObject([
      { id: "call_t", tool: "bank__transfer", argumentsJson: '{"amount":40}' },
    ]);
    expect(ran).toEqual([]);
    expect(h.openai.requests).toHaveLength(1);

    const paused = await state(a.id, id);
    expect(paused.status).toBe(MessageStatus.REQUIRES_ACTION);
    expect(paused.pendingToolCalls).toMatchObject([{ id: "call_t", tool: "bank__transfer" }]);
    expect(paused.approvalExpireTime).toBeDefined();

    h.openai.answer({ chunks: ["Sent ", "40."] });
    const answered = await h.client.approveToolCalls({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId: id,
      toolCallIds: ["call_t"],
      approve: true,
    });
    expect(answered.message?.status).toBe(MessageStatus.PENDING);

    const done = await settledState(a.id, id);
    expect(done.status).toBe(MessageStatus.COMPLETED);
    expect(done.reply?.text).toBe("Sent 40.");
    expect(done.reply?.toolCalls).toMatchObject([
      { id: "call_t", name: "bank__transfer", ok: true, outputJson: '{"done":true,"amount":40}' },
    ]);
    // The tool ran once, with the arguments the model wrote (stored server-side), and its outcome reached the model.
    expect(ran).toEqual([{ tool: "transfer", input: { amount: 40 } }]);
    expect(h.openai.requests).toHaveLength(2);
    const tools = h.openai.lastRequest.body.messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([["call_t", '{"done":true,"amount":40}']]);

    // The reply is stored once; the events were published once each.
    const { messages } = await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id });
    expect(messages.map((m) => m.text).sort()).toEqual(["Send Bob 40", "Sent 40."]);
    await vi.waitFor(() =>
      expect(eventsOf(id).map((event) => event.type)).toEqual([
        "message.requires_action",
        "message.completed",
      ]),
    );
    expect(eventsOf(id)[0]!.data).toMatchObject({
      agentId: a.id,
      messageId: id,
      userId: "u1",
      pendingToolCalls: [{ id: "call_t", tool: "bank__transfer", arguments: '{"amount":40}' }],
    });

    // Answered: a second answer is refused, and nothing runs again.
    const again = await failure(
      h.client.approveToolCalls({
        accountId: ACCOUNT,
        agentId: a.id,
        messageId: id,
        toolCallIds: ["call_t"],
        approve: true,
      }),
    );
    expect(again.code).toBe("MESSAGE_NOT_AWAITING_APPROVAL");
    expect(ran).toHaveLength(1);
  });

  it("counts the tokens spent before a pause once, with the pause, and only the rest when the message completes", async () => {
    const a = gated();
    const usage = async () =>
      (await h.conversation.store.getUsage({ accountId: ACCOUNT, agentId: a.id, granularity: "day" }))
        .totals[0]?.figures;
    h.openai.callTools([{ id: "call_t", name: "bank__transfer", arguments: { amount: 40 } }], {
      usage: { input: 30, output: 12 },
    });
    const events = await collect(
      h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "Send Bob 40", userId: "u1" }),
    );
    expect(events.at(-1)?.case).toBe("approvalRequired");
    const id = events[0]?.case === "started" ? events[0].value.messageId : "";
    // Counted as the message paused: its tokens, no message yet.
    await vi.waitFor(async () =>
      expect(await usage()).toMatchObject({ messages: 0, inputTokens: 30, outputTokens: 12 }),
    );

    h.openai.answer({ chunks: ["Sent."], usage: { input: 50, output: 4 } });
    await h.client.approveToolCalls({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId: id,
      toolCallIds: ["call_t"],
      approve: true,
    });
    const done = await settledState(a.id, id);
    expect(done.status).toBe(MessageStatus.COMPLETED);
    // The reply tells the whole turn's tokens; usage has each counted once: the message, and its tokens.
    expect(done.reply?.usage).toMatchObject({ inputTokens: 80, outputTokens: 16 });
    expect(await usage()).toMatchObject({ messages: 1, errors: 0, inputTokens: 80, outputTokens: 16 });
  });

  it("tells the model a refused call was refused, with the reason, and runs nothing", async () => {
    const a = gated();
    const { id } = await pausedStream(a);
    h.openai.answer({ text: "Understood, no transfer." });
    await h.client.approveToolCalls({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId: id,
      toolCallIds: ["call_t"],
      approve: false,
      reason: "Bob is not a known payee",
    });
    const done = await settledState(a.id, id);
    expect(done.reply?.text).toBe("Understood, no transfer.");
    expect(done.reply?.toolCalls).toMatchObject([
      { id: "call_t", ok: false, error: "The person refused this tool call: Bob is not a known payee" },
    ]);
    expect(ran).toEqual([]);
    const tools = h.openai.lastRequest.body.messages.filter((m) => m.role === "tool");
    expect(String(tools[0]?.content)).toContain(
      "The person refused this tool call: Bob is not a known payee",
    );
  });

  it("resumes only once every pending call is decided, the answers given one by one", async () => {
    const a = gated();
    h.openai.callTools([
      { id: "call_a", name: "bank__transfer", arguments: { amount: 1 } },
      { id: "call_b", name: "bank__transfer", arguments: { amount: 2 } },
    ]);
    const { messageId } = await h.client.startMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "two transfers",
    });
    await vi.waitFor(async () =>
      expect((await state(a.id, messageId)).status).toBe(MessageStatus.REQUIRES_ACTION),
    );

    const half = await h.client.approveToolCalls({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId,
      toolCallIds: ["call_a"],
      approve: true,
    });
    expect(half.message?.status).toBe(MessageStatus.REQUIRES_ACTION);
    expect(half.message?.pendingToolCalls.map((call) => call.id)).toEqual(["call_b"]);
    expect(ran).toEqual([]);

    const unknown = await failure(
      h.client.approveToolCalls({
        accountId: ACCOUNT,
        agentId: a.id,
        messageId,
        toolCallIds: ["call_a", "call_zzz"],
        approve: true,
      }),
    );
    expect(unknown.code).toBe("INVALID_REQUEST");
    expect(unknown.message).toContain('"call_a", "call_zzz"');

    h.openai.answer({ text: "One sent." });
    await h.client.approveToolCalls({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId,
      toolCallIds: ["call_b"],
      approve: false,
    });
    const done = await settledState(a.id, messageId);
    expect(done.reply?.toolCalls.map((call) => [call.id, call.ok])).toEqual([
      ["call_a", true],
      ["call_b", false],
    ]);
    expect(ran).toEqual([{ tool: "transfer", input: { amount: 1 } }]);
  });

  it("answers a JSON send that pauses with the message in requires_action", async () => {
    const a = gated();
    h.openai.callTools([{ id: "call_j", name: "bank__transfer", arguments: { amount: 5 } }]);
    const answer = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "Send 5" });
    expect(answer.reply).toBeUndefined();
    expect(answer.paused?.status).toBe(MessageStatus.REQUIRES_ACTION);
    expect(answer.paused?.pendingToolCalls.map((call) => call.id)).toEqual(["call_j"]);
  });

  it("resumes an agent sent with its JSON fields as text with the same personality, settings and tools", async () => {
    // As a gateway sends it from the registry's JSON view: text only, no Struct or Value form.
    const base = gated();
    const a = create(AgentSchema, {
      id: base.id,
      accountId: ACCOUNT,
      spec: {
        name: "Ada",
        personalityJson: JSON.stringify({ tone: "meticulous" }),
        settingsJson: JSON.stringify({ temperature: 0.25 }),
        pluginsJson: JSON.stringify([{ name: "bank", requireApproval: ["transfer"] }]),
        clientsJson: "[]",
      },
    });
    const { events, id } = await pausedStream(a);
    expect(events.at(-1)?.case).toBe("approvalRequired");
    h.openai.reply("Sent.");
    await h.client.approveToolCalls({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId: id,
      toolCallIds: ["call_t"],
      approve: true,
    });
    expect((await settledState(a.id, id)).reply?.text).toBe("Sent.");
    // The run that resumed read the agent back from its record: the turn is the agent's, before and after.
    expect(h.openai.requests).toHaveLength(2);
    for (const { body } of h.openai.requests) {
      expect(body.messages[0]?.content).toContain("meticulous");
      expect(body.temperature).toBe(0.25);
      expect(
        body.tools?.map((tool) => (tool as { function: { name: string } }).function.name).sort(),
      ).toEqual(["bank__balance", "bank__transfer"]);
    }
  });

  it("refuses answers to unknown messages and to messages that are not paused", async () => {
    const a = gated();
    const missing = await failure(
      h.client.approveToolCalls({
        accountId: ACCOUNT,
        agentId: a.id,
        messageId: "msg_01JNOSUCHMESSAGE0000000000",
        toolCallIds: ["x"],
        approve: true,
      }),
    );
    expect(missing.code).toBe("MESSAGE_NOT_FOUND");

    h.openai.answer({ text: "Hello" });
    const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" });
    const completed = await failure(
      h.client.approveToolCalls({
        accountId: ACCOUNT,
        agentId: a.id,
        messageId: reply!.id,
        toolCallIds: ["x"],
        approve: true,
      }),
    );
    expect(completed.code).toBe("MESSAGE_NOT_AWAITING_APPROVAL");
  });
});

describe("an approval left unanswered", () => {
  let short: Harness;
  beforeAll(async () => {
    short = await startHarness({
      plugins: runtime,
      approvalTimeoutMs: 300,
      runLeases: { scanMs: 50 },
      publish: async (events) => {
        published.push(...events);
      },
    });
  });
  afterAll(() => short.close());

  it("fails the message with APPROVAL_EXPIRED once its wait ends, and nothing runs", async () => {
    const a = gated();
    short.openai.callTools([{ id: "call_x", name: "bank__transfer", arguments: { amount: 9 } }]);
    const { messageId } = await short.client.startMessage({ accountId: ACCOUNT, agent: a, text: "Send 9" });
    const read = async () => {
      const { background } = await short.client.getMessage({ accountId: ACCOUNT, agentId: a.id, messageId });
      return background!;
    };
    await vi.waitFor(async () => expect((await read()).status).toBe(MessageStatus.REQUIRES_ACTION));
    await vi.waitFor(async () => expect((await read()).status).toBe(MessageStatus.FAILED), {
      timeout: 3_000,
    });
    expect((await read()).error?.code).toBe("APPROVAL_EXPIRED");
    const late = await failure(
      short.client.approveToolCalls({
        accountId: ACCOUNT,
        agentId: a.id,
        messageId,
        toolCallIds: ["call_x"],
        approve: true,
      }),
    );
    expect(late.code).toBe("MESSAGE_NOT_AWAITING_APPROVAL");
    expect(ran).toEqual([]);
    // Its log ends with the failure, for a follower.
    const watched: string[] = [];
    for await (const response of short.client.watchMessage({
      accountId: ACCOUNT,
      agentId: a.id,
      messageId,
    })) {
      if (response.event.case) watched.push(response.event.case);
    }
    expect(watched).toEqual(["started", "toolCall", "approvalRequired", "failed"]);
    // Webhooks are told it failed, once, as of any failed message.
    await vi.waitFor(() =>
      expect(eventsOf(messageId).map((event) => event.type)).toEqual([
        "message.requires_action",
        "message.failed",
      ]),
    );
    expect(eventsOf(messageId)[1]!.data).toMatchObject({
      agentId: a.id,
      messageId,
      code: "APPROVAL_EXPIRED",
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(eventsOf(messageId)).toHaveLength(2);
  });
});
