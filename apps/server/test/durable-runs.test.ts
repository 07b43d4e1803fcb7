import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { ConversationService, MessageStatus, TurnRole, WebhookService } from "@agentry/proto";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { Receiver } from "@agentry/webhooks/testing";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonCaller, seedDataDir, startCounter } from "./processes.js";
import { parseEventStream } from "./sse.js";

/*
 * Background messages outlive the process generating them: killed with SIGKILL, another process sharing the store
 * takes the run over once its lease expires and completes it once, without running a stored tool round again.
 * Leases are short here (the settings' production defaults take a run over within 15 s).
 */
const LEASES = { RUN_LEASE_MS: "1500", RUN_LEASE_RENEW_MS: "300", RUN_TAKEOVER_SCAN_MS: "200" };
const OPENAI_KEY = "sk-test-openai";

let openai: FakeProviderServer<OpenAIChatBody>;

/** A slow streamed answer: `words` chunks, one every `everyMs`. */
function slowly(words: number, everyMs: number) {
  return {
    chunks: Array.from({ length: words }, (_, i) => `w${i + 1} `),
    chunkDelayMs: everyMs,
  };
}

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: OPENAI_KEY });
});

afterAll(async () => {
  await openai?.close();
});

describe("two all-in-one servers on one SQLite file", () => {
  let dataDir: string;
  let key: string;
  let receiver: Receiver;
  /** Counts the requests the agents' http tool makes. */
  let counter: Awaited<ReturnType<typeof startCounter>>;
  const processes: DeployableProcess[] = [];
  let env: Record<string, string>;

  const start = async () => {
    const started = await startDeployable("apps/server", env);
    processes.push(started);
    return started;
  };
  const call = jsonCaller(() => key);
  type MessageBody = {
    data: {
      id: string;
      status: string;
      text?: string;
      toolCalls?: { id: string; ok: boolean }[];
      usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
    };
  };
  const newAgent = async (on: DeployableProcess, extra: Record<string, unknown> = {}) => {
    const created = await call<{ data: { id: string } }>(on, "POST", "/v1/agents", {
      name: "Durable",
      modelProvider: "openai",
      model: "gpt-4o-mini",
      ...extra,
    });
    expect(created.status).toBe(201);
    return created.body.data.id;
  };
  const sendInBackground = async (on: DeployableProcess, agentId: string, text: string) => {
    const accepted = await call<MessageBody>(on, "POST", `/v1/agents/${agentId}/messages`, {
      text,
      background: true,
    });
    expect(accepted.status).toBe(202);
    return accepted.body.data.id;
  };
  const completed = (on: DeployableProcess, agentId: string, id: string) =>
    until(
      () => call<MessageBody>(on, "GET", `/v1/agents/${agentId}/messages/${id}`),
      (res) => res.body.data.status !== "pending",
    );
  /** The distinct message.completed events the webhook endpoint got for the reply `id`. */
  const completions = (id: string) =>
    new Set(
      receiver
        .at("events")
        .filter((r) => {
          const event = JSON.parse(r.body) as { type: string; data: { id: string } };
          return event.type === "message.completed" && event.data.id === id;
        })
        .map((r) => r.headers["webhook-id"]),
    );
  const events = async (on: DeployableProcess, agentId: string, id: string) => {
    const res = await fetch(`${on.url}/v1/agents/${agentId}/messages/${id}/events?after=0`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    return parseEventStream(await res.text()).events;
  };

  let survivor: DeployableProcess;

  beforeAll(async () => {
    ({ dataDir, key } = await seedDataDir("durable-runs"));
    receiver = await Receiver.start();
    counter = await startCounter('{"stock":7}');
    env = {
      DATA_DIR: dataDir,
      PORT: "0",
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: OPENAI_KEY,
      DEFAULT_MODEL_PROVIDER: "openai",
      LOCAL_ENABLED: "false",
      ALLOW_PRIVATE_NETWORKS: "true",
      SECRETS_KEY: randomBytes(32).toString("base64"),
      ...LEASES,
    };
    survivor = await start();
    const hook = await call(survivor, "POST", "/v1/webhooks", {
      url: receiver.url("events"),
      events: ["message.completed"],
    });
    expect(hook.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    for (const started of processes) await started.stop("SIGKILL");
    await receiver?.close();
    counter?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("completes a background message through the other server once its server is killed mid-generation", async () => {
    const doomed = await start();
    const agentId = await newAgent(doomed);
    const before = openai.requests.length;
    openai.answer(slowly(30, 200));
    openai.reply("finished after the takeover");
    const id = await sendInBackground(doomed, agentId, "write slowly");
    await until(
      () => openai.requests.length,
      (n) => n > before,
    );
    await sleep(600);
    await doomed.stop("SIGKILL");

    const done = await completed(survivor, agentId, id);
    expect(done.body.data).toMatchObject({ id, status: "completed", text: "finished after the takeover" });
    expect(openai.requests.length).toBe(before + 2);
    // One reply stored, one message.completed.
    const history = await call<{ data: { id: string; role: string }[] }>(
      survivor,
      "GET",
      `/v1/agents/${agentId}/messages`,
    );
    expect(history.body.data.filter((m) => m.role === "assistant").map((m) => m.id)).toEqual([id]);
    await until(
      () => completions(id).size,
      (n) => n >= 1,
    );
    await sleep(1000);
    expect(completions(id).size).toBe(1);
    // The log goes on where the killed server left it: numbered without a gap, started once, completed once.
    const log = await events(survivor, agentId, id);
    expect(log.map((e) => e.id)).toEqual(log.map((_, i) => String(i + 1)));
    expect(log.filter((e) => e.event === "message.started")).toHaveLength(1);
    expect(log.at(-1)).toMatchObject({
      event: "message.completed",
      data: { id, text: "finished after the takeover" },
    });
    expect(log.filter((e) => e.event === "message.completed")).toHaveLength(1);
  }, 90_000);

  it("does not run a stored tool round again when it takes a run over", async () => {
    const doomed = await start();
    const agentId = await newAgent(doomed, { plugins: [{ name: "http", config: { allow: [counter.url] } }] });
    const before = openai.requests.length;
    counter.reset();
    openai.answer({
      toolCalls: [{ id: "call_stock", name: "http__request", arguments: { url: `${counter.url}stock` } }],
      usage: { input: 11, output: 7 },
    });
    openai.answer(slowly(30, 200));
    openai.reply("seven in stock", { usage: { input: 5, output: 3 } });
    const id = await sendInBackground(doomed, agentId, "how many are in stock?");
    // The tool has run, and the model is answering its outcome.
    await until(
      () => openai.requests.length,
      (n) => n >= before + 2,
    );
    await sleep(600);
    await doomed.stop("SIGKILL");

    const done = await completed(survivor, agentId, id);
    expect(done.body.data).toMatchObject({ status: "completed", text: "seven in stock" });
    expect(done.body.data.toolCalls).toMatchObject([{ id: "call_stock", ok: true }]);
    expect(counter.count).toBe(1);
    // The stored round's tokens, spent by the killed server, are counted; the round it was generating was never
    // reported by the provider, and is generated (and counted) once, by the survivor.
    expect(done.body.data.usage).toEqual({ inputTokens: 16, outputTokens: 10, totalTokens: 26 });
    expect(openai.requests.length).toBe(before + 3);
    // The survivor gave the model the stored outcome.
    const resumed = openai.requests.at(-1)!.body.messages;
    expect(resumed.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_stock" });
    expect(JSON.stringify(resumed)).toContain("stock");
    const log = await events(survivor, agentId, id);
    // Its events log has the stored round once, and goes on after it.
    expect(log.map((e) => e.event).filter((name) => name?.startsWith("tool."))).toEqual([
      "tool.call",
      "tool.result",
    ]);
    expect(log.map((e) => e.id)).toEqual(log.map((_, i) => String(i + 1)));
  }, 90_000);

  it("renews the lease of a long generation: the other server does not take a live run over", async () => {
    const other = await start();
    const agentId = await newAgent(survivor);
    const before = openai.requests.length;
    // Four times the lease.
    openai.answer(slowly(30, 200));
    const id = await sendInBackground(survivor, agentId, "a long one");
    const done = await completed(survivor, agentId, id);
    expect(done.body.data).toMatchObject({
      status: "completed",
      text: expect.stringMatching(/^w1 w2 .* w30 $/),
    });
    expect(openai.requests.length).toBe(before + 1);
    expect(other.lines.some((line) => line.messageId === id)).toBe(false);
    await until(
      () => completions(id).size,
      (n) => n >= 1,
    );
  }, 90_000);
});

describe("conversation services in processes of their own on Postgres", () => {
  let db: TestDatabase;
  let sink: http2.Http2Server;
  const published: { id: string; type: string; data: { id?: string } }[] = [];
  const processes: DeployableProcess[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
    // The webhooks service as the conversation services see it: what they publish from their outbox.
    sink = http2.createServer(
      connectNodeAdapter({
        routes: (router) =>
          router.service(WebhookService, {
            async publishEvents(request) {
              for (const event of request.events) {
                published.push({ id: event.id, type: event.type, data: event.data as { id?: string } });
              }
              return {};
            },
          }),
      }),
    );
    sink.listen(0, "127.0.0.1");
    await new Promise((resolve) => sink.once("listening", resolve));
  }, 60_000);

  afterAll(async () => {
    for (const started of processes) await started.stop("SIGKILL");
    sink?.close();
    await db?.close();
  });

  it("completes a background message through another conversation process once its own is killed", async () => {
    const env = {
      DATABASE_URL: await db.createDatabase(),
      CONVERSATION_PORT: "0",
      DATA_DIR: await mkdtemp(join(tmpdir(), "agentry-durable-split-")),
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: OPENAI_KEY,
      DEFAULT_MODEL_PROVIDER: "openai",
      LOCAL_ENABLED: "false",
      WEBHOOKS_URL: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
      ...LEASES,
    };
    const doomed = await startDeployable("services/conversation", env);
    processes.push(doomed);
    const survivor = await startDeployable("services/conversation", env);
    processes.push(survivor);
    const client = (on: DeployableProcess) =>
      createClient(ConversationService, createConnectTransport({ baseUrl: on.url, httpVersion: "2" }));
    const accountId = "acct_01JDURABLE000000000000000";
    const agent = {
      id: "agt_01JDURABLE000000000000000",
      accountId,
      spec: { name: "Durable", modelProvider: "openai", model: "gpt-4o-mini" },
    };
    const before = openai.requests.length;
    openai.answer(slowly(30, 200));
    openai.reply("finished on the other process");
    const { messageId } = await client(doomed).startMessage({ accountId, agent, text: "write slowly" });
    await until(
      () => openai.requests.length,
      (n) => n > before,
    );
    await sleep(600);
    await doomed.stop("SIGKILL");

    const scope = { accountId, agentId: agent.id, messageId };
    const done = await until(
      () => client(survivor).getMessage(scope),
      (res) => res.background?.status !== MessageStatus.PENDING,
    );
    expect(done.background?.status).toBe(MessageStatus.COMPLETED);
    expect(done.background?.reply).toMatchObject({ id: messageId, text: "finished on the other process" });
    expect(openai.requests.length).toBe(before + 2);
    const stored = await client(survivor).listMessages({ accountId, agentId: agent.id, page: { limit: 10 } });
    expect(stored.messages.filter((m) => m.role === TurnRole.ASSISTANT).map((m) => m.id)).toEqual([
      messageId,
    ]);
    await until(
      () => published.filter((e) => e.type === "message.completed" && e.data.id === messageId).length,
      (n) => n >= 1,
    );
    await sleep(1000);
    const completions = new Set(
      published.filter((e) => e.type === "message.completed" && e.data.id === messageId).map((e) => e.id),
    );
    expect(completions.size).toBe(1);
  }, 120_000);
});
