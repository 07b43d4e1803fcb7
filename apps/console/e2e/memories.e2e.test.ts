import { type FakeEmbeddingsServer, startFakeEmbeddings } from "@agentry/conversation/testing";
import type { Browser } from "playwright-core";
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
 * The Memories page in Chromium against the real server, whose recall uses a fake OpenAI-compatible embeddings
 * server: a user's memories listed, searched, added, edited and deleted, and what is added reaching that user's
 * prompt by meaning.
 */
let server: RunningServer;
let embeddings: FakeEmbeddingsServer;
let browser: Browser;
let adminKey = "";
const ACCOUNT = "console-memories";

const api = (method: string, path: string, body?: unknown) => request(server, adminKey, method, path, body);

beforeAll(async () => {
  embeddings = await startFakeEmbeddings();
  server = await startServer({
    env: {
      EMBEDDINGS_PROVIDER: "openai",
      EMBEDDINGS_BASE_URL: embeddings.baseURL,
      EMBEDDINGS_MODEL: "fake-embed",
    },
  });
  adminKey = await seedAccount(server, ACCOUNT);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await embeddings?.close();
});

describe("the Memories page", () => {
  it("lists, searches, adds, edits and deletes a user's memories, and what it adds reaches the user's prompt", async () => {
    const created = await api("POST", "/v1/agents", { name: "Rememberer", modelProvider: "openai" });
    expect(created.status).toBe(201);
    const agentId = (created.body!.data as { id: string }).id;
    for (const text of ["The user plays the cello.", "The user lives in Lisbon."]) {
      expect((await api("POST", `/v1/agents/${agentId}/memories`, { userId: "ada", text })).status).toBe(201);
    }
    expect(
      (
        await api("POST", `/v1/agents/${agentId}/memories`, {
          userId: "bob",
          text: "The user lives in Oslo.",
        })
      ).status,
    ).toBe(201);

    const context = await newContext(browser);
    const page = await signIn(server, context, ACCOUNT);
    await page.getByRole("link", { name: "Memories" }).click();
    await page.getByRole("heading", { level: 1, name: "Memories" }).waitFor();
    await page.getByLabel("User id").fill("ada");
    await page.getByRole("button", { name: "Show memories" }).click();
    const list = page.getByRole("list", { name: "Memories of ada" });
    await list.getByText("The user lives in Lisbon.", { exact: true }).waitFor();
    expect(await list.getByRole("listitem").allTextContents()).toEqual([
      expect.stringContaining("The user lives in Lisbon."),
      expect.stringContaining("The user plays the cello."),
    ]);
    // Never another user's.
    expect(await page.getByText("Oslo").count()).toBe(0);
    expect(page.url()).toContain(`agent=${agentId}`);
    expect(page.url()).toContain("user=ada");

    await page.getByLabel("Search").fill("cellos");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await list
      .getByRole("listitem")
      .first()
      .getByText("The user plays the cello.", { exact: true })
      .waitFor();
    await expect.poll(() => list.getByRole("listitem").count()).toBe(1);
    await page.getByLabel("Search").fill("violin");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByText("No memory of ada matches “violin”.").waitFor();
    await page.getByRole("button", { name: "Clear search" }).click();
    await expect.poll(() => list.getByRole("listitem").count()).toBe(2);

    await page.getByLabel("New memory of ada").fill("The user has a dog named Biscuit.");
    await page.getByRole("button", { name: "Add memory" }).click();
    await list
      .getByRole("listitem")
      .first()
      .getByText("The user has a dog named Biscuit.", { exact: true })
      .waitFor();
    expect(await list.getByRole("listitem").first().textContent()).toContain("added by hand");

    const lisbon = list.getByRole("listitem").filter({ hasText: "Lisbon" });
    await lisbon.getByRole("button", { name: "Edit" }).click();
    await list.getByLabel("Memory text").fill("The user lives in Porto.");
    await list.getByRole("button", { name: "Save" }).click();
    await list.getByText("The user lives in Porto.", { exact: true }).waitFor();
    expect(await list.getByText("Lisbon").count()).toBe(0);

    await list
      .getByRole("listitem")
      .filter({ hasText: "cello" })
      .getByRole("button", { name: "Delete" })
      .click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete memory" }).click();
    await expect.poll(() => list.getByText("cello").count()).toBe(0);
    await screenshot(page, "memories");

    // What the page left is what the API has.
    const listed = await api("GET", `/v1/agents/${agentId}/memories?userId=ada`);
    expect((listed.body!.data as { text: string }[]).map((memory) => memory.text)).toEqual([
      "The user lives in Porto.",
      "The user has a dog named Biscuit.",
    ]);
    // The memory added on the page got its vector, and a paraphrase that shares no word with it recalls it.
    await expect
      .poll(() => embeddings.inputs.flat().includes("The user has a dog named Biscuit."))
      .toBe(true);
    server.openai.reply("Biscuit, I believe.");
    const sent = await api("POST", `/v1/agents/${agentId}/messages`, {
      text: "What do I call my puppy?",
      userId: "ada",
    });
    expect(sent.status).toBe(200);
    const system = String(
      server.openai.lastRequest.body.messages.find((message) => message.role === "system")?.content,
    );
    expect(system).toContain("- The user has a dog named Biscuit.");
    await context.close();
  });
});
