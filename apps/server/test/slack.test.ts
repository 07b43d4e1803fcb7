import { APOLOGY } from "@agentry/connectors";
import { signSlackRequest, startFakeSlack } from "@agentry/connectors/testing";
import { describe, expect, it } from "vitest";
import {
  agentState,
  clientStates,
  connectorServer,
  platformAgent,
  putSecret as putPlatformSecret,
  until,
} from "./connectors.js";

/*
 * Agents on Slack through the whole all-in-one server: Slack's Events API requests reach the gateway's connector
 * route signed with the app's signing secret, the embedded connectors answer each with a turn of the conversation
 * service (the fake OpenAI server), and replies go through @slack/web-api to a local fake of the Web API.
 */

const server = connectorServer(startFakeSlack, (fake) => ({
  SLACK_API_URL: fake.url,
  SCHEDULE_SCAN_MS: "200",
}));
let bots = 0;
let events = 0;

const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

async function putSecret(id: string, name: string, value: string): Promise<void> {
  await putPlatformSecret(server.h, server.tenant, id, name, value);
}

/** A new agent on Slack holding `token` and the signing secret; its id. */
function slackAgentOf(name: string, clients: unknown[], token: string): Promise<string> {
  return platformAgent(
    server.h,
    server.tenant,
    { name, clients },
    { SLACK_BOT_TOKEN: token, SLACK_SIGNING_SECRET: SIGNING_SECRET },
  );
}

const clientsOf = (id: string) => clientStates(server.h, server.tenant, id);

/** An agent on Slack with a bot of its own, connected (auth.test accepted its token). */
async function slackAgent(
  clients: unknown[] = ["slack"],
): Promise<{ id: string; token: string; userId: string }> {
  const token = `xoxb-test-${++bots}-${Date.now()}`;
  const userId = `UBOT${bots}`;
  server.fake.addBot(token, userId);
  const id = await slackAgentOf(`Slacker ${bots}`, clients, token);
  await until(
    () => clientsOf(id),
    (clients) => clients[0]?.state === "connected",
  );
  return { id, token, userId };
}

/** A message event as Slack's Events API sends it. */
function messageEvent(event: Record<string, unknown>): { body: string; ts: string } {
  const ts = `1800000${String(++events).padStart(3, "0")}.000200`;
  const body = JSON.stringify({
    type: "event_callback",
    team_id: "T0001",
    event_id: `Ev${events}`,
    event: { type: "message", user: "UADA", ts, client_msg_id: `msg-${events}`, ...event },
  });
  return { body, ts };
}

function deliver(agentId: string, body: string, headers: Record<string, string> = {}) {
  return server.h.request<{ error?: { code: string; message: string } }>(
    "POST",
    `/v1/connectors/slack/${agentId}`,
    {
      rawBody: body,
      headers: { "content-type": "application/json", ...signSlackRequest(SIGNING_SECRET, body), ...headers },
    },
  );
}

describe("Slack", () => {
  it("answers the URL check, and a DM once, however often Slack retries it", async () => {
    const bot = await slackAgent();
    const check = JSON.stringify({ type: "url_verification", token: "legacy", challenge: "c-123" });
    const verified = await deliver(bot.id, check);
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ challenge: "c-123" });

    server.openai.reply("Hello from the agent.", { delayMs: 300 });
    const { body } = messageEvent({ channel: "D100", channel_type: "im", text: "Hi there" });
    // Slack retries an event it has no answer for yet, and again later: neither gets a second turn or reply.
    const [first, retry] = await Promise.all([
      deliver(bot.id, body),
      new Promise((resolve) => setTimeout(resolve, 100)).then(() =>
        deliver(bot.id, body, { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" }),
      ),
    ]);
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect((await deliver(bot.id, body, { "x-slack-retry-num": "2" })).status).toBe(200);
    expect(server.fake.posts(bot.token)).toEqual([
      { token: bot.token, channel: "D100", text: "Hello from the agent.", threadTs: undefined },
    ]);
    expect(server.openai.requests).toHaveLength(1);
    expect(JSON.stringify(server.openai.requests[0]?.body)).toContain("Hi there");
  });

  it("answers in a channel only when mentioned, in the message's thread, and never a bot", async () => {
    const bot = await slackAgent();
    server.openai.reply("In the thread.");
    const chatter = messageEvent({ channel: "C200", channel_type: "channel", text: "just chatting" });
    const fromBot = messageEvent({ channel: "C200", text: `<@${bot.userId}> hi`, bot_id: "BOTHER" });
    const own = messageEvent({ channel: "C200", text: "my own words", user: bot.userId });
    const edited = messageEvent({
      channel: "C200",
      text: `<@${bot.userId}> edited`,
      subtype: "message_changed",
    });
    for (const event of [chatter, fromBot, own, edited])
      expect((await deliver(bot.id, event.body)).status).toBe(200);
    expect(server.fake.posts(bot.token)).toEqual([]);

    const mention = messageEvent({
      channel: "C200",
      channel_type: "channel",
      text: `<@${bot.userId}> what time is it?`,
    });
    expect((await deliver(bot.id, mention.body)).status).toBe(200);
    // The same message as an app_mention event (an app subscribed to both) is the same message: no second reply.
    const asMention = JSON.parse(mention.body) as { event: Record<string, unknown> };
    asMention.event.type = "app_mention";
    expect((await deliver(bot.id, JSON.stringify(asMention))).status).toBe(200);
    expect(server.fake.posts(bot.token)).toEqual([
      { token: bot.token, channel: "C200", text: "In the thread.", threadTs: mention.ts },
    ]);
    expect(server.openai.requests).toHaveLength(1);
    const seen = JSON.stringify(server.openai.requests[0]?.body);
    expect(seen).toContain("what time is it?");
    expect(seen).not.toContain(`<@${bot.userId}>`);

    // A reply in that thread continues the same conversation: the model sees the first exchange.
    server.openai.reply("Still here.");
    const followUp = messageEvent({
      channel: "C200",
      channel_type: "channel",
      text: `<@${bot.userId}> and now?`,
      thread_ts: mention.ts,
    });
    expect((await deliver(bot.id, followUp.body)).status).toBe(200);
    expect(server.fake.posts(bot.token)[1]).toEqual({
      token: bot.token,
      channel: "C200",
      text: "Still here.",
      threadTs: mention.ts,
    });
    expect(JSON.stringify(server.openai.requests[1]?.body)).toContain("In the thread.");
  });

  it("splits a long reply within 3,000 characters, waiting out a 429, and apologises once for a failed turn", async () => {
    const bot = await slackAgent();
    const paragraphs = [`${"a".repeat(2000)}.`, `${"b".repeat(2000)}.`];
    server.openai.reply(paragraphs.join("\n\n"));
    server.fake.rateLimit("chat.postMessage", 1);
    const before = server.fake.calls("chat.postMessage").length;
    const long = messageEvent({ channel: "D300", channel_type: "im", text: "Tell me everything" });
    expect((await deliver(bot.id, long.body)).status).toBe(200);
    expect(server.fake.posts(bot.token).map((post) => post.text)).toEqual(paragraphs);
    const calls = server.fake.calls("chat.postMessage").slice(before);
    expect(calls[0]?.status).toBe(429);
    // The Retry-After second passed before the call was made again.
    expect((calls[1]?.at ?? 0) - (calls[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);

    server.openai.failWith(400, { message: "bad request" });
    const broken = messageEvent({ channel: "D300", channel_type: "im", text: "Break, please" });
    expect((await deliver(bot.id, broken.body)).status).toBe(200);
    expect((await deliver(bot.id, broken.body, { "x-slack-retry-num": "1" })).status).toBe(200);
    expect(server.fake.posts(bot.token).slice(2)).toEqual([
      { token: bot.token, channel: "D300", text: APOLOGY, threadTs: undefined },
    ]);
  });

  it("refuses a bad signature, a stale timestamp and other platforms with 401, and nothing is answered", async () => {
    const bot = await slackAgent();
    const { body } = messageEvent({ channel: "D400", channel_type: "im", text: "Forged" });
    const forged = await deliver(bot.id, body, { "x-slack-signature": `v0=${"0".repeat(64)}` });
    expect(forged.status).toBe(401);
    expect(forged.body.error?.message).toContain("SLACK_SIGNING_SECRET");
    const otherSecret = signSlackRequest("not-the-secret", body);
    expect((await deliver(bot.id, body, otherSecret)).status).toBe(401);
    const stale = signSlackRequest(SIGNING_SECRET, body, Math.floor(Date.now() / 1000) - 6 * 60);
    const refused = await deliver(bot.id, body, stale);
    expect(refused.status).toBe(401);
    expect(refused.body.error?.message).toContain("5 minutes");
    const unsigned = await server.h.request("POST", `/v1/connectors/slack/${bot.id}`, {
      rawBody: body,
      headers: {},
    });
    expect(unsigned.status).toBe(401);
    expect(server.fake.posts(bot.token)).toEqual([]);
    expect(server.openai.requests).toHaveLength(0);
  });

  it("answers 503 to an event before Slack accepted the token, so Slack sends it again, and then answers it", async () => {
    const token = `xoxb-slow-${Date.now()}`;
    server.fake.addBot(token, "USLOW");
    server.fake.rateLimit("auth.test", 1);
    const before = server.fake.calls("auth.test").length;
    const id = await slackAgentOf("Slow start", ["slack"], token);
    await until(
      () => server.fake.calls("auth.test").slice(before),
      (calls) => calls[0]?.status === 429,
    );
    server.openai.reply("Now I know who I am.");
    const { body } = messageEvent({ channel: "D500", channel_type: "im", text: "Early" });
    const early = await deliver(id, body);
    expect(early.status).toBe(503);
    expect(early.body.error?.code).toBe("AGENT_UNAVAILABLE");
    await until(
      () => clientsOf(id),
      (clients) => clients[0]?.state === "connected",
    );
    expect((await deliver(id, body, { "x-slack-retry-num": "1" })).status).toBe(200);
    expect(server.fake.posts(token).map((post) => post.text)).toEqual(["Now I know who I am."]);
  });

  it("marks the agent error with CLIENT_AUTH_FAILED for a rejected token", async () => {
    const id = await slackAgentOf("Revoked", ["slack"], "xoxb-revoked");
    const agent = await until(
      () => agentState(server.h, server.tenant, id),
      (data) => data.status === "error",
    );
    expect(agent.statusReason?.code).toBe("CLIENT_AUTH_FAILED");
    const clients = await clientsOf(id);
    expect(clients[0]).toMatchObject({ type: "slack", state: "failed" });
    expect(clients[0]?.lastError?.code).toBe("CLIENT_AUTH_FAILED");

    // A valid token starts it again, and the agent is active once Slack accepts it.
    server.fake.addBot("xoxb-renewed", "URENEWED");
    await putSecret(id, "SLACK_BOT_TOKEN", "xoxb-renewed");
    await until(
      () => agentState(server.h, server.tenant, id),
      (data) => data.status === "active",
    );
  });

  it("posts a schedule's reply in the Slack thread its roomId names, once", async () => {
    const bot = await slackAgent();
    server.openai.reply("The nightly build passed.");
    // A 6-field expression naming one second a few seconds from now, so the schedule fires exactly once.
    const at = new Date(Date.now() + 3_000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
    const created = await server.h.request("POST", `/v1/agents/${bot.id}/schedules`, {
      key: server.tenant.key,
      body: {
        cron,
        timezone: "UTC",
        text: "Report the nightly build.",
        roomId: "slack:C0BUILDS:1800000999.000100",
      },
    });
    expect(created.status).toBe(201);
    const posts = await until(
      () => server.fake.posts(bot.token),
      (found) => found.length > 0,
      15_000,
    );
    expect(posts).toEqual([
      {
        token: bot.token,
        channel: "C0BUILDS",
        text: "The nightly build passed.",
        threadTs: "1800000999.000100",
      },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(server.fake.posts(bot.token)).toHaveLength(1);
  });
});
