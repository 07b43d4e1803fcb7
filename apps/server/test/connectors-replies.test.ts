import { APOLOGY } from "@agentry/connectors";
import {
  type FakeSlack,
  type FakeTelegram,
  signSlackRequest,
  startFakeSlack,
  startFakeTelegram,
} from "@agentry/connectors/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * Replies as people read them on each platform: the model's Markdown as Telegram HTML and Slack mrkdwn, plain text
 * where Telegram refuses the markup, Slack's "is thinking…" while the turn runs, and the per-platform metrics the
 * process exposes on /metrics.
 */

let openai: FakeProviderServer<OpenAIChatBody>;
let telegram: FakeTelegram;
let slack: FakeSlack;
let h: Harness;
let tenant: Tenant;
let bots = 0;

const SIGNING_SECRET = "replies-signing-secret";
const MARKDOWN = "**Bold** claim: 2 < 3 & `x > y`.\n\n- one\n- two";

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  telegram = await startFakeTelegram();
  slack = await startFakeSlack();
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    TELEGRAM_API_URL: telegram.url,
    SLACK_API_URL: slack.url,
    CONNECTORS_SYNC_INTERVAL_MS: "250",
    METRICS_PORT: "0",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h?.close();
  await slack?.close();
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

async function agent(clients: string[], secrets: Record<string, string>): Promise<string> {
  const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: `Replies ${++bots}`, clients },
  });
  expect(created.status).toBe(201);
  for (const [name, value] of Object.entries(secrets)) {
    const put = await h.request("PUT", `/v1/agents/${created.body.data.id}/secrets/${name}`, {
      key: tenant.key,
      body: { value },
    });
    expect(put.status).toBe(200);
  }
  await until(
    async () =>
      (
        await h.request<{ data: { state: string }[] }>("GET", `/v1/agents/${created.body.data.id}/clients`, {
          key: tenant.key,
        })
      ).body.data?.[0]?.state,
    (state) => state === "connected",
  );
  return created.body.data.id;
}

/** One sample of the process's metrics, by name and exact label set; 0 when absent. */
async function metric(name: string, labels: string): Promise<number> {
  const text = (await h.gateway.metrics?.registry.metrics()) ?? "";
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

describe("Telegram replies", () => {
  it("go out in HTML parse mode, escaped, and are counted with their lag", async () => {
    const token = `${100 + bots}:replies-telegram`;
    telegram.addBot(token, "replies_bot");
    await agent(["telegram"], { TELEGRAM_BOT_TOKEN: token });
    const before = await metric("agentry_connector_replies_sent_total", 'platform="telegram"');
    openai.reply(MARKDOWN);
    const { messageId } = telegram.send(token, {
      chat: { id: 610, type: "private" },
      from: { id: 610 },
      text: "Hi",
    });
    await until(
      () => telegram.sent(token),
      (sent) => sent.length === 1,
    );
    expect(telegram.sendCalls(token)).toEqual([
      {
        token,
        text: "<b>Bold</b> claim: 2 &lt; 3 &amp; <code>x &gt; y</code>.\n\n• one\n• two",
        parseMode: "HTML",
        refused: false,
      },
    ]);
    // What the chat shows: the words, without the Markdown's asterisks and backquotes.
    expect(telegram.sent(token)).toEqual([
      { token, chatId: 610, text: "Bold claim: 2 < 3 & x > y.\n\n• one\n• two", replyTo: messageId },
    ]);
    await until(
      () => metric("agentry_connector_replies_sent_total", 'platform="telegram"'),
      (value) => value === before + 1,
    );
    expect(await metric("agentry_connector_messages_received_total", 'platform="telegram"')).toBeGreaterThan(
      0,
    );
    expect(await metric("agentry_connector_reply_lag_seconds_count", 'platform="telegram"')).toBe(before + 1);
  });

  it("are sent again as plain text when Telegram refuses the markup", async () => {
    const token = `${100 + bots}:replies-plain`;
    telegram.addBot(token, "replies_plain_bot");
    await agent(["telegram"], { TELEGRAM_BOT_TOKEN: token });
    telegram.refuseMarkup(1);
    openai.reply(MARKDOWN);
    telegram.send(token, { chat: { id: 611, type: "private" }, from: { id: 611 }, text: "Hi" });
    await until(
      () => telegram.sent(token),
      (sent) => sent.length === 1,
    );
    expect(telegram.sendCalls(token).map(({ parseMode, refused }) => ({ parseMode, refused }))).toEqual([
      { parseMode: "HTML", refused: true },
      { parseMode: undefined, refused: false },
    ]);
    expect(telegram.sent(token)[0]?.text).toBe(MARKDOWN);
  });
});

describe("Slack replies", () => {
  it("go out as mrkdwn in the thread, after 'is thinking…', and a failed turn counts as a failure", async () => {
    const token = `xoxb-replies-${bots}`;
    slack.addBot(token, "UREPLIES");
    const id = await agent(["slack"], { SLACK_BOT_TOKEN: token, SLACK_SIGNING_SECRET: SIGNING_SECRET });
    const deliver = (text: string, ts: string) => {
      const body = JSON.stringify({
        type: "event_callback",
        event: { type: "message", user: "UADA", channel: "C300", channel_type: "channel", text, ts },
      });
      return h.request("POST", `/v1/connectors/slack/${id}`, {
        rawBody: body,
        headers: { "content-type": "application/json", ...signSlackRequest(SIGNING_SECRET, body) },
      });
    };
    const failuresBefore = await metric("agentry_connector_failures_total", 'platform="slack",stage="turn"');
    openai.reply(MARKDOWN, { delayMs: 200 });
    const ts = `${Math.floor(Date.now() / 1000)}.000100`;
    expect((await deliver("<@UREPLIES> explain", ts)).status).toBe(200);
    await until(
      () => slack.posts(token),
      (posts) => posts.length === 1,
    );
    expect(slack.statuses(token)).toEqual([{ token, channel: "C300", threadTs: ts, status: "is thinking…" }]);
    const [post] = slack.posts(token);
    expect(post?.threadTs).toBe(ts);
    // slackify-markdown keeps emphasis apart from the words around it with zero-width spaces.
    expect(post?.text.replaceAll("\u200b", "")).toBe(
      "*Bold* claim: 2 &lt; 3 &amp; `x > y`.\n\n•   one\n•   two",
    );
    expect(post?.mrkdwn).toBeUndefined();
    expect(await metric("agentry_connector_replies_sent_total", 'platform="slack"')).toBeGreaterThan(0);

    openai.failWith(400, { message: "bad request" });
    const failed = `${Math.floor(Date.now() / 1000)}.000200`;
    expect((await deliver("<@UREPLIES> again", failed)).status).toBe(200);
    await until(
      () => slack.posts(token),
      (posts) => posts.length === 2,
    );
    expect(slack.posts(token)[1]?.text).toBe(APOLOGY);
    expect(await metric("agentry_connector_failures_total", 'platform="slack",stage="turn"')).toBe(
      failuresBefore + 1,
    );
  });
});
