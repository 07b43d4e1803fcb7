import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CONVERSATION_DB_FILE } from "@agentry/conversation";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonCaller, seedDataDir, startCounter } from "./processes.js";

/*
 * Schedules and paused messages outlive the process that holds them: two all-in-one servers share one SQLite file,
 * one is killed with SIGKILL, and the other carries on. Leases and scans are short here (the production defaults
 * take a run or a fire over within 15 s).
 */
const TIMING = {
  RUN_LEASE_MS: "1500",
  RUN_LEASE_RENEW_MS: "300",
  RUN_TAKEOVER_SCAN_MS: "200",
};
/*
 * Which process claims a due fire is a race between their scans. The survivor scans every second and the doomed
 * server ten times as often, so the doomed one claims nearly every fire while it lives, whatever the machine's load.
 */
const SURVIVOR_SCAN = { SCHEDULE_SCAN_MS: "1000" };
const DOOMED_SCAN = { SCHEDULE_SCAN_MS: "100" };
const OPENAI_KEY = "sk-test-openai";

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

describe("two all-in-one servers on one SQLite file, one killed", () => {
  let openai: FakeProviderServer<OpenAIChatBody>;
  let dataDir: string;
  let key: string;
  let env: Record<string, string>;
  /** Counts the requests the agents' http tool makes. */
  let counter: Awaited<ReturnType<typeof startCounter>>;
  const processes: DeployableProcess[] = [];
  /** The server that outlives the others, started once. */
  let survivor: DeployableProcess;

  const start = async (scan: Record<string, string>) => {
    const started = await startDeployable("apps/server", { ...env, ...scan });
    processes.push(started);
    return started;
  };
  const call = jsonCaller(() => key);
  type MessageBody = {
    data: {
      id: string;
      status: string;
      text?: string;
      usage?: { inputTokens: number; outputTokens: number };
    };
  };
  const newAgent = async (on: DeployableProcess, extra: Record<string, unknown> = {}) => {
    const created = await call<{ data: { id: string } }>(on, "POST", "/v1/agents", {
      name: "Outlives",
      modelProvider: "openai",
      model: "gpt-4o-mini",
      ...extra,
    });
    expect(created.status).toBe(201);
    return created.body.data.id;
  };

  beforeAll(async () => {
    openai = await startFakeOpenAI({ apiKey: OPENAI_KEY });
    ({ dataDir, key } = await seedDataDir("schedules-crash"));
    counter = await startCounter('{"sent":true}');
    env = {
      DATA_DIR: dataDir,
      PORT: "0",
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: OPENAI_KEY,
      DEFAULT_MODEL_PROVIDER: "openai",
      LOCAL_ENABLED: "false",
      ALLOW_PRIVATE_NETWORKS: "true",
      SECRETS_KEY: randomBytes(32).toString("base64"),
      ...TIMING,
    };
    survivor = await start(SURVIVOR_SCAN);
  }, 120_000);

  afterAll(async () => {
    for (const started of processes) await started.stop("SIGKILL");
    counter?.close();
    await openai?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("runs each fire of a schedule every two seconds once, across a SIGKILL of the server generating one", async () => {
    const doomed = await start(DOOMED_SCAN);
    const agentId = await newAgent(survivor);
    // Each reply takes about a second: a fire is still being generated when its server is killed.
    for (let i = 0; i < 40; i += 1)
      openai.answer({ chunks: ["one ", "two ", "three ", "done"], chunkDelayMs: 250 });
    const created = await call<{ data: { id: string } }>(
      survivor,
      "POST",
      `/v1/agents/${agentId}/schedules`,
      {
        cron: "*/2 * * * * *",
        timezone: "UTC",
        text: "tick",
        userId: "cron",
      },
    );
    expect(created.status).toBe(201);
    const scheduleId = created.body.data.id;

    // The doomed server claims a fire and starts generating it; it is killed mid-reply.
    const claimed = await until(
      () => doomed.lines.find((line) => line.msg === "schedule fired" && line.scheduleId === scheduleId),
      (line) => line !== undefined,
      30_000,
    );
    await sleep(400);
    await doomed.stop("SIGKILL");
    // The survivor runs the next fires alone, then the schedule is stopped.
    await sleep(6_000);
    const off = await call(survivor, "PATCH", `/v1/agents/${agentId}/schedules/${scheduleId}`, {
      enabled: false,
    });
    expect(off.status).toBe(200);

    const db = new Database(join(dataDir, CONVERSATION_DB_FILE), { readonly: true });
    let fires: { scheduled_at: string; message_id: string | null; start_by: string | null }[];
    try {
      fires = db
        .prepare<[string], { scheduled_at: string; message_id: string | null; start_by: string | null }>(
          "SELECT scheduled_at, message_id, start_by FROM schedule_fires WHERE schedule_id = ? ORDER BY scheduled_at",
        )
        .all(scheduleId);
    } finally {
      db.close();
    }
    expect(fires.length).toBeGreaterThanOrEqual(3);
    expect(fires.map((fire) => fire.message_id)).toContain(claimed!.messageId);
    for (const fire of fires) {
      expect(new Date(fire.scheduled_at).getUTCSeconds() % 2).toBe(0);
      expect(fire.message_id).not.toBeNull();
    }
    // Every fire's message completes, the killed server's included, and each is stored once.
    for (const fire of fires) {
      const done = await until(
        () => call<MessageBody>(survivor, "GET", `/v1/agents/${agentId}/messages/${fire.message_id}`),
        (res) => res.body.data.status !== "pending",
      );
      expect(done.body.data).toMatchObject({ status: "completed", text: "one two three done" });
    }
    const history = await call<{ data: { id: string; role: string }[] }>(
      survivor,
      "GET",
      `/v1/agents/${agentId}/messages?userId=cron&limit=100`,
    );
    const replies = history.body.data.filter((m) => m.role === "assistant").map((m) => m.id);
    expect(replies.sort()).toEqual(fires.map((fire) => fire.message_id).sort());
    // Every two-second tick from the first fire to the last ran once, or was skipped (a scan more than a tick
    // late on a loaded machine) and counted.
    const read = await call<{ data: { skippedFires: number } }>(
      survivor,
      "GET",
      `/v1/agents/${agentId}/schedules/${scheduleId}`,
    );
    const span = (Date.parse(fires.at(-1)!.scheduled_at) - Date.parse(fires[0]!.scheduled_at)) / 2000 + 1;
    expect(fires.length + read.body.data.skippedFires).toBeGreaterThanOrEqual(span);
  }, 120_000);

  it("resumes a message paused for approval on the other server once its own is killed", async () => {
    const doomed = await start(DOOMED_SCAN);
    const agentId = await newAgent(doomed, {
      plugins: [{ name: "http", config: { allow: [counter.url] }, requireApproval: true }],
    });
    openai.reset();
    counter.reset();
    openai.callTools([{ id: "call_send", name: "http__request", arguments: { url: `${counter.url}send` } }], {
      usage: { input: 21, output: 9 },
    });
    openai.reply("sent it", { usage: { input: 13, output: 2 } });
    const accepted = await call<MessageBody>(doomed, "POST", `/v1/agents/${agentId}/messages`, {
      text: "send it",
      background: true,
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.data.id;
    await until(
      () => call<MessageBody>(doomed, "GET", `/v1/agents/${agentId}/messages/${id}`),
      (res) => res.body.data.status === "requires_action",
    );
    await doomed.stop("SIGKILL");

    const approved = await call<MessageBody>(
      survivor,
      "POST",
      `/v1/agents/${agentId}/messages/${id}/approve`,
      {
        toolCallIds: ["call_send"],
        approve: true,
      },
    );
    expect(approved.status).toBe(200);
    const done = await until(
      () => call<MessageBody>(survivor, "GET", `/v1/agents/${agentId}/messages/${id}`),
      (res) => res.body.data.status !== "pending",
    );
    expect(done.body.data).toMatchObject({ status: "completed", text: "sent it" });
    expect(done.body.data.usage).toMatchObject({ inputTokens: 34, outputTokens: 11 });
    expect(counter.count).toBe(1);
    expect(openai.requests).toHaveLength(2);
    // Usage counts the message once and each of its tokens once: those before the pause (counted by the killed
    // server as it paused) and those after.
    const usage = await call<{
      data: { totals: { messages: number; inputTokens: number; outputTokens: number } };
    }>(survivor, "GET", `/v1/agents/${agentId}/usage`);
    expect(usage.body.data.totals).toMatchObject({ messages: 1, inputTokens: 34, outputTokens: 11 });
  }, 120_000);
});
