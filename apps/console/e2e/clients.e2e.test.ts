import { type FakeTelegram, startFakeTelegram } from "@agentry/connectors/testing";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, openConsole, type RunningServer, request, screenshot } from "./harness.js";

/**
 * The agent page's platform clients panel in Chromium against the real server, whose connectors run Telegram
 * against a local fake of the Bot API: a client's state as the server reports it, a token pasted there stored as
 * the agent's secret (and never shown again), the state moving to connected, and a rejected token's error.
 */
let server: RunningServer;
let telegram: FakeTelegram;
let context: BrowserContext;
let page: Page;
let adminKey = "";
let bots = 0;
const ACCOUNT = "console-clients";

const api = (method: string, path: string, body?: unknown) => request(server, adminKey, method, path, body);

async function newAgent(name: string, clients: unknown[]): Promise<string> {
  const created = await api("POST", "/v1/agents", { name, modelProvider: "openai", clients });
  expect(created.status).toBe(201);
  return (created.body!.data as { id: string }).id;
}

/** A bot the fake Bot API accepts: its token. */
function newBot(): string {
  const token = `${++bots}:console-token-${Date.now()}`;
  telegram.addBot(token, `agentry_console_${bots}_bot`);
  return token;
}

async function openAgent(id: string) {
  await page.goto(`${server.url}/console/agents/${id}/edit`);
  await page.getByRole("heading", { level: 2, name: "Platform clients" }).waitFor();
}

/** The card of one platform client on the page. */
const card = (name: string) => page.getByRole("article", { name: new RegExp(`^${name}`) });

let opened: Awaited<ReturnType<typeof openConsole>> | undefined;

beforeAll(async () => {
  telegram = await startFakeTelegram();
  opened = await openConsole(ACCOUNT, {
    server: {
      env: {
        TELEGRAM_API_URL: telegram.url,
        CONNECTORS_SYNC_INTERVAL_MS: "250",
        CONNECTORS_LEASE_MS: "3000",
      },
    },
  });
  ({ server, adminKey, context, page } = opened);
}, 120_000);

afterAll(async () => {
  await opened?.close();
  await telegram?.close();
});

describe("the agent page's platform clients", () => {
  it("shows a client stopped for its missing token, stores a pasted token unseen, and follows it to connected", async () => {
    const id = await newAgent("Teller", ["telegram"]);
    await openAgent(id);
    const telegramCard = card("Telegram");
    await telegramCard.getByText("Stopped").waitFor();
    await telegramCard.getByText("Paste the TELEGRAM_BOT_TOKEN below to start it.").waitFor();
    await telegramCard.getByLabel("Telegram bot token (not set)").waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);

    const token = newBot();
    await telegramCard.getByLabel("Telegram bot token (not set)").fill(token);
    await telegramCard.getByRole("button", { name: "Save token of Telegram" }).click();
    await page.getByText("Saved TELEGRAM_BOT_TOKEN of Telegram.").waitFor();
    // The page refreshes the state by itself until the connector has connected.
    await telegramCard.getByText("Connected", { exact: true }).waitFor({ timeout: 15_000 });
    await telegramCard.getByLabel("Telegram bot token (set)").waitFor();
    await screenshot(page, "clients-connected");

    const secrets = await api("GET", `/v1/agents/${id}/secrets`);
    expect((secrets.body!.data as { name: string }[]).map((secret) => secret.name)).toEqual([
      "TELEGRAM_BOT_TOKEN",
    ]);
    const clients = await api("GET", `/v1/agents/${id}/clients`);
    expect(clients.body!.data).toMatchObject([{ type: "telegram", state: "connected", lastError: null }]);
    expect(telegram.activePolls(token)).toBeGreaterThan(0);
    // Stored, the token is nowhere on the page: the field is empty and nothing echoes it.
    expect(await telegramCard.getByLabel("Telegram bot token (set)").inputValue()).toBe("");
    expect(await page.content()).not.toContain(token);
  });

  it("says a rejected token was rejected and what to do, and connects once a valid one is pasted", async () => {
    const id = await newAgent("Refused", ["telegram"]);
    await openAgent(id);
    const telegramCard = card("Telegram");
    await telegramCard.getByLabel("Telegram bot token (not set)").fill("0:not-a-token");
    await telegramCard.getByRole("button", { name: "Save token of Telegram" }).click();
    await telegramCard.getByText("Failed", { exact: true }).waitFor({ timeout: 15_000 });
    const clients = await api("GET", `/v1/agents/${id}/clients`);
    expect(clients.body!.data).toMatchObject([
      { type: "telegram", state: "failed", lastError: { code: "CLIENT_AUTH_FAILED" } },
    ]);
    // The platform's refusal as the server words it, then what to do about it.
    const [failed] = clients.body!.data as { lastError: { message: string } }[];
    const refusal = failed!.lastError.message.replace(/\.$/, "");
    await telegramCard
      .getByText(`${refusal}. Paste a valid token below: the client starts again once it is saved.`)
      .waitFor();
    await screenshot(page, "clients-rejected");

    await telegramCard.getByLabel("Telegram bot token (set)").fill(newBot());
    await telegramCard.getByRole("button", { name: "Save token of Telegram" }).click();
    await telegramCard.getByText("Connected", { exact: true }).waitFor({ timeout: 15_000 });
    await expect
      .poll(async () => (await api("GET", `/v1/agents/${id}`)).body!.data)
      .toMatchObject({ status: "active" });
  });

  it("adds a client from the page, with the token fields of its platform and the address it must call", async () => {
    const id = await newAgent("Newcomer", []);
    await openAgent(id);
    await page.getByText("This agent is on no platform.", { exact: false }).waitFor();
    await page.getByLabel("Add a client").selectOption("slack");
    await page.getByRole("button", { name: "Add client" }).click();
    await page.getByText("Added the Slack client.").waitFor();
    const slackCard = card("Slack");
    await slackCard.getByLabel("Slack bot token (not set)").waitFor();
    await slackCard.getByLabel("Slack signing secret (not set)").waitFor();
    await slackCard.getByText(`${server.url}/v1/connectors/slack/${id}`).waitFor();
    await slackCard
      .getByText("Paste the SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET below to start it.")
      .waitFor();
    const agent = await api("GET", `/v1/agents/${id}`);
    expect((agent.body!.data as { clients: unknown[] }).clients).toEqual(["slack"]);
    // The form's clients follow, so that saving the form does not take the client away again.
    expect(JSON.parse(await page.getByLabel("Clients (JSON)").inputValue())).toEqual(["slack"]);

    await slackCard.getByLabel("Slack signing secret (not set)").fill("signing-secret-value");
    await slackCard.getByRole("button", { name: "Save tokens of Slack" }).click();
    await slackCard.getByLabel("Slack signing secret (set)").waitFor();
    await slackCard.getByLabel("Slack bot token (not set)").waitFor();
    const secrets = await api("GET", `/v1/agents/${id}/secrets`);
    expect((secrets.body!.data as { name: string }[]).map((secret) => secret.name)).toEqual([
      "SLACK_SIGNING_SECRET",
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it("shows the address Telegram calls for a bot in webhook mode, and none for one that polls", async () => {
    const pushed = await newAgent("Pushed", [{ type: "telegram", mode: "webhook" }]);
    await openAgent(pushed);
    await card("Telegram").getByText(`${server.url}/v1/connectors/telegram/${pushed}`).waitFor();
    const polling = await newAgent("Polling", ["telegram"]);
    await openAgent(polling);
    await card("Telegram").getByText("Stopped").waitFor();
    expect(await card("Telegram").getByText("/v1/connectors/").count()).toBe(0);
  });

  it("refuses an empty save with what to do", async () => {
    const id = await newAgent("Empty", ["telegram"]);
    await openAgent(id);
    await card("Telegram").getByRole("button", { name: "Save token of Telegram" }).click();
    await card("Telegram").getByRole("alert").getByText("Paste a token to save.").waitFor();
    const secrets = await api("GET", `/v1/agents/${id}/secrets`);
    expect(secrets.body!.data).toEqual([]);
  });
});
