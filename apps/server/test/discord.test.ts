import { APOLOGY } from "@agentry/connectors";
import { startFakeDiscord } from "@agentry/connectors/testing";
import { describe, expect, it } from "vitest";
import {
  agentState,
  clientStates,
  connectorServer,
  platformAgent,
  putSecret,
  quiet,
  until,
} from "./connectors.js";

/*
 * Agents on Discord through the whole all-in-one server: the embedded connectors read agents and their
 * DISCORD_BOT_TOKEN from the registry, hold a gateway session with discord.js against a local fake of Discord
 * (REST and a WebSocket gateway speaking its opcodes), and answer each message with a turn of the conversation
 * service, whose model is the fake OpenAI server.
 */

const server = connectorServer(startFakeDiscord, (fake) => ({
  DISCORD_API_URL: fake.url,
  DISCORD_GATEWAY_URL: fake.gatewayUrl,
  CONNECTORS_LEASE_MS: "3000",
  SCHEDULE_SCAN_MS: "200",
}));
let bots = 0;

const GUILD = "710000000000000001";
const CHANNEL = "720000000000000001";
const DM = "730000000000000001";

/** An agent on Discord with a bot of its own, its gateway session open. */
async function discordAgent(
  clients: unknown[] = ["discord"],
): Promise<{ id: string; token: string; botId: string }> {
  const token = `discord-token-${++bots}-${Date.now()}`;
  const { id: botId } = server.fake.addBot(token, `agentry_${bots}`);
  server.fake.addGuild(token, GUILD, [CHANNEL]);
  const id = await platformAgent(
    server.h,
    server.tenant,
    { name: `Disco ${bots}`, clients },
    { DISCORD_BOT_TOKEN: token },
  );
  await until(
    () => clientStates(server.h, server.tenant, id),
    (clients) => clients[0]?.state === "connected",
  );
  return { id, token, botId };
}

describe("Discord", () => {
  it("answers a DM once, as a reply, typing while it generates", async () => {
    const bot = await discordAgent();
    const identify = server.fake.received(bot.token).find((payload) => payload.op === 2);
    // Guild messages, DMs and their content: the intents the agent needs (Guilds, GuildMessages, DirectMessages,
    // MessageContent).
    expect(identify?.d).toMatchObject({ intents: 1 | 512 | 4096 | 32768 });
    server.openai.reply("Hello from the agent.", { delayMs: 300 });
    const { messageId } = server.fake.send(bot.token, {
      channelId: DM,
      author: { id: "501", username: "ada" },
      content: "Hi there",
    });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length > 0,
    );
    await quiet(500);
    expect(server.fake.posts(bot.token)).toEqual([
      { token: bot.token, channelId: DM, content: "Hello from the agent.", replyTo: messageId },
    ]);
    expect(server.fake.typing(bot.token)).toContain(DM);
    expect(server.openai.requests).toHaveLength(1);
    expect(JSON.stringify(server.openai.requests[0]?.body)).toContain("Hi there");

    // The turn is the conversation of that Discord user in that channel.
    const conversations = await server.h.request<{ data: { userId: string; roomId: string }[] }>(
      "GET",
      `/v1/agents/${bot.id}/conversations`,
      { key: server.tenant.key },
    );
    expect(conversations.body.data.map(({ userId, roomId }) => ({ userId, roomId }))).toEqual([
      { userId: "discord:501", roomId: `discord:${DM}` },
    ]);
  });

  it("answers in a guild channel only when mentioned or replied to, and never a bot", async () => {
    const bot = await discordAgent();
    server.openai.reply("First.");
    server.openai.reply("Second.");
    const inGuild = { channelId: CHANNEL, guildId: GUILD };
    server.fake.send(bot.token, { ...inGuild, content: "just chatting" });
    server.fake.send(bot.token, {
      ...inGuild,
      author: { id: "12", bot: true },
      content: "a bot's words",
      mentionBot: true,
    });
    const mentioned = server.fake.send(bot.token, {
      ...inGuild,
      content: "what time is it?",
      mentionBot: true,
    });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 1,
    );
    const replied = server.fake.send(bot.token, {
      ...inGuild,
      content: "thanks",
      replyToBot: "799999999999999999",
    });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 2,
    );
    await quiet(500);
    expect(server.fake.posts(bot.token).map((post) => [post.channelId, post.replyTo])).toEqual([
      [CHANNEL, mentioned.messageId],
      [CHANNEL, replied.messageId],
    ]);
    const seen = JSON.stringify(server.openai.requests[0]?.body);
    expect(seen).toContain("what time is it?");
    expect(seen).not.toContain(`<@${bot.botId}>`);
    expect(server.openai.requests).toHaveLength(2);
  });

  it("keeps to respondIn direct and allowedChats", async () => {
    const bot = await discordAgent([{ type: "discord", respondIn: "direct", allowedChats: [DM] }]);
    server.fake.send(bot.token, { channelId: CHANNEL, guildId: GUILD, content: "hello", mentionBot: true });
    server.fake.send(bot.token, { channelId: "730000000000000099", content: "another DM" });
    const allowed = server.fake.send(bot.token, { channelId: DM, content: "in the allowed DM" });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 1,
    );
    await quiet(500);
    expect(server.fake.posts(bot.token).map((post) => post.replyTo)).toEqual([allowed.messageId]);
  });

  it("splits a long reply within 2,000 characters, waiting out a 429, and apologises once for a failed turn", async () => {
    const bot = await discordAgent();
    const paragraphs = [`${"a".repeat(1500)}.`, `${"b".repeat(1500)}.`, "The end."];
    server.openai.reply(paragraphs.join("\n\n"));
    server.fake.rateLimit(1);
    const before = server.fake.calls().length;
    const long = server.fake.send(bot.token, { channelId: DM, content: "Tell me everything" });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 2,
    );
    expect(server.fake.posts(bot.token)).toEqual([
      { token: bot.token, channelId: DM, content: paragraphs[0], replyTo: long.messageId },
      {
        token: bot.token,
        channelId: DM,
        content: `${paragraphs[1]}\n\n${paragraphs[2]}`,
        replyTo: long.messageId,
      },
    ]);
    const calls = server.fake.calls().slice(before);
    expect(calls.map((call) => call.status)).toEqual([429, 200, 200]);
    // The Retry-After second passed before the post was made again.
    expect((calls[1]?.at ?? 0) - (calls[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);

    server.openai.failWith(400, { message: "bad request" });
    const broken = server.fake.send(bot.token, { channelId: DM, content: "Break, please" });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 3,
    );
    await quiet(500);
    expect(server.fake.posts(bot.token).slice(2)).toEqual([
      { token: bot.token, channelId: DM, content: APOLOGY, replyTo: broken.messageId },
    ]);
    expect(server.openai.requests).toHaveLength(2);
  });

  it("resumes a dropped gateway session, and a replayed message is answered once", async () => {
    const bot = await discordAgent();
    server.openai.reply("Before the drop.");
    server.openai.reply("While away.");
    const first = server.fake.send(bot.token, { channelId: DM, content: "One" });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 1,
    );
    const sequence = server.fake.sequence(bot.token);
    // The connection drops; the gateway then replays everything from before the answered message.
    server.fake.disconnect(bot.token, { replayFrom: sequence - 1 });
    const second = server.fake.send(bot.token, { channelId: DM, content: "Two" });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 2,
    );
    await quiet(800);
    const resume = server.fake.received(bot.token).find((payload) => payload.op === 6);
    expect(resume?.d).toMatchObject({ seq: sequence });
    expect(server.fake.received(bot.token).filter((payload) => payload.op === 2)).toHaveLength(1);
    expect(server.fake.posts(bot.token).map((post) => post.replyTo)).toEqual([
      first.messageId,
      second.messageId,
    ]);
    expect(server.openai.requests).toHaveLength(2);
    expect(server.fake.sessions(bot.token)).toBe(1);
  });

  it("identifies afresh when the gateway answers a RESUME with INVALID SESSION, and answers what comes next", async () => {
    const bot = await discordAgent();
    server.fake.disconnect(bot.token, { forgotten: true });
    await until(
      () => server.fake.received(bot.token).map((payload) => payload.op),
      (ops) => ops.filter((op) => op === 2).length === 2 && server.fake.sessions(bot.token) === 1,
      // discord.js waits a random 1 to 5 s before identifying again, as Discord asks.
      15_000,
    );
    const ops = server.fake.received(bot.token).map((payload) => payload.op);
    expect(ops.indexOf(6)).toBeGreaterThan(ops.indexOf(2));
    expect(ops.lastIndexOf(2)).toBeGreaterThan(ops.indexOf(6));
    server.openai.reply("Back again.");
    const { messageId } = server.fake.send(bot.token, { channelId: DM, content: "Hello?" });
    await until(
      () => server.fake.posts(bot.token),
      (posts) => posts.length === 1,
    );
    expect(server.fake.posts(bot.token)[0]).toMatchObject({ content: "Back again.", replyTo: messageId });
  });

  it("marks the agent error with CLIENT_AUTH_FAILED for a token REST or the gateway rejects, and runs again on a new one", async () => {
    const restRejected = await platformAgent(
      server.h,
      server.tenant,
      { name: "Rejected", clients: ["discord"] },
      { DISCORD_BOT_TOKEN: "not-a-token" },
    );
    const gatewayToken = `gateway-rejects-${Date.now()}`;
    server.fake.addBot(gatewayToken, "agentry_refused");
    server.fake.rejectGateway(gatewayToken);
    const gatewayRejected = await platformAgent(
      server.h,
      server.tenant,
      { name: "Refused", clients: ["discord"] },
      { DISCORD_BOT_TOKEN: gatewayToken },
    );
    for (const id of [restRejected, gatewayRejected]) {
      const failed = await until(
        () => agentState(server.h, server.tenant, id),
        (agent) => agent.status === "error",
      );
      expect(failed.statusReason?.code).toBe("CLIENT_AUTH_FAILED");
      const clients = await clientStates(server.h, server.tenant, id);
      expect(clients[0]).toMatchObject({
        type: "discord",
        state: "failed",
        lastError: { code: "CLIENT_AUTH_FAILED" },
      });
    }
    expect(server.fake.sessions(gatewayToken)).toBe(0);

    // Once the token is good again, a PATCH to active runs the connector again.
    server.fake.rejectGateway(gatewayToken, false);
    const patched = await server.h.request("PATCH", `/v1/agents/${gatewayRejected}`, {
      key: server.tenant.key,
      body: { status: "active" },
    });
    expect(patched.status).toBe(200);
    await until(
      () => server.fake.sessions(gatewayToken),
      (n) => n === 1,
    );
    expect((await clientStates(server.h, server.tenant, gatewayRejected))[0]?.state).toBe("connected");

    const token = `discord-renewed-${Date.now()}`;
    server.fake.addBot(token, "agentry_renewed");
    await putSecret(server.h, server.tenant, restRejected, "DISCORD_BOT_TOKEN", token);
    await until(
      () => agentState(server.h, server.tenant, restRejected),
      (agent) => agent.status === "active",
    );
    await until(
      () => server.fake.sessions(token),
      (n) => n === 1,
    );
    server.fake.send(token, { channelId: DM, content: "Are you there?" });
    await until(
      () => server.fake.posts(token),
      (posts) => posts.length === 1,
    );
  });

  it("closes the gateway session within 5 s of deactivation, and of delete", async () => {
    const bot = await discordAgent();
    expect(server.fake.sessions(bot.token)).toBe(1);
    const patched = await server.h.request("PATCH", `/v1/agents/${bot.id}`, {
      key: server.tenant.key,
      body: { status: "inactive" },
    });
    expect(patched.status).toBe(200);
    await until(
      () => server.fake.sessions(bot.token),
      (n) => n === 0,
      5_000,
    );
    expect((await clientStates(server.h, server.tenant, bot.id))[0]?.state).toBe("stopped");

    await server.h.request("PATCH", `/v1/agents/${bot.id}`, {
      key: server.tenant.key,
      body: { status: "active" },
    });
    await until(
      () => server.fake.sessions(bot.token),
      (n) => n === 1,
    );
    expect(
      (await server.h.request("DELETE", `/v1/agents/${bot.id}`, { key: server.tenant.key })).status,
    ).toBe(200);
    await until(
      () => server.fake.sessions(bot.token),
      (n) => n === 0,
      5_000,
    );
  });

  it("posts a schedule's reply to the Discord channel its roomId names, once", async () => {
    const bot = await discordAgent();
    server.openai.reply("Standup in five minutes.");
    // A 6-field expression naming one second a few seconds from now, so the schedule fires exactly once.
    const at = new Date(Date.now() + 3_000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
    const created = await server.h.request("POST", `/v1/agents/${bot.id}/schedules`, {
      key: server.tenant.key,
      body: { cron, timezone: "UTC", text: "Remind the team of standup.", roomId: `discord:${CHANNEL}` },
    });
    expect(created.status).toBe(201);
    const posts = await until(
      () => server.fake.posts(bot.token),
      (found) => found.length > 0,
      15_000,
    );
    expect(posts).toEqual([
      { token: bot.token, channelId: CHANNEL, content: "Standup in five minutes.", replyTo: undefined },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(server.fake.posts(bot.token)).toHaveLength(1);
  });
});
