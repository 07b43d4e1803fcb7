import { randomBytes } from "node:crypto";
import { type FakeSlack, signSlackRequest, startFakeSlack } from "@agentry/connectors/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./harness.js";

/*
 * Two servers on one Postgres database behind one load balancer: Slack's retry of an event can reach the other
 * server while the first is still generating the reply. The message is answered once, with the model's reply.
 */

let openai: FakeProviderServer<OpenAIChatBody>;
let slack: FakeSlack;
let db: TestDatabase;
let a: Harness;
let b: Harness;

const SIGNING_SECRET = "two-servers-signing-secret";

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  slack = await startFakeSlack();
  db = await openTestDatabase();
  const env = {
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    SLACK_API_URL: slack.url,
    CONNECTORS_SYNC_INTERVAL_MS: "250",
    DATABASE_URL: await db.createDatabase(),
    // Both registries open the same sealed secrets.
    SECRETS_KEY: randomBytes(32).toString("base64"),
  };
  a = await startHarness(env);
  b = await startHarness(env);
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.close();
  await slack?.close();
  await openai?.close();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("Slack on two servers sharing Postgres", () => {
  it("never replies twice when Slack's retry reaches the other server", async () => {
    const tenant = await a.tenant();
    const token = "xoxb-two-servers";
    slack.addBot(token, "UTWO");
    const created = await a.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Twice on Slack", clients: ["slack"] },
    });
    const id = created.body.data.id;
    for (const [name, value] of [
      ["SLACK_BOT_TOKEN", token],
      ["SLACK_SIGNING_SECRET", SIGNING_SECRET],
    ]) {
      expect(
        (await a.request("PUT", `/v1/agents/${id}/secrets/${name}`, { key: tenant.key, body: { value } }))
          .status,
      ).toBe(200);
    }
    for (const server of [a, b]) {
      await until(
        async () =>
          (
            await server.request<{ data: { state: string }[] }>("GET", `/v1/agents/${id}/clients`, {
              key: tenant.key,
            })
          ).body.data?.[0]?.state,
        (state) => state === "connected",
      );
    }

    const body = JSON.stringify({
      type: "event_callback",
      event_id: "EvTwo1",
      event: {
        type: "message",
        user: "UADA",
        channel: "D900",
        channel_type: "im",
        text: "Only once, please",
        ts: `${Math.floor(Date.now() / 1000)}.000300`,
        client_msg_id: "msg-two-servers",
      },
    });
    const deliver = (on: Harness, retry?: number) =>
      on.request("POST", `/v1/connectors/slack/${id}`, {
        rawBody: body,
        headers: {
          "content-type": "application/json",
          ...signSlackRequest(SIGNING_SECRET, body),
          ...(retry ? { "x-slack-retry-num": String(retry), "x-slack-retry-reason": "http_timeout" } : {}),
        },
      });
    openai.reply("Answered once.", { delayMs: 1_500 });
    // The first delivery is still generating at server a when the retry reaches server b.
    const [first, retry] = await Promise.all([
      deliver(a),
      new Promise((resolve) => setTimeout(resolve, 400)).then(() => deliver(b, 1)),
    ]);
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect((await deliver(b, 2)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(slack.posts(token)).toEqual([
      { token, channel: "D900", text: "Answered once.", threadTs: undefined },
    ]);
  });
});
