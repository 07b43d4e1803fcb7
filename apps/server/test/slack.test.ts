import { APOLOGY } from "@agentry/connectors";
import { type FakeSlack, signSlackRequest, startFakeSlack } from "@agentry/connectors/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * Agents on Slack through the whole all-in-one server: Slack's Events API requests reach the gateway's connector
 * route signed with the app's signing secret, the embedded connectors answer each with a turn of the conversation
 * service (the fake OpenAI server), and replies go through @slack/web-api to a local fake of the Web API.
 */

let openai: FakeProviderServer<OpenAIChatBody>;
let slack: FakeSlack;
let h: Harness;
let tenant: Tenant;
let bots = 0;
let events = 0;

const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  slack = await startFakeSlack();
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    SLACK_API_URL: slack.url,
    CONNECTORS_SYNC_INTERVAL_MS: "250",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h?.close();
  await slack?.close();
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

type ClientsAnswer = { data: { type: string; state: string; lastError: { code: string } | null }[] };

async function putSecret(id: string, name: string, value: string): Promise<void> {
  const put = await h.request("PUT", `/v1/agents/${id}/secrets/${name}`, {
    key: tenant.key,
    body: { value },
  });
  expect(put.status).toBe(200);
}

/** An agent on Slack with a bot of its own, connected (auth.test accepted its token). */
async function slackAgent(
  clients: unknown[] = ["slack"],
): Promise<{ id: string; token: string; userId: string }> {
  const token = `xoxb-test-${++bots}-${Date.now()}`;
  const userId = `UBOT${bots}`;
  slack.addBot(token, userId);
  const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: `Slacker ${bots}`, clients },
  });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  await putSecret(id, "SLACK_BOT_TOKEN", token);
  await putSecret(id, "SLACK_SIGNING_SECRET", SIGNING_SECRET);
  await until(
    async () => (await h.request<ClientsAnswer>("GET", `/v1/agents/${id}/clients`, { key: tenant.key })).body,
    (answer) => answer.data?.[0]?.state === "connected",
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
  return h.request<{ error?: { code: string; message: string } }>("POST", `/v1/connectors/slack/${agentId}`, {
    rawBody: body,
    headers: { "content-type": "application/json", ...signSlackRequest(SIGNING_SECRET, body), ...headers },
  });
}

describe("Slack", () => {
  it("answers the URL check, and a DM once, however often Slack retries it", async () => {
    const bot = await slackAgent();
    const check = JSON.stringify({ type: "url_verification", token: "legacy", challenge: "c-123" });
    const verified = await deliver(bot.id, check);
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ challenge: "c-123" });

    openai.reply("Hello from the agent.", { delayMs: 300 });
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
    expect(slack.posts(bot.token)).toEqual([
      { token: bot.token, channel: "D100", text: "Hello from the agent.", threadTs: undefined },
    ]);
    expect(openai.requests).toHaveLength(1);
    expect(JSON.stringify(openai.requests[0]?.body)).toContain("Hi there");
  });

  it("answers in a channel only when mentioned, in the message's thread, and never a bot", async () => {
    const bot = await slackAgent();
    openai.reply("In the thread.");
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
    expect(slack.posts(bot.token)).toEqual([]);

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
    expect(slack.posts(bot.token)).toEqual([
      { token: bot.token, channel: "C200", text: "In the thread.", threadTs: mention.ts },
    ]);
    expect(openai.requests).toHaveLength(1);
    const seen = JSON.stringify(openai.requests[0]?.body);
    expect(seen).toContain("what time is it?");
    expect(seen).not.toContain(`<@${bot.userId}>`);

    // A reply in that thread continues the same conversation: the model sees the first exchange.
    openai.reply("Still here.");
    const followUp = messageEvent({
      channel: "C200",
      channel_type: "channel",
      text: `<@${bot.userId}> and now?`,
      thread_ts: mention.ts,
    });
    expect((await deliver(bot.id, followUp.body)).status).toBe(200);
    expect(slack.posts(bot.token)[1]).toEqual({
      token: bot.token,
      channel: "C200",
      text: "Still here.",
      threadTs: mention.ts,
    });
    expect(JSON.stringify(openai.requests[1]?.body)).toContain("In the thread.");
  });

  it("splits a long reply within 3,000 characters, waiting out a 429, and apologises once for a failed turn", async () => {
    const bot = await slackAgent();
    const paragraphs = [`${"a".repeat(2000)}.`, `${"b".repeat(2000)}.`];
    openai.reply(paragraphs.join("\n\n"));
    slack.rateLimit("chat.postMessage", 1);
    const before = slack.calls("chat.postMessage").length;
    const long = messageEvent({ channel: "D300", channel_type: "im", text: "Tell me everything" });
    expect((await deliver(bot.id, long.body)).status).toBe(200);
    expect(slack.posts(bot.token).map((post) => post.text)).toEqual(paragraphs);
    const calls = slack.calls("chat.postMessage").slice(before);
    expect(calls[0]?.status).toBe(429);
    // The Retry-After second passed before the call was made again.
    expect((calls[1]?.at ?? 0) - (calls[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);

    openai.failWith(400, { message: "bad request" });
    const broken = messageEvent({ channel: "D300", channel_type: "im", text: "Break, please" });
    expect((await deliver(bot.id, broken.body)).status).toBe(200);
    expect((await deliver(bot.id, broken.body, { "x-slack-retry-num": "1" })).status).toBe(200);
    expect(slack.posts(bot.token).slice(2)).toEqual([
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
    const unsigned = await h.request("POST", `/v1/connectors/slack/${bot.id}`, {
      rawBody: body,
      headers: {},
    });
    expect(unsigned.status).toBe(401);
    expect(slack.posts(bot.token)).toEqual([]);
    expect(openai.requests).toHaveLength(0);
  });

  it("answers 503 to an event before Slack accepted the token, so Slack sends it again, and then answers it", async () => {
    const token = `xoxb-slow-${Date.now()}`;
    slack.addBot(token, "USLOW");
    slack.rateLimit("auth.test", 1);
    const before = slack.calls("auth.test").length;
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Slow start", clients: ["slack"] },
    });
    const id = created.body.data.id;
    await putSecret(id, "SLACK_BOT_TOKEN", token);
    await putSecret(id, "SLACK_SIGNING_SECRET", SIGNING_SECRET);
    await until(
      () => slack.calls("auth.test").slice(before),
      (calls) => calls[0]?.status === 429,
    );
    openai.reply("Now I know who I am.");
    const { body } = messageEvent({ channel: "D500", channel_type: "im", text: "Early" });
    const early = await deliver(id, body);
    expect(early.status).toBe(503);
    expect(early.body.error?.code).toBe("AGENT_UNAVAILABLE");
    await until(
      async () =>
        (await h.request<ClientsAnswer>("GET", `/v1/agents/${id}/clients`, { key: tenant.key })).body,
      (answer) => answer.data?.[0]?.state === "connected",
    );
    expect((await deliver(id, body, { "x-slack-retry-num": "1" })).status).toBe(200);
    expect(slack.posts(token).map((post) => post.text)).toEqual(["Now I know who I am."]);
  });

  it("marks the agent error with CLIENT_AUTH_FAILED for a rejected token", async () => {
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Revoked", clients: ["slack"] },
    });
    const id = created.body.data.id;
    await putSecret(id, "SLACK_BOT_TOKEN", "xoxb-revoked");
    await putSecret(id, "SLACK_SIGNING_SECRET", SIGNING_SECRET);
    const agent = await until(
      async () =>
        (
          await h.request<{ data: { status: string; statusReason: { code: string } | null } }>(
            "GET",
            `/v1/agents/${id}`,
            { key: tenant.key },
          )
        ).body.data,
      (data) => data.status === "error",
    );
    expect(agent.statusReason?.code).toBe("CLIENT_AUTH_FAILED");
    const clients = await h.request<ClientsAnswer>("GET", `/v1/agents/${id}/clients`, { key: tenant.key });
    expect(clients.body.data[0]).toMatchObject({ type: "slack", state: "failed" });
    expect(clients.body.data[0]?.lastError?.code).toBe("CLIENT_AUTH_FAILED");

    // A valid token starts it again, and the agent is active once Slack accepts it.
    slack.addBot("xoxb-renewed", "URENEWED");
    await putSecret(id, "SLACK_BOT_TOKEN", "xoxb-renewed");
    await until(
      async () =>
        (await h.request<{ data: { status: string } }>("GET", `/v1/agents/${id}`, { key: tenant.key })).body
          .data,
      (data) => data.status === "active",
    );
  });
});
