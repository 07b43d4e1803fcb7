import { randomBytes } from "node:crypto";
import { type FakeTelegram, startFakeTelegram } from "@agentry/connectors/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * The connectors service as deploy/ runs it: processes of their own on one Postgres, next to the registry and the
 * conversation service, each killed with SIGKILL while it holds Telegram updates. Whatever the moment of the crash,
 * the process that takes the bot over answers every update exactly once.
 */

/** The lease the connectors hold a bot by; the product's default is 10 s, within the 15 s the contract names. */
const LEASE_MS = 3_000;
const TAKEOVER_MS = 15_000;

let openai: FakeProviderServer<OpenAIChatBody>;
let telegram: FakeTelegram;
let db: TestDatabase;
let registry: DeployableProcess;
let conversation: DeployableProcess;
let connectorsEnv: Record<string, string>;
const connectors: DeployableProcess[] = [];
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  telegram = await startFakeTelegram();
  db = await openTestDatabase();
  const databaseUrl = await db.createDatabase();
  const provider = {
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    LOCAL_ENABLED: "false",
  };
  registry = await startDeployable("services/registry", {
    DATABASE_URL: databaseUrl,
    REGISTRY_PORT: "0",
    SECRETS_KEY: randomBytes(32).toString("base64"),
    ...provider,
  });
  conversation = await startDeployable("services/conversation", {
    DATABASE_URL: databaseUrl,
    CONVERSATION_PORT: "0",
    REGISTRY_URL: registry.url,
    ...provider,
  });
  connectorsEnv = {
    DATABASE_URL: databaseUrl,
    CONNECTORS_PORT: "0",
    REGISTRY_URL: registry.url,
    CONVERSATION_URL: conversation.url,
    TELEGRAM_API_URL: telegram.url,
    CONNECTORS_SYNC_INTERVAL_MS: "250",
    CONNECTORS_LEASE_MS: String(LEASE_MS),
  };
  connectors.push(await startDeployable("services/connectors", connectorsEnv));
  h = await startHarness({
    REGISTRY_URL: registry.url,
    CONVERSATION_URL: conversation.url,
    CONNECTORS_URL: connectors[0]!.url,
    ...provider,
  });
  tenant = await h.tenant();
}, 180_000);

afterAll(async () => {
  await h?.close();
  for (const process of connectors) await process.stop("SIGKILL");
  await conversation?.stop("SIGKILL");
  await registry?.stop("SIGKILL");
  await db?.close();
  await telegram?.close();
  await openai?.close();
});

async function until<T>(read: () => T, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many replies each of `messageIds` got. */
const repliesTo = (token: string, messageIds: number[]) =>
  messageIds.map((id) => telegram.sent(token).filter((message) => message.replyTo === id).length);

describe("the connectors service killed with SIGKILL", () => {
  it("answers every update exactly once after another process takes the bot over", async () => {
    const token = "1:crash-test";
    telegram.addBot(token, "crash_test_bot");
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Survivor", clients: ["telegram"] },
    });
    expect(created.status).toBe(201);
    const secret = await h.request("PUT", `/v1/agents/${created.body.data.id}/secrets/TELEGRAM_BOT_TOKEN`, {
      key: tenant.key,
      body: { value: token },
    });
    expect(secret.status).toBe(200);
    await until(
      () => telegram.activePolls(token),
      (n) => n > 0,
      30_000,
    );
    // The first process polls the bot; a second one starts and waits on the lease.
    const [first] = connectors;
    connectors.push(await startDeployable("services/connectors", connectorsEnv));
    const second = connectors[1]!;
    await quiet(LEASE_MS);
    expect(telegram.activePolls(token)).toBe(1);

    // Updates in flight: the first process is generating the reply to the first when it dies.
    for (let n = 0; n < 3; n++) openai.reply(`Answer ${n + 1}.`, { delayMs: 1_500 });
    const ids = [1, 2, 3].map(
      (n) =>
        telegram.send(token, { chat: { id: 900 + n, type: "private" }, text: `Question ${n}` }).messageId,
    );
    await until(
      () => openai.requests.length,
      (n) => n >= 1,
    );
    await first!.stop("SIGKILL");
    const killedAt = Date.now();
    expect(telegram.sent(token)).toEqual([]);

    await until(
      () => repliesTo(token, ids),
      (counts) => counts.every((count) => count >= 1),
      TAKEOVER_MS,
    );
    expect(Date.now() - killedAt).toBeLessThan(TAKEOVER_MS);
    await until(
      () => telegram.pending(token),
      (n) => n === 0,
    );
    await quiet(1_000);
    expect(repliesTo(token, ids)).toEqual([1, 1, 1]);
    expect(second.alive).toBe(true);

    // The crash after the reply went out and before its sender heard back: Telegram shows the message, and the
    // process that takes over must not send it again.
    connectors.push(await startDeployable("services/connectors", connectorsEnv));
    telegram.holdSendAnswers(30_000);
    openai.reply("Sent once.");
    const held = telegram.send(token, { chat: { id: 950, type: "private" }, text: "One more" }).messageId;
    await until(
      () => repliesTo(token, [held])[0],
      (count) => count === 1,
    );
    await second.stop("SIGKILL");
    // The third process takes over, reads the update again, finds its reply claimed and moves past it.
    await until(
      () => telegram.pending(token),
      (n) => n === 0,
      TAKEOVER_MS,
    );
    const after = telegram.send(token, {
      chat: { id: 951, type: "private" },
      text: "Still there?",
    }).messageId;
    await until(
      () => repliesTo(token, [after])[0],
      (count) => count === 1,
    );
    await quiet(1_000);
    expect(repliesTo(token, [held, after])).toEqual([1, 1]);
    expect(telegram.sent(token)).toHaveLength(5);
  }, 150_000);
});
