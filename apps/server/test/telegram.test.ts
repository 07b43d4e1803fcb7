import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APOLOGY } from "@agentry/connectors";
import { type FakeTelegram, startFakeTelegram } from "@agentry/connectors/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, PUBLIC_BASE_URL, startHarness, type Tenant } from "./harness.js";

/*
 * Agents on Telegram through the whole all-in-one server: the embedded connectors read agents and their
 * TELEGRAM_BOT_TOKEN from the registry, poll a local fake of the Bot API with grammY, and answer each message with
 * a turn of the conversation service, whose model is the fake OpenAI server.
 */

let openai: FakeProviderServer<OpenAIChatBody>;
let telegram: FakeTelegram;
let h: Harness;
let tenant: Tenant;
let bots = 0;

const serverEnv = () => ({
  OPENAI_BASE_URL: openai.baseURL,
  OPENAI_API_KEY: "sk-test-openai",
  DEFAULT_MODEL_PROVIDER: "openai",
  TELEGRAM_API_URL: telegram.url,
  CONNECTORS_SYNC_INTERVAL_MS: "250",
  CONNECTORS_LEASE_MS: "3000",
});

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  telegram = await startFakeTelegram();
  h = await startHarness(serverEnv());
  tenant = await h.tenant();
});
afterAll(async () => {
  await h?.close();
  await telegram?.close();
  await openai?.close();
});
beforeEach(() => openai.reset());

async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, ms = 8_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An agent on Telegram with a bot of its own, polling. */
async function telegramAgent(
  on: Harness = h,
  clients: unknown[] = ["telegram"],
): Promise<{ id: string; token: string; username: string }> {
  const token = `${++bots}:test-token-${Date.now()}`;
  const username = `agentry_test_${bots}_bot`;
  telegram.addBot(token, username);
  const created = await on.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: `Tele ${bots}`, clients },
  });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  const secret = await on.request("PUT", `/v1/agents/${id}/secrets/TELEGRAM_BOT_TOKEN`, {
    key: tenant.key,
    body: { value: token },
  });
  expect(secret.status).toBe(200);
  await until(
    () => telegram.activePolls(token),
    (n) => n > 0,
  );
  return { id, token, username };
}

describe("Telegram", () => {
  it("answers a private message once, as a reply, typing while it generates", async () => {
    const bot = await telegramAgent();
    openai.reply("Hello from the agent.", { delayMs: 300 });
    const { messageId } = telegram.send(bot.token, {
      chat: { id: 501, type: "private" },
      from: { id: 501, username: "ada" },
      text: "Hi there",
    });
    const sent = await until(
      () => telegram.sent(bot.token),
      (messages) => messages.length > 0,
    );
    expect(sent).toEqual([
      { token: bot.token, chatId: 501, text: "Hello from the agent.", replyTo: messageId },
    ]);
    expect(telegram.chatActions(bot.token)).toContainEqual({
      token: bot.token,
      chatId: 501,
      action: "typing",
    });
    // The turn is the conversation's like any other: the model saw the user's words once.
    expect(openai.requests).toHaveLength(1);
    expect(JSON.stringify(openai.requests[0]?.body)).toContain("Hi there");
    await until(
      () => telegram.pending(bot.token),
      (n) => n === 0,
    );
    await quiet(500);
    expect(telegram.sent(bot.token)).toHaveLength(1);
    expect(openai.requests).toHaveLength(1);
  });

  it("answers in a group only when mentioned or replied to, and never a bot", async () => {
    const bot = await telegramAgent();
    const group = { id: -9001, type: "group" as const };
    telegram.send(bot.token, { chat: group, from: { id: 11 }, text: "just chatting" });
    telegram.send(bot.token, { chat: group, from: { id: 12, is_bot: true }, text: `@${bot.username} hi` });
    const mentioned = telegram.send(bot.token, {
      chat: group,
      from: { id: 13 },
      text: `@${bot.username} what time is it?`,
      mentionBot: true,
    });
    const replied = telegram.send(bot.token, {
      chat: group,
      from: { id: 14 },
      text: "thanks",
      replyToBot: true,
    });
    const sent = await until(
      () => telegram.sent(bot.token),
      (messages) => messages.length >= 2,
    );
    await until(
      () => telegram.pending(bot.token),
      (n) => n === 0,
    );
    expect(sent.map((message) => message.replyTo).sort()).toEqual(
      [mentioned.messageId, replied.messageId].sort(),
    );
    // The bot's @name is left out of what the model reads.
    expect(openai.requests.map((request) => JSON.stringify(request.body)).join()).toContain(
      "what time is it?",
    );
    expect(openai.requests).toHaveLength(2);
  });

  it("splits a long reply at paragraph boundaries within 4,096 characters", async () => {
    const bot = await telegramAgent();
    const paragraphs = [`${"a".repeat(3000)}.`, `${"b".repeat(3000)}.`, "The end."];
    openai.reply(paragraphs.join("\n\n"));
    telegram.send(bot.token, { chat: { id: 502, type: "private" }, text: "Tell me everything" });
    const sent = await until(
      () => telegram.sent(bot.token),
      (messages) => messages.length >= 2,
    );
    await until(
      () => telegram.pending(bot.token),
      (n) => n === 0,
    );
    expect(telegram.sent(bot.token).map((message) => message.text)).toEqual([
      paragraphs[0],
      `${paragraphs[1]}\n\n${paragraphs[2]}`,
    ]);
    expect(sent.every((message) => message.text.length <= 4096)).toBe(true);
  });

  it("answers a failed turn with one short apology, not retried", async () => {
    const bot = await telegramAgent();
    openai.failWith(400, { message: "bad request" });
    const { messageId } = telegram.send(bot.token, {
      chat: { id: 510, type: "private" },
      text: "Break, please",
    });
    await until(
      () => telegram.sent(bot.token),
      (messages) => messages.length === 1,
    );
    expect(telegram.sent(bot.token)).toEqual([
      { token: bot.token, chatId: 510, text: APOLOGY, replyTo: messageId },
    ]);
    await until(
      () => telegram.pending(bot.token),
      (n) => n === 0,
    );
    await quiet(500);
    expect(telegram.sent(bot.token)).toHaveLength(1);
    expect(openai.requests).toHaveLength(1);
  });

  it("waits out a 429's retry_after and still replies once", async () => {
    const bot = await telegramAgent();
    telegram.rateLimit("sendMessage", 1);
    const before = telegram.calls("sendMessage").length;
    telegram.send(bot.token, { chat: { id: 503, type: "private" }, text: "Ping" });
    await until(
      () => telegram.sent(bot.token),
      (messages) => messages.length === 1,
    );
    const calls = telegram.calls("sendMessage").slice(before);
    expect(calls.map((call) => call.status)).toEqual([429, 200]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it("marks the agent error with CLIENT_AUTH_FAILED for a rejected token, and runs again on a new one", async () => {
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Rejected", clients: ["telegram"] },
    });
    const id = created.body.data.id;
    await h.request("PUT", `/v1/agents/${id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: tenant.key,
      body: { value: "0:not-a-token" },
    });
    const failed = await until(
      async () =>
        (
          await h.request<{ data: { status: string; statusReason: { code: string } | null } }>(
            "GET",
            `/v1/agents/${id}`,
            { key: tenant.key },
          )
        ).body.data,
      (agent) => agent.status === "error",
    );
    expect(failed.statusReason?.code).toBe("CLIENT_AUTH_FAILED");
    const clients = await h.request<{ data: { state: string; lastError: { code: string } | null }[] }>(
      "GET",
      `/v1/agents/${id}/clients`,
      { key: tenant.key },
    );
    expect(clients.body.data[0]).toMatchObject({
      state: "failed",
      lastError: { code: "CLIENT_AUTH_FAILED" },
    });

    const token = `${++bots}:fixed-token`;
    telegram.addBot(token, `agentry_fixed_${bots}_bot`);
    await h.request("PUT", `/v1/agents/${id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: tenant.key,
      body: { value: token },
    });
    await until(
      async () =>
        (await h.request<{ data: { status: string } }>("GET", `/v1/agents/${id}`, { key: tenant.key })).body
          .data.status,
      (status) => status === "active",
    );
    telegram.send(token, { chat: { id: 504, type: "private" }, text: "Are you there?" });
    await until(
      () => telegram.sent(token),
      (messages) => messages.length === 1,
    );
  });

  it("stops polling within 5 s of deactivation, and of delete", async () => {
    const bot = await telegramAgent();
    const patched = await h.request("PATCH", `/v1/agents/${bot.id}`, {
      key: tenant.key,
      body: { status: "inactive" },
    });
    expect(patched.status).toBe(200);
    await until(
      () => telegram.activePolls(bot.token),
      (n) => n === 0,
      5_000,
    );
    telegram.send(bot.token, { chat: { id: 505, type: "private" }, text: "Anyone?" });
    await quiet(800);
    expect(telegram.sent(bot.token)).toEqual([]);

    await h.request("PATCH", `/v1/agents/${bot.id}`, { key: tenant.key, body: { status: "active" } });
    await until(
      () => telegram.sent(bot.token),
      (messages) => messages.length === 1,
    );
    expect((await h.request("DELETE", `/v1/agents/${bot.id}`, { key: tenant.key })).status).toBe(200);
    await until(
      () => telegram.activePolls(bot.token),
      (n) => n === 0,
      5_000,
    );
  });

  it("stops polling when telegram leaves clients or the token is deleted", async () => {
    const bot = await telegramAgent();
    await h.request("DELETE", `/v1/agents/${bot.id}/secrets/TELEGRAM_BOT_TOKEN`, { key: tenant.key });
    await until(
      () => telegram.activePolls(bot.token),
      (n) => n === 0,
      5_000,
    );
    const other = await telegramAgent();
    await h.request("PATCH", `/v1/agents/${other.id}`, { key: tenant.key, body: { clients: ["discordx"] } });
    await until(
      () => telegram.activePolls(other.token),
      (n) => n === 0,
      5_000,
    );
  });
});

describe("Telegram in webhook mode", () => {
  it("registers the gateway's route with a secret, answers pushed updates, and refuses any other secret", async () => {
    const token = `${++bots}:webhook-token`;
    const username = `agentry_hook_${bots}_bot`;
    telegram.addBot(token, username);
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Hooked", clients: [{ type: "telegram", mode: "webhook" }] },
    });
    const id = created.body.data.id;
    await h.request("PUT", `/v1/agents/${id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: tenant.key,
      body: { value: token },
    });
    const webhook = await until(
      () => telegram.webhook(token),
      (registered) => registered !== undefined,
    );
    expect(webhook?.url).toBe(`${PUBLIC_BASE_URL}/v1/connectors/telegram/${id}`);
    expect(webhook?.secretToken).toMatch(/^[A-Za-z0-9_-]{1,256}$/);
    expect(telegram.activePolls(token)).toBe(0);

    const update = {
      update_id: 1,
      message: {
        message_id: 77,
        date: Math.floor(Date.now() / 1000),
        chat: { id: 601, type: "private" },
        from: { id: 601, is_bot: false, first_name: "Ada", username: "ada" },
        text: "Pushed hello",
      },
    };
    const path = `/v1/connectors/telegram/${id}`;
    const forged = await h.request<{ error: { code: string } }>("POST", path, {
      body: update,
      headers: { "x-telegram-bot-api-secret-token": "not-the-secret" },
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("UNAUTHORIZED");
    expect((await h.request("POST", path, { body: update })).status).toBe(401);
    expect(telegram.sent(token)).toEqual([]);

    const secret = { "x-telegram-bot-api-secret-token": webhook!.secretToken! };
    expect((await h.request("POST", path, { body: update, headers: secret })).status).toBe(200);
    expect(telegram.sent(token)).toEqual([{ token, chatId: 601, text: "Echo: Pushed hello", replyTo: 77 }]);
    // Telegram retries an update whose answer it missed: answered once all the same.
    expect((await h.request("POST", path, { body: update, headers: secret })).status).toBe(200);
    expect(telegram.sent(token)).toHaveLength(1);
    expect(openai.requests).toHaveLength(1);
  });
});

describe("GET /v1/agents/{agentId}/clients", () => {
  it("tells each client's state, inert for platforms not run, only to its account with agents:read", async () => {
    const bot = await telegramAgent(h, ["telegram", "twitter"]);
    const listed = await h.request<{ data: Record<string, unknown>[] }>(
      "GET",
      `/v1/agents/${bot.id}/clients`,
      {
        key: tenant.key,
      },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        type: "telegram",
        state: "connected",
        connectedAt: expect.any(String),
        lastEventAt: null,
        lastError: null,
      },
      { type: "twitter", state: "inert", connectedAt: null, lastEventAt: null, lastError: null },
    ]);

    const stranger = await h.tenant();
    const hidden = await h.request<{ error: { code: string } }>("GET", `/v1/agents/${bot.id}/clients`, {
      key: stranger.key,
    });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe("AGENT_NOT_FOUND");
    const { key } = await tenant.keyWith(["messages:send"]);
    expect((await h.request("GET", `/v1/agents/${bot.id}/clients`, { key })).status).toBe(403);
    expect((await h.request("GET", `/v1/agents/${bot.id}/clients`, { key: null })).status).toBe(401);
  });
});

describe("Telegram across a restart", () => {
  it("answers an update in flight exactly once when the server stops and starts again", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentry-telegram-restart-"));
    try {
      const first = await startHarness({ ...serverEnv(), DATA_DIR: dataDir });
      const owner = await first.tenant();
      const token = `${++bots}:restart-token`;
      telegram.addBot(token, `agentry_restart_${bots}_bot`);
      const created = await first.request<{ data: { id: string } }>("POST", "/v1/agents", {
        key: owner.key,
        body: { name: "Restart", clients: ["telegram"] },
      });
      await first.request("PUT", `/v1/agents/${created.body.data.id}/secrets/TELEGRAM_BOT_TOKEN`, {
        key: owner.key,
        body: { value: token },
      });
      await until(
        () => telegram.activePolls(token),
        (n) => n > 0,
      );
      openai.reply("Slow but sure.", { delayMs: 800 });
      openai.reply("Second answer.");
      telegram.send(token, { chat: { id: 506, type: "private" }, text: "First" });
      // The first message is in the model's hands when the server is told to stop.
      await until(
        () => openai.requests.length,
        (n) => n === 1,
      );
      telegram.send(token, { chat: { id: 506, type: "private" }, text: "Second" });
      await first.close();
      expect(telegram.activePolls(token)).toBe(0);

      const second = await startHarness({ ...serverEnv(), DATA_DIR: dataDir });
      try {
        await until(
          () => telegram.sent(token),
          (messages) => messages.length >= 2,
        );
        await until(
          () => telegram.pending(token),
          (n) => n === 0,
        );
        await quiet(500);
        expect(telegram.sent(token).map((message) => message.text)).toEqual([
          "Slow but sure.",
          "Second answer.",
        ]);
        expect(openai.requests).toHaveLength(2);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
