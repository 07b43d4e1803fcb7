import { startFakeDiscord } from "@agentry/connectors/testing";
import { describe, expect, it } from "vitest";
import { clientStates, connectorReplicas, platformAgent, until } from "./connectors.js";
import type { Harness } from "./harness.js";

/*
 * Two servers on one Postgres database, as two replicas would run: both run the agent's Discord connector, one
 * holds the bot's gateway session at a time by lease, and the other takes the bot over when the holder goes.
 */

const replicas = connectorReplicas(startFakeDiscord, (fake) => ({
  DISCORD_API_URL: fake.url,
  DISCORD_GATEWAY_URL: fake.gatewayUrl,
}));

describe("Discord on two servers sharing Postgres", () => {
  it("holds one gateway session per bot, answers each message once, and hands the bot over", async () => {
    const [a, b] = await replicas.start();
    const { fake: discord, openai } = replicas;
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
      async () => [await state(a), await state(b)].sort(),
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
    await replicas.stop(holder);
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
    expect(await state(other)).toBe("connected");
  });
});
