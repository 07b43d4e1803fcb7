import { randomBytes } from "node:crypto";
import { type FakeDiscord, startFakeDiscord } from "@agentry/connectors/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientStates, modelEnv, platformAgent, until } from "./connectors.js";
import { type Harness, startHarness } from "./harness.js";

/*
 * Two servers on one Postgres database, as two replicas would run: both run the agent's Discord connector, one
 * holds the bot's gateway session at a time by lease, and the other takes the bot over when the holder goes.
 */

let openai: FakeProviderServer<OpenAIChatBody>;
let discord: FakeDiscord;
let db: TestDatabase;
let a: Harness | undefined;
let b: Harness | undefined;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  discord = await startFakeDiscord();
  db = await openTestDatabase();
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.close();
  await discord?.close();
  await openai?.close();
});

describe("Discord on two servers sharing Postgres", () => {
  it("holds one gateway session per bot, answers each message once, and hands the bot over", async () => {
    const env = {
      ...modelEnv(openai),
      DISCORD_API_URL: discord.url,
      DISCORD_GATEWAY_URL: discord.gatewayUrl,
      CONNECTORS_SYNC_INTERVAL_MS: "250",
      CONNECTORS_LEASE_MS: "3000",
      DATABASE_URL: await db.createDatabase(),
      // Both registries open the same sealed secrets.
      SECRETS_KEY: randomBytes(32).toString("base64"),
    };
    a = await startHarness(env);
    b = await startHarness(env);
    const tenant = await a.tenant();
    const token = "discord-two-servers";
    discord.addBot(token, "two_servers");
    const id = await platformAgent(
      a,
      tenant,
      { name: "Twice", clients: ["discord"] },
      { DISCORD_BOT_TOKEN: token },
    );
    await until(
      () => discord.sessions(token),
      (n) => n === 1,
    );
    const state = async (on: Harness) => (await clientStates(on, tenant, id))[0]?.state;
    await until(
      async () => [await state(a!), await state(b!)].sort(),
      (states) => states[0] === "connected" && states[1] === "connecting",
    );

    const sentIds = [1, 2, 3].map(
      (n) => discord.send(token, { channelId: `74000000000000000${n}`, content: `Message ${n}` }).messageId,
    );
    await until(
      () => discord.posts(token).length,
      (n) => n >= 3,
    );
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(
      discord
        .posts(token)
        .map((post) => post.replyTo)
        .sort(),
    ).toEqual(sentIds.sort());
    expect(openai.requests).toHaveLength(3);
    expect(discord.sessions(token)).toBe(1);
    expect(discord.received(token).filter((payload) => payload.op === 2)).toHaveLength(1);

    // The holder goes; the other process identifies within the lease and answers what comes next.
    const holder = (await state(a)) === "connected" ? a : b;
    const other = holder === a ? b : a;
    await holder.close();
    if (holder === a) a = undefined;
    else b = undefined;
    await until(
      () => [discord.received(token).filter((payload) => payload.op === 2).length, discord.sessions(token)],
      ([identified, open]) => identified === 2 && open === 1,
      15_000,
    );
    const { messageId } = discord.send(token, { channelId: "749999999999999999", content: "Still there?" });
    await until(
      () => discord.posts(token).filter((post) => post.replyTo === messageId).length,
      (n) => n === 1,
    );
    expect(await state(other!)).toBe("connected");
  });
});
