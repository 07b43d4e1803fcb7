import { readFile } from "node:fs/promises";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accessibilityViolations,
  launchBrowser,
  layoutShift,
  newContext,
  type RunningServer,
  request,
  screenshot,
  seedAccount,
  startReceiver,
  startServer,
} from "./harness.js";

/**
 * The console in Chromium against the real server (`pnpm start`'s entry point on a temp DATA_DIR, the fake
 * OpenAI provider behind it): every flow a person runs, through the pages only, checked through the API too.
 */
let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const ACCOUNT = "console-e2e";

const api = (method: string, path: string, key: string, body?: unknown) =>
  request(server, key, method, path, body);

async function go(path: string) {
  await page.goto(`${server.url}/console${path}`);
  await page.locator("main h1").waitFor();
}

async function expectAccessible(name: string) {
  expect(await accessibilityViolations(page), name).toEqual([]);
}

let adminKey = "";
/** Uncaught errors and Content-Security-Policy refusals in any page: there must be none. */
const pageProblems: string[] = [];

beforeAll(async () => {
  server = await startServer();
  adminKey = await seedAccount(server, ACCOUNT);
  browser = await launchBrowser();
  context = await newContext(browser);
  context.on("page", (opened) => watch(opened));
  page = await context.newPage();
}, 120_000);

function watch(watched: Page) {
  watched.on("pageerror", (error) => pageProblems.push(`uncaught: ${error.message}`));
  watched.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) {
      pageProblems.push(`CSP: ${message.text()}`);
    }
  });
}

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the web console in Chromium", () => {
  it("signs in with a one-time link, which then no longer works", async () => {
    const link = await server.signInLink(ACCOUNT);
    await page.goto(link);
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor();
    // The token left the address at once.
    expect(page.url()).not.toContain("token=");
    await expect(page.getByText(ACCOUNT, { exact: true }).isVisible()).resolves.toBe(true);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "agentry_session")!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe("Strict");
    // The rate-limit state of the latest response is on every page.
    await page.getByText(/\d+\/100000 requests left/).waitFor();
    await screenshot(page, "01-signed-in-agents");

    const other = await newContext(browser);
    const second = await other.newPage();
    await second.goto(link);
    await second.getByRole("alert").waitFor();
    expect(await second.getByRole("alert").textContent()).toMatch(/invalid, used or expired/);
    await other.close();
  });

  it("creates an API key shown once, which works with an HTTP call, and revokes it", async () => {
    await go("/settings/api-keys");
    await page.getByLabel("Name").fill("ci-from-console");
    await page.getByRole("button", { name: "Create key" }).click();
    const field = page.getByRole("textbox", { name: "New key ci-from-console" });
    await field.waitFor();
    await expect(page.getByText("it is shown only this once").isVisible()).resolves.toBe(true);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    await screenshot(page, "02-api-key-created");
    const key = await field.inputValue();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    // The browser keeps no key: nothing in storage, and the page forgets it once dismissed.
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))).toBe("{}");

    expect((await api("GET", "/v1/agents", key)).status).toBe(200);
    await page.getByRole("button", { name: "I have stored it" }).click();
    const row = page.getByRole("row").filter({ hasText: "ci-from-console" });
    await row.waitFor();
    await expectAccessible("api keys");

    await row.getByRole("button", { name: /Revoke/ }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke this key?" });
    await dialog.getByRole("button", { name: "Revoke key" }).click();
    await row.waitFor({ state: "detached" });
    // Revoked through this gateway: refused at once.
    expect((await api("GET", "/v1/agents", key)).status).toBe(401);
  });

  it("creates, edits, deactivates and deletes an agent", async () => {
    await go("/agents");
    await page.getByRole("link", { name: "New agent" }).click();
    await page.getByRole("heading", { level: 1, name: "New agent" }).waitFor();
    await page.getByLabel("Name").fill("Ada");
    await page.getByRole("button", { name: "Add to bio" }).click();
    await page.getByLabel("Bio 1", { exact: true }).fill("Counts things carefully.");
    await page.getByRole("button", { name: "Add to goals" }).click();
    await page.getByLabel("Goals 1", { exact: true }).fill("Help with arithmetic.");
    await page.getByLabel("Model provider").selectOption("openai");
    await page.getByRole("button", { name: "Add to personality" }).click();
    await page.getByLabel("Personality key 1").fill("tone");
    await page.getByLabel("Personality value 1").fill("precise");
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { level: 1, name: "Edit agent" }).waitFor();
    await page.getByText("Created Ada.").waitFor();
    await expectAccessible("agent form");
    await screenshot(page, "03-agent-edit");

    await page.getByLabel("Name").fill("Ada Lovelace");
    await page.getByLabel("Bio 1", { exact: true }).fill("Counts things very carefully.");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved Ada Lovelace.").waitFor();
    const list = await api("GET", "/v1/agents?sortBy=name&order=asc", adminKey);
    const ada = (list.body!.data as { name: string; bio: string[]; personality: unknown; id: string }[]).find(
      (a) => a.name === "Ada Lovelace",
    )!;
    expect(ada.bio).toEqual(["Counts things very carefully."]);
    expect(ada.personality).toEqual({ tone: "precise" });

    // A bad field is answered as the API words it.
    await page.getByLabel("Settings (JSON)").fill('{"temperature": 7}');
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("INVALID_REQUEST");
    await page.getByLabel("Settings (JSON)").fill("{}");

    await page.getByRole("link", { name: "← All agents" }).click();
    const row = page.getByRole("row").filter({ hasText: "Ada Lovelace" });
    await row.getByRole("button", { name: /Deactivate/ }).click();
    await row.getByText("inactive", { exact: true }).waitFor();
    await page.getByLabel("Status").selectOption("inactive");
    await row.waitFor();
    await page.getByLabel("Status").selectOption("");
    await expectAccessible("agents");
    await row.getByRole("button", { name: /Delete/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete agent" }).click();
    await page.getByText("Deleted Ada Lovelace.").waitFor();
    expect((await api("GET", `/v1/agents/${ada.id}`, adminKey)).status).toBe(404);
  });

  it("imports an elizaOS character by file and exports it back", async () => {
    await go("/agents");
    const character = {
      name: "Eliza",
      bio: "A friendly character.",
      lore: ["Born in a test."],
      topics: ["testing"],
      modelProvider: "openai",
      settings: { secrets: {} },
    };
    await page.getByLabel("Character file (choose or drop one here)").setInputFiles({
      name: "eliza.character.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(character)),
    });
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByText("Imported Eliza.").waitFor();
    const row = page.getByRole("row").filter({ hasText: "Eliza" });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      row.getByRole("link", { name: /Export/ }).click(),
    ]);
    const exported = JSON.parse(await readFile((await download.path())!, "utf8")) as Record<string, unknown>;
    expect(exported.name).toBe("Eliza");
    expect(exported.bio).toEqual(["A friendly character."]);
    expect(exported.topics).toEqual(["testing"]);
    // Fields a 1.x file has no place for travel in settings.agentry, so that nothing is lost.
    expect(JSON.stringify(exported.settings)).toContain("Born in a test.");
    await screenshot(page, "04-agents-imported");
  });

  it("streams a reply as it arrives, renders markdown, and stops a reply on request", async () => {
    const created = await api("POST", "/v1/agents", adminKey, { name: "Chatty", modelProvider: "openai" });
    const agentId = (created.body!.data as { id: string }).id;
    server.openai.reply("Here is **bold** and `code`:\n\n```js\nconsole.log(1)\n```\nDone.", {
      chunks: ["Here is **bold** ", "and `code`:\n\n", "```js\nconsole.log(1)\n```\n", "Done."],
      chunkDelayMs: 400,
    });
    await go(`/chat?agent=${agentId}`);
    await page.getByLabel("Agent").selectOption(agentId);
    await page.getByLabel("User id").fill("ada-user");
    await page.getByLabel("Room id").fill("lab");
    await page.getByLabel("Message").fill("Show me formatting");
    await page.getByRole("button", { name: "Send" }).click();
    const reply = page.locator(".turn.assistant").last();
    // The first piece shows while the rest is still coming.
    await reply.locator("strong", { hasText: "bold" }).waitFor();
    expect(await reply.getAttribute("aria-busy")).toBe("true");
    await reply.locator("pre code", { hasText: "console.log(1)" }).waitFor();
    await reply.getByText("tokens").waitFor();
    await screenshot(page, "05-chat-streamed");

    server.openai.reply(Array.from({ length: 60 }, (_, i) => `word${i}`).join(" "), { chunkDelayMs: 250 });
    await page.getByLabel("Message").fill("Tell me a long story");
    await page.getByRole("button", { name: "Send" }).click();
    const long = page.locator(".turn.assistant").last();
    await long.getByText("word1", { exact: false }).waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await long.getByText("Stopped.").waitFor();
    const shown = await long.locator(".markdown").textContent();
    expect(shown).not.toContain("word59");
    await page.getByRole("button", { name: "Send" }).waitFor();
    await expectAccessible("chat");

    // An inactive agent's refusal is shown as the API words it.
    await api("PATCH", `/v1/agents/${agentId}`, adminKey, { status: "inactive" });
    await page.getByLabel("Message").fill("Are you there?");
    await page.getByRole("button", { name: "Send" }).click();
    await page
      .locator(".turn.assistant")
      .last()
      .getByText(/AGENT_INACTIVE/)
      .waitFor();
    await api("PATCH", `/v1/agents/${agentId}`, adminKey, { status: "active" });
  });

  it("pages through a conversation's history by scrolling, and deletes the conversation", async () => {
    const created = await api("POST", "/v1/agents", adminKey, { name: "Historian", modelProvider: "openai" });
    const agentId = (created.body!.data as { id: string }).id;
    for (let i = 1; i <= 15; i++) {
      const sent = await api("POST", `/v1/agents/${agentId}/messages`, adminKey, {
        text: `question ${i}`,
        userId: "reader",
        roomId: "archive",
      });
      expect(sent.status).toBe(200);
    }
    await go("/history");
    await page.getByLabel("Agent").selectOption(agentId);
    await page.getByRole("button", { name: /reader in archive/ }).click();
    const messages = page.getByRole("list", { name: "Messages, newest first" }).getByRole("listitem");
    await messages.first().waitFor();
    expect(await messages.count()).toBe(20);
    await page.locator(".sentinel").scrollIntoViewIfNeeded();
    await page.getByText("The beginning of the conversation.").waitFor();
    expect(await messages.count()).toBe(30);
    await expect(messages.last().textContent()).resolves.toContain("question 1");
    await screenshot(page, "06-history");
    await expectAccessible("history");

    // A user's data: exported as NDJSON, then erased in every agent.
    await page.getByLabel("User id").fill("reader");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Export" }).click(),
    ]);
    const lines = (await readFile((await download.path())!, "utf8")).trim().split("\n");
    expect(lines).toHaveLength(30);
    expect(JSON.parse(lines[0]!)).toMatchObject({ agentId, userId: "reader" });

    await page.getByRole("button", { name: "Delete conversation" }).first().click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete conversation" }).click();
    await page.getByText("No conversations yet.").waitFor();
    const left = await api("GET", `/v1/agents/${agentId}/messages?userId=reader`, adminKey);
    expect(left.body!.data).toEqual([]);

    await page.getByLabel("User id").fill("ada-user");
    await page.getByRole("button", { name: "Erase" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Erase user data" }).click();
    await page.getByText(/Erased [1-9]\d* message\(s\) of ada-user\./).waitFor();
  });

  it("charts usage by day and by hour, grouped by agent", async () => {
    await go("/usage");
    await page.locator(".chart canvas").first().waitFor();
    await page.getByLabel("By", { exact: true }).selectOption("hour");
    await page.getByLabel("Group by").selectOption("agentId");
    await page.getByRole("cell", { name: "Historian" }).waitFor();
    await page.locator(".chart canvas").first().waitFor();
    await expectAccessible("usage");
    await screenshot(page, "07-usage");
  });

  it("adds a webhook endpoint with its secret shown once, sends a test event and redelivers it", async () => {
    const receiver = await startReceiver();
    try {
      await go("/webhooks");
      await page.getByLabel("URL").fill(receiver.url);
      await page.getByLabel("Description (optional)").fill("e2e receiver");
      await page.getByRole("button", { name: "Add endpoint" }).click();
      const secret = page.getByRole("textbox", { name: `Signing secret of ${receiver.url}` });
      await secret.or(page.getByRole("alert")).waitFor();
      expect(
        await page.getByRole("alert").count(),
        (await page.getByRole("alert").allTextContents()).join(),
      ).toBe(0);
      expect(await secret.inputValue()).toMatch(/^whsec_/);
      await page.getByRole("button", { name: "I have stored it" }).click();
      await page.getByRole("button", { name: "Send test event" }).click();
      await page.getByText(`Sent a webhook.test event to ${receiver.url}.`).waitFor();
      const succeeded = page.locator(".badge.succeeded");
      for (let i = 0; i < 40 && (await succeeded.count()) === 0; i++) {
        await page.getByRole("button", { name: "Refresh" }).click();
        await page.waitForTimeout(250);
      }
      await succeeded.first().waitFor();
      expect(receiver.received).toContainEqual(expect.objectContaining({ type: "webhook.test" }));
      await page
        .getByRole("button", { name: /Redeliver/ })
        .first()
        .click();
      for (let i = 0; i < 40 && receiver.received.length < 2; i++) await page.waitForTimeout(250);
      expect(receiver.received.length).toBeGreaterThanOrEqual(2);
      await expectAccessible("webhooks");
      await screenshot(page, "08-webhooks");
    } finally {
      await receiver.close();
    }
  });

  it("is usable at 360 px and in dark mode, with no serious accessibility violations", async () => {
    const cookies = await context.cookies();
    for (const options of [
      { width: 360, height: 740, dark: false, name: "360" },
      { width: 1440, height: 900, dark: true, name: "dark" },
    ]) {
      const other = await newContext(browser, options);
      other.on("page", (opened) => watch(opened));
      await other.addCookies(cookies);
      const small = await other.newPage();
      for (const path of ["/agents", "/chat", "/history", "/usage", "/webhooks", "/settings/api-keys"]) {
        await small.goto(`${server.url}/console${path}`);
        await small.locator("main h1").waitFor();
        await small.waitForLoadState("networkidle");
        const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${options.name} ${path} scrolls sideways`).toBeLessThanOrEqual(1);
        expect(await accessibilityViolations(small), `${options.name} ${path}`).toEqual([]);
        // Loading shifts nothing already shown ("good" is under 0.1).
        expect(await layoutShift(small), `${options.name} ${path} layout shift`).toBeLessThan(0.1);
        if (path === "/agents" || path === "/chat")
          await screenshot(small, `09-${options.name}${path.replace(/\//g, "-")}`);
      }
      await other.close();
    }
  });

  it("moves through the navigation by keyboard", async () => {
    await go("/agents");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Agents");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Chat" }).waitFor();

    // A confirmation opens from the keyboard with focus inside it, and Escape cancels it.
    await go("/agents");
    const row = page.getByRole("row").filter({ hasText: "Eliza" });
    await row.getByRole("button", { name: /Delete/ }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Delete Eliza?" });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.closest("dialog") !== null)).toBe(true);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    await row.waitFor();
  });

  it("signs out, after which the session no longer works", async () => {
    await go("/agents");
    const before = (await context.cookies()).find((c) => c.name === "agentry_session")!.value;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to the Agentry console" }).waitFor();
    await screenshot(page, "10-signed-out");
    const res = await fetch(`${server.url}/v1/agents`, { headers: { cookie: `agentry_session=${before}` } });
    expect(res.status).toBe(401);
    await page.goto(`${server.url}/console/agents`);
    await page.getByRole("heading", { name: "Sign in to the Agentry console" }).waitFor();
  });

  it("met no uncaught error and no Content-Security-Policy refusal in any page", () => {
    expect(pageProblems).toEqual([]);
  });
});
