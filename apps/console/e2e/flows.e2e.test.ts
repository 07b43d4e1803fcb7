import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  launchBrowser,
  newContext,
  type RunningServer,
  request,
  screenshot,
  seedAccount,
  signIn,
  startServer,
} from "./harness.js";

/**
 * What a first-time user meets around the edges of the console, in Chromium against the real server: a second
 * sign-in link in the same tab, a chat left mid-reply or reloaded, history after a user's erasure, and a session
 * that ends while a form is being filled.
 */
let server: RunningServer;
let browser: Browser;
let adminKey = "";
const ACCOUNT = "console-flows";

const api = (method: string, path: string, body?: unknown) => request(server, adminKey, method, path, body);

async function newAgent(name: string): Promise<string> {
  const created = await api("POST", "/v1/agents", { name, modelProvider: "openai" });
  expect(created.status).toBe(201);
  return (created.body!.data as { id: string }).id;
}

/** A fresh tab (its own cookies) signed in to the account, on the Agents page. */
async function signedIn(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await newContext(browser);
  return { context, page: await signIn(server, context, ACCOUNT) };
}

beforeAll(async () => {
  server = await startServer();
  adminKey = await seedAccount(server, ACCOUNT);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the console's sign-in, chat, history and session flows", () => {
  it("takes a second sign-in link opened in the same tab, after a failed link and after signing out", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${server.url}/console/sign-in#token=${"x".repeat(43)}`);
    await page.getByRole("alert").waitFor();
    // The next link differs from the address only by its fragment: the browser does not load the page again.
    await page.goto(await server.signInLink(ACCOUNT));
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor({ timeout: 5_000 });

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in to the Agentry console" }).waitFor();
    expect(page.url()).toBe(`${server.url}/console/sign-in`);
    await page.goto(await server.signInLink(ACCOUNT));
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor({ timeout: 5_000 });
    expect(page.url()).not.toContain("token=");
    await context.close();
  });

  it("shows the stored conversation of the chosen agent, user and room, and keeps a reply left mid-stream", async () => {
    const first = await newAgent("Keeper");
    const second = await newAgent("Other");
    const { context, page } = await signedIn();
    server.openai.reply("Stored answer.");
    await page.goto(`${server.url}/console/chat?agent=${first}`);
    await page.getByLabel("User id").fill("ada");
    await page.getByLabel("Room id").fill("lab");
    await page.getByLabel("Message").fill("Remember me");
    await page.getByRole("button", { name: "Send" }).click();
    const transcript = page.getByRole("log", { name: "Conversation" });
    await transcript.getByText("tokens").waitFor();

    // A reload shows the stored conversation again, for the same agent, user and room.
    await page.reload();
    await transcript.getByText("Stored answer.").waitFor();
    await transcript.getByText("Remember me").waitFor();
    expect(await page.getByLabel("User id").inputValue()).toBe("ada");
    expect(await page.getByLabel("Room id").inputValue()).toBe("lab");

    // Another agent's conversation is its own.
    await page.getByLabel("Agent").selectOption(second);
    await transcript.getByText("Messages and replies appear here.").waitFor();
    expect(await transcript.textContent()).not.toContain("Stored answer.");
    await page.getByLabel("Agent").selectOption(first);
    await transcript.getByText("Stored answer.").waitFor();

    // Leaving mid-reply, for another page and back, then with a reload: the reply goes on and is all there.
    const words = Array.from({ length: 16 }, (_, i) => `part${i}`);
    server.openai.reply(words.join(" "), {
      chunks: words.map((w, i) => (i < words.length - 1 ? `${w} ` : w)),
      chunkDelayMs: 500,
    });
    await page.getByLabel("Message").fill("Tell me a long one");
    await page.getByRole("button", { name: "Send" }).click();
    await transcript.getByText("part1", { exact: false }).waitFor();
    await page.getByRole("link", { name: "History" }).click();
    await page.getByRole("heading", { level: 1, name: "History" }).waitFor();
    await page.getByRole("link", { name: "Chat" }).click();
    await transcript.getByText("part3", { exact: false }).waitFor();
    await page.reload();
    // Taken up again while still arriving, from where it was.
    await transcript.locator('.turn.assistant[aria-busy="true"]', { hasText: "part3" }).waitFor();
    await transcript.getByText("part15", { exact: false }).waitFor({ timeout: 20_000 });
    await page.locator(".turn.assistant").last().getByText("tokens").waitFor();
    await screenshot(page, "flows-chat-resumed");

    // The server has the whole reply too.
    const latest = async () => {
      const stored = await api(
        "GET",
        `/v1/agents/${first}/messages?userId=ada&roomId=lab&order=desc&limit=1`,
      );
      return (stored.body!.data as { text: string }[])[0]!.text;
    };
    await expect.poll(latest).toBe(words.join(" "));
    await context.close();
  });

  it("drops an erased user's conversations from History, and clears the old notice on a new error", async () => {
    const agentId = await newAgent("Forgetful");
    server.openai.reply("Noted.");
    const sent = await api("POST", `/v1/agents/${agentId}/messages`, { text: "Hello", userId: "erase-me" });
    expect(sent.status).toBe(200);
    const { context, page } = await signedIn();
    await page.getByRole("link", { name: "History" }).click();
    await page.getByLabel("Agent").selectOption(agentId);
    const conversation = page.getByRole("button", { name: /erase-me in default room/ });
    await conversation.waitFor();

    await page.getByLabel("User id").fill("erase-me");
    await page.getByRole("button", { name: "Erase", exact: true }).click();
    await page.getByRole("button", { name: "Erase user data" }).click();
    await page.getByText("Erased 2 message(s) of erase-me.").waitFor();
    // The server lists nothing of the user any more, and neither does the page.
    const listed = await api("GET", `/v1/agents/${agentId}/conversations?userId=erase-me`);
    expect(listed.body!.data).toEqual([]);
    await conversation.waitFor({ state: "detached", timeout: 5_000 });
    await page.getByText("No conversations yet.").waitFor();

    // A later failure is not shown beside the earlier success.
    await page.getByLabel("User id").fill("u".repeat(300));
    await page.getByRole("button", { name: "Erase", exact: true }).click();
    await page.getByRole("button", { name: "Erase user data" }).click();
    await page.getByRole("dialog").getByRole("alert").waitFor();
    expect(await page.getByText("Erased 2 message(s)").count()).toBe(0);
    await context.close();
  });

  it("keeps a form being filled when the session ends in another tab, says why, and restores it", async () => {
    const { context, page } = await signedIn();
    await page.goto(`${server.url}/console/agents/new`);
    await page.getByLabel("Name").fill("Half-made agent");
    const other = await context.newPage();
    await other.goto(`${server.url}/console/agents`);
    await other.getByRole("button", { name: "Sign out" }).click();
    await other.getByRole("heading", { level: 1, name: "Sign in to the Agentry console" }).waitFor();

    await page.getByRole("heading", { level: 1, name: "Sign in to the Agentry console" }).waitFor();
    await page.getByText("You signed out in another tab").waitFor();
    await page.getByText("The form you were filling in is kept").waitFor();
    await screenshot(page, "flows-session-ended");

    await page.goto(await server.signInLink(ACCOUNT));
    await page.getByRole("heading", { level: 1, name: "New agent" }).waitFor();
    await expect.poll(() => page.getByLabel("Name").inputValue()).toBe("Half-made agent");
    await page.getByText("The form you were filling in was restored").waitFor();

    // A session that ends without a word from another tab (its cookie gone) is noticed at the next request.
    await page.getByLabel("Name").fill("Second draft");
    await context.clearCookies();
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in to the Agentry console" }).waitFor();
    await page
      .getByText(/Not signed in|session has ended/)
      .first()
      .waitFor();
    await page.goto(await server.signInLink(ACCOUNT));
    await page.getByRole("heading", { level: 1, name: "New agent" }).waitFor();
    await expect.poll(() => page.getByLabel("Name").inputValue()).toBe("Second draft");
    await context.close();
  }, 120_000);
});
