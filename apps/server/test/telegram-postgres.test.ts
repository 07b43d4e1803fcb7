import { startFakeTelegram } from "@agentry/connectors/testing";
import { describe, expect, it } from "vitest";
import { connectorReplicas, until } from "./connectors.js";
import type { Harness } from "./harness.js";

/*
 * Two servers on one Postgres database, as two replicas would run: both run the agent's Telegram connector, one
 * polls the bot at a time by lease, and every message is answered once.
 */

const replicas = connectorReplicas(startFakeTelegram, (fake) => ({ TELEGRAM_API_URL: fake.url }));

describe("Telegram on two servers sharing Postgres", () => {
  it("polls each bot from one process at a time and answers every message once", async () => {
    const [a, b] = await replicas.start();
    const { fake: telegram, openai } = replicas;
    const tenant = await a.tenant();
    const token = "1:two-servers";
    telegram.addBot(token, "two_servers_bot");
    const created = await a.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Twice", clients: ["telegram"] },
    });
    await a.request("PUT", `/v1/agents/${created.body.data.id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: tenant.key,
      body: { value: token },
    });
    await until(
      () => telegram.activePolls(token),
      (n) => n > 0,
    );
    // Both servers run the connector; the other waits on the lease.
    const states = async (on: Harness) =>
      (
        await on.request<{ data: { state: string }[] }>("GET", `/v1/agents/${created.body.data.id}/clients`, {
          key: tenant.key,
        })
      ).body.data[0]?.state;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const both = [await states(a), await states(b)].sort();
    expect(both).toEqual(["connected", "connecting"]);

    const sentIds = [1, 2, 3].map(
      (n) => telegram.send(token, { chat: { id: 700 + n, type: "private" }, text: `Message ${n}` }).messageId,
    );
    await until(
      () => telegram.sent(token).length,
      (n) => n >= 3,
    );
    await until(
      () => telegram.pending(token),
      (n) => n === 0,
    );
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(
      telegram
        .sent(token)
        .map((message) => message.replyTo)
        .sort(),
    ).toEqual(sentIds.sort());
    expect(openai.requests).toHaveLength(3);
    expect(telegram.activePolls(token)).toBeLessThanOrEqual(1);

    // The poller goes; the other process takes the bot over and answers what comes next.
    const holder = (await states(a)) === "connected" ? a : b;
    const other = holder === a ? b : a;
    await replicas.stop(holder);
    const { messageId } = telegram.send(token, { chat: { id: 799, type: "private" }, text: "Still there?" });
    await until(
      () => telegram.sent(token).filter((message) => message.replyTo === messageId).length,
      (n) => n === 1,
      15_000,
    );
    expect(await states(other)).toBe("connected");
  });
});
