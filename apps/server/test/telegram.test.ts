import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APOLOGY, BUDGET_SPENT } from "@agentry/connectors";
import { startFakeTelegram } from "@agentry/connectors/testing";
import { describe, expect, it } from "vitest";
import { agentState, connectorServer, platformAgent, quiet, until } from "./connectors.js";
import { type Harness, PUBLIC_BASE_URL, startHarness } from "./harness.js";

/*
 * Agents on Telegram through the whole all-in-one server: the embedded connectors read agents and their
 * TELEGRAM_BOT_TOKEN from the registry, poll a local fake of the Bot API with grammY, and answer each message with
 * a turn of the conversation service, whose model is the fake OpenAI server.
 */

const server = connectorServer(startFakeTelegram, (fake) => ({
  TELEGRAM_API_URL: fake.url,
  CONNECTORS_LEASE_MS: "3000",
  SCHEDULE_SCAN_MS: "200",
}));
let bots = 0;

/** An agent on Telegram with a bot of its own, polling. */
async function telegramAgent(
  on: Harness = server.h,
  clients: unknown[] = ["telegram"],
): Promise<{ id: string; token: string; username: string }> {
  const token = `${++bots}:test-token-${Date.now()}`;
  const username = `agentry_test_${bots}_bot`;
  server.fake.addBot(token, username);
  const id = await platformAgent(
    on,
    server.tenant,
    { name: `Tele ${bots}`, clients },
    { TELEGRAM_BOT_TOKEN: token },
  );
  await until(
    () => server.fake.activePolls(token),
    (n) => n > 0,
  );
  return { id, token, username };
}

describe("Telegram", () => {
  it("answers a private message once, as a reply, typing while it generates", async () => {
    const bot = await telegramAgent();
    server.openai.reply("Hello from the agent.", { delayMs: 300 });
    const { messageId } = server.fake.send(bot.token, {
      chat: { id: 501, type: "private" },
      from: { id: 501, username: "ada" },
      text: "Hi there",
    });
    const sent = await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length > 0,
    );
    expect(sent).toEqual([
      { token: bot.token, chatId: 501, text: "Hello from the agent.", replyTo: messageId },
    ]);
    expect(server.fake.chatActions(bot.token)).toContainEqual({
      token: bot.token,
      chatId: 501,
      action: "typing",
    });
    // The turn is the conversation's like any other: the model saw the user's words once.
    expect(server.openai.requests).toHaveLength(1);
    expect(JSON.stringify(server.openai.requests[0]?.body)).toContain("Hi there");
    await until(
      () => server.fake.pending(bot.token),
      (n) => n === 0,
    );
    await quiet(500);
    expect(server.fake.sent(bot.token)).toHaveLength(1);
    expect(server.openai.requests).toHaveLength(1);
  });

  it("answers in a group only when mentioned or replied to, and never a bot", async () => {
    const bot = await telegramAgent();
    const group = { id: -9001, type: "group" as const };
    server.fake.send(bot.token, { chat: group, from: { id: 11 }, text: "just chatting" });
    server.fake.send(bot.token, { chat: group, from: { id: 12, is_bot: true }, text: `@${bot.username} hi` });
    const mentioned = server.fake.send(bot.token, {
      chat: group,
      from: { id: 13 },
      text: `@${bot.username} what time is it?`,
      mentionBot: true,
    });
    const replied = server.fake.send(bot.token, {
      chat: group,
      from: { id: 14 },
      text: "thanks",
      replyToBot: true,
    });
    const sent = await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length >= 2,
    );
    await until(
      () => server.fake.pending(bot.token),
      (n) => n === 0,
    );
    expect(sent.map((message) => message.replyTo).sort()).toEqual(
      [mentioned.messageId, replied.messageId].sort(),
    );
    // The bot's @name is left out of what the model reads.
    expect(server.openai.requests.map((request) => JSON.stringify(request.body)).join()).toContain(
      "what time is it?",
    );
    expect(server.openai.requests).toHaveLength(2);
  });

  it("splits a long reply at paragraph boundaries within 4,096 characters", async () => {
    const bot = await telegramAgent();
    const paragraphs = [`${"a".repeat(3000)}.`, `${"b".repeat(3000)}.`, "The end."];
    server.openai.reply(paragraphs.join("\n\n"));
    server.fake.send(bot.token, { chat: { id: 502, type: "private" }, text: "Tell me everything" });
    const sent = await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length >= 2,
    );
    await until(
      () => server.fake.pending(bot.token),
      (n) => n === 0,
    );
    expect(server.fake.sent(bot.token).map((message) => message.text)).toEqual([
      paragraphs[0],
      `${paragraphs[1]}\n\n${paragraphs[2]}`,
    ]);
    expect(sent.every((message) => message.text.length <= 4096)).toBe(true);
  });

  it("answers a failed turn with one short apology, not retried", async () => {
    const bot = await telegramAgent();
    server.openai.failWith(400, { message: "bad request" });
    const { messageId } = server.fake.send(bot.token, {
      chat: { id: 510, type: "private" },
      text: "Break, please",
    });
    await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length === 1,
    );
    expect(server.fake.sent(bot.token)).toEqual([
      { token: bot.token, chatId: 510, text: APOLOGY, replyTo: messageId },
    ]);
    await until(
      () => server.fake.pending(bot.token),
      (n) => n === 0,
    );
    await quiet(500);
    expect(server.fake.sent(bot.token)).toHaveLength(1);
    expect(server.openai.requests).toHaveLength(1);
  });

  it("tells the chat the agent's budget is spent, without calling the model, once it is", async () => {
    const bot = await telegramAgent();
    const budget = await server.h.request("POST", "/v1/budgets", {
      key: server.tenant.key,
      body: { unit: "tokens", limit: 12, period: "day", agentId: bot.id },
    });
    expect(budget.status).toBe(201);
    server.openai.answer({ text: "Spent it all.", usage: { input: 10, output: 2 } });
    server.fake.send(bot.token, { chat: { id: 512, type: "private" }, text: "First" });
    await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length === 1,
    );
    const { messageId } = server.fake.send(bot.token, { chat: { id: 512, type: "private" }, text: "Second" });
    const sent = await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length === 2,
    );
    expect(sent.map((message) => message.text)).toEqual(["Spent it all.", BUDGET_SPENT]);
    expect(sent[1]?.replyTo).toBe(messageId);
    expect(server.openai.requests).toHaveLength(1);
    await until(
      () => server.fake.pending(bot.token),
      (n) => n === 0,
    );
    await quiet(500);
    expect(server.fake.sent(bot.token)).toHaveLength(2);
  });

  it("waits out a 429's retry_after and still replies once", async () => {
    const bot = await telegramAgent();
    server.fake.rateLimit("sendMessage", 1);
    const before = server.fake.calls("sendMessage").length;
    server.fake.send(bot.token, { chat: { id: 503, type: "private" }, text: "Ping" });
    await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length === 1,
    );
    const calls = server.fake.calls("sendMessage").slice(before);
    expect(calls.map((call) => call.status)).toEqual([429, 200]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it("marks the agent error with CLIENT_AUTH_FAILED for a rejected token, and runs again on a new one", async () => {
    const created = await server.h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: server.tenant.key,
      body: { name: "Rejected", clients: ["telegram"] },
    });
    const id = created.body.data.id;
    await server.h.request("PUT", `/v1/agents/${id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: server.tenant.key,
      body: { value: "0:not-a-token" },
    });
    const failed = await until(
      () => agentState(server.h, server.tenant, id),
      (agent) => agent.status === "error",
    );
    expect(failed.statusReason?.code).toBe("CLIENT_AUTH_FAILED");
    const clients = await server.h.request<{ data: { state: string; lastError: { code: string } | null }[] }>(
      "GET",
      `/v1/agents/${id}/clients`,
      { key: server.tenant.key },
    );
    expect(clients.body.data[0]).toMatchObject({
      state: "failed",
      lastError: { code: "CLIENT_AUTH_FAILED" },
    });

    const token = `${++bots}:fixed-token`;
    server.fake.addBot(token, `agentry_fixed_${bots}_bot`);
    await server.h.request("PUT", `/v1/agents/${id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: server.tenant.key,
      body: { value: token },
    });
    await until(
      () => agentState(server.h, server.tenant, id),
      (agent) => agent.status === "active",
    );
    server.fake.send(token, { chat: { id: 504, type: "private" }, text: "Are you there?" });
    await until(
      () => server.fake.sent(token),
      (messages) => messages.length === 1,
    );
  });

  it("stops polling within 5 s of deactivation, and of delete", async () => {
    const bot = await telegramAgent();
    const patched = await server.h.request("PATCH", `/v1/agents/${bot.id}`, {
      key: server.tenant.key,
      body: { status: "inactive" },
    });
    expect(patched.status).toBe(200);
    await until(
      () => server.fake.activePolls(bot.token),
      (n) => n === 0,
      5_000,
    );
    server.fake.send(bot.token, { chat: { id: 505, type: "private" }, text: "Anyone?" });
    await quiet(800);
    expect(server.fake.sent(bot.token)).toEqual([]);

    await server.h.request("PATCH", `/v1/agents/${bot.id}`, {
      key: server.tenant.key,
      body: { status: "active" },
    });
    await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length === 1,
    );
    expect(
      (await server.h.request("DELETE", `/v1/agents/${bot.id}`, { key: server.tenant.key })).status,
    ).toBe(200);
    await until(
      () => server.fake.activePolls(bot.token),
      (n) => n === 0,
      5_000,
    );
  });

  it("stops polling when telegram leaves clients or the token is deleted", async () => {
    const bot = await telegramAgent();
    await server.h.request("DELETE", `/v1/agents/${bot.id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: server.tenant.key,
    });
    await until(
      () => server.fake.activePolls(bot.token),
      (n) => n === 0,
      5_000,
    );
    const other = await telegramAgent();
    await server.h.request("PATCH", `/v1/agents/${other.id}`, {
      key: server.tenant.key,
      body: { clients: ["discordx"] },
    });
    await until(
      () => server.fake.activePolls(other.token),
      (n) => n === 0,
      5_000,
    );
  });
});

describe("Telegram in webhook mode", () => {
  it("registers the gateway's route with a secret, answers pushed updates, and refuses any other secret", async () => {
    const token = `${++bots}:webhook-token`;
    const username = `agentry_hook_${bots}_bot`;
    server.fake.addBot(token, username);
    const created = await server.h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: server.tenant.key,
      body: { name: "Hooked", clients: [{ type: "telegram", mode: "webhook" }] },
    });
    const id = created.body.data.id;
    await server.h.request("PUT", `/v1/agents/${id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: server.tenant.key,
      body: { value: token },
    });
    const webhook = await until(
      () => server.fake.webhook(token),
      (registered) => registered !== undefined,
    );
    expect(webhook?.url).toBe(`${PUBLIC_BASE_URL}/v1/connectors/telegram/${id}`);
    expect(webhook?.secretToken).toMatch(/^[A-Za-z0-9_-]{1,256}$/);
    expect(server.fake.activePolls(token)).toBe(0);

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
    const forged = await server.h.request<{ error: { code: string } }>("POST", path, {
      body: update,
      headers: { "x-telegram-bot-api-secret-token": "not-the-secret" },
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("UNAUTHORIZED");
    expect((await server.h.request("POST", path, { body: update })).status).toBe(401);
    expect(server.fake.sent(token)).toEqual([]);

    const secret = { "x-telegram-bot-api-secret-token": webhook!.secretToken! };
    expect((await server.h.request("POST", path, { body: update, headers: secret })).status).toBe(200);
    expect(server.fake.sent(token)).toEqual([
      { token, chatId: 601, text: "Echo: Pushed hello", replyTo: 77 },
    ]);
    // Telegram retries an update whose answer it missed: answered once all the same.
    expect((await server.h.request("POST", path, { body: update, headers: secret })).status).toBe(200);
    expect(server.fake.sent(token)).toHaveLength(1);
    expect(server.openai.requests).toHaveLength(1);
  });
});

describe("GET /v1/agents/{agentId}/clients", () => {
  it("tells each client's state, inert for platforms not run, only to its account with agents:read", async () => {
    const bot = await telegramAgent(server.h, ["telegram", "twitter"]);
    const listed = await server.h.request<{ data: Record<string, unknown>[] }>(
      "GET",
      `/v1/agents/${bot.id}/clients`,
      {
        key: server.tenant.key,
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

    const stranger = await server.h.tenant();
    const hidden = await server.h.request<{ error: { code: string } }>(
      "GET",
      `/v1/agents/${bot.id}/clients`,
      {
        key: stranger.key,
      },
    );
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe("AGENT_NOT_FOUND");
    const { key } = await server.tenant.keyWith(["messages:send"]);
    expect((await server.h.request("GET", `/v1/agents/${bot.id}/clients`, { key })).status).toBe(403);
    expect((await server.h.request("GET", `/v1/agents/${bot.id}/clients`, { key: null })).status).toBe(401);
  });
  it("posts a schedule's reply to the Telegram chat its roomId names, once", async () => {
    const bot = await telegramAgent();
    server.openai.reply("Good morning: three deploys are waiting.");
    // A 6-field expression naming one second a few seconds from now, so the schedule fires exactly once.
    const at = new Date(Date.now() + 3_000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
    const created = (await server.h.request("POST", `/v1/agents/${bot.id}/schedules`, {
      key: server.tenant.key,
      body: { cron, timezone: "UTC", text: "Post the morning summary.", roomId: "telegram:-4242" },
    })) as { status: number; body: { data: { id: string } } };
    expect(created.status).toBe(201);
    const sent = await until(
      () => server.fake.sent(bot.token),
      (messages) => messages.length > 0,
      15_000,
    );
    // Not a reply to any message of the chat: no one asked for it.
    expect(sent).toEqual([
      {
        token: bot.token,
        chatId: -4242,
        text: "Good morning: three deploys are waiting.",
        replyTo: undefined,
      },
    ]);
    const read = (await server.h.request("GET", `/v1/agents/${bot.id}/schedules/${created.body.data.id}`, {
      key: server.tenant.key,
    })) as { body: { data: { lastFire: { status: string; messageId: string } | null } } };
    expect(read.body.data.lastFire?.status).toBe("completed");
    // Every process looks on each sync; the claim lets one send it, once.
    await quiet(1_500);
    expect(server.fake.sent(bot.token)).toHaveLength(1);
    expect(server.openai.requests).toHaveLength(1);
  });
});

describe("Telegram across a restart", () => {
  it("answers an update in flight exactly once when the server stops and starts again", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentry-telegram-restart-"));
    try {
      const first = await startHarness({ ...server.env, DATA_DIR: dataDir });
      const owner = await first.tenant();
      const token = `${++bots}:restart-token`;
      server.fake.addBot(token, `agentry_restart_${bots}_bot`);
      const created = await first.request<{ data: { id: string } }>("POST", "/v1/agents", {
        key: owner.key,
        body: { name: "Restart", clients: ["telegram"] },
      });
      await first.request("PUT", `/v1/agents/${created.body.data.id}/secrets/TELEGRAM_BOT_TOKEN`, {
        key: owner.key,
        body: { value: token },
      });
      await until(
        () => server.fake.activePolls(token),
        (n) => n > 0,
      );
      server.openai.reply("Slow but sure.", { delayMs: 800 });
      server.openai.reply("Second answer.");
      server.fake.send(token, { chat: { id: 506, type: "private" }, text: "First" });
      // The first message is in the model's hands when the server is told to stop.
      await until(
        () => server.openai.requests.length,
        (n) => n === 1,
      );
      server.fake.send(token, { chat: { id: 506, type: "private" }, text: "Second" });
      await first.close();
      expect(server.fake.activePolls(token)).toBe(0);

      const second = await startHarness({ ...server.env, DATA_DIR: dataDir });
      try {
        await until(
          () => server.fake.sent(token),
          (messages) => messages.length >= 2,
        );
        await until(
          () => server.fake.pending(token),
          (n) => n === 0,
        );
        await quiet(500);
        expect(server.fake.sent(token).map((message) => message.text)).toEqual([
          "Slow but sure.",
          "Second answer.",
        ]);
        expect(server.openai.requests).toHaveLength(2);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
