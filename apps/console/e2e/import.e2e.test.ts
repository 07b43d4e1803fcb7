import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accessibilityViolations,
  launchBrowser,
  newContext,
  type RunningServer,
  screenshot,
  signIn,
  startServer,
} from "./harness.js";

/*
 * The import page in Chromium against the real server (configured for openai only): a character file is checked
 * first and its agent shown before it is created; the warnings of the file (plugins kept disabled, knowledge
 * references not fetched, a provider not configured here) are shown before and after; "use this server's default
 * model" imports it with the server's default provider and model.
 */
let server: RunningServer;
let browser: Browser;
let page: Page;
let key = "";
const ACCOUNT = "console-import-e2e";

const character = {
  name: "Quill",
  bio: ["Keeps a tidy notebook.", "Answers in short sentences."],
  modelProvider: "anthropic",
  settings: { model: "claude-3-haiku-20240307" },
  plugins: ["@elizaos/plugin-bootstrap"],
  knowledge: ["Notebooks have pages.", { path: "notes/handbook.md" }],
};

async function agents(): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${server.url}/v1/agents?limit=100`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return ((await res.json()) as { data: Record<string, unknown>[] }).data;
}

async function choose(file: unknown) {
  await page.getByLabel("Character file (choose or drop one here)").setInputFiles({
    name: "quill.character.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify(file)),
  });
}

beforeAll(async () => {
  server = await startServer();
  await server.cli(["accounts", "create", ACCOUNT]);
  key = (await server.cli(["keys", "create", "--account", ACCOUNT, "--name", "e2e"]))
    .trim()
    .split("\n")
    .at(-1)!;
  browser = await launchBrowser();
  page = await signIn(server, await newContext(browser), ACCOUNT);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("importing an elizaOS character in the console", () => {
  it("previews the agent with the file's warnings, and creates it only when asked", async () => {
    await choose(character);
    const preview = page.getByRole("region", { name: "Preview of quill.character.json" });
    await preview.waitFor();
    await expect(
      preview.getByText("Keeps a tidy notebook. Answers in short sentences.").isVisible(),
    ).resolves.toBe(true);
    await expect(preview.getByText("anthropic / claude-3-haiku-20240307").isVisible()).resolves.toBe(true);
    await expect(preview.getByText("@elizaos/plugin-bootstrap (disabled)").isVisible()).resolves.toBe(true);
    const warnings = preview.getByRole("region", { name: "Warnings of this file" });
    await expect(
      warnings.getByRole("listitem").filter({ hasText: "ANTHROPIC_API_KEY" }).count(),
    ).resolves.toBe(1);
    await expect(warnings.getByRole("listitem").filter({ hasText: "plugins[0]" }).count()).resolves.toBe(1);
    await expect(warnings.getByRole("listitem").filter({ hasText: "knowledge[1]" }).count()).resolves.toBe(1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "import-01-preview");
    // Nothing is stored by the preview.
    expect(await agents()).toEqual([]);

    await preview.getByRole("button", { name: "Create agent" }).click();
    await page.getByText("Imported Quill.").waitFor();
    const shown = page.getByRole("region", { name: "Warnings of the import of Quill" });
    await expect(shown.getByRole("listitem").filter({ hasText: "ANTHROPIC_API_KEY" }).count()).resolves.toBe(
      1,
    );
    await expect(
      shown.getByRole("listitem").filter({ hasText: "kept as {name, enabled: false}" }).count(),
    ).resolves.toBe(1);
    await expect(shown.getByRole("listitem").filter({ hasText: "no file is read" }).count()).resolves.toBe(1);
    await screenshot(page, "import-02-imported-with-warnings");
    const [stored] = await agents();
    expect(stored).toMatchObject({
      name: "Quill",
      modelProvider: "anthropic",
      model: "claude-3-haiku-20240307",
    });
  });

  it("imports with this server's default model when asked, keeping the file's in personality", async () => {
    await page.getByLabel("Use this server's default model").check();
    await choose({ ...character, name: "Quill Two" });
    const preview = page.getByRole("region", { name: "Preview of quill.character.json" });
    await preview.getByText("this server's default provider / its default model").waitFor();
    const warnings = preview.getByRole("region", { name: "Warnings of this file" });
    await expect(
      warnings.getByRole("listitem").filter({ hasText: "ANTHROPIC_API_KEY" }).count(),
    ).resolves.toBe(0);
    await expect(warnings.getByRole("listitem").filter({ hasText: "useDefaultModel" }).count()).resolves.toBe(
      1,
    );

    // Unchecked again, the same file is checked again as it is.
    await page.getByLabel("Use this server's default model").uncheck();
    await preview.getByText("anthropic / claude-3-haiku-20240307").waitFor();
    await page.getByLabel("Use this server's default model").check();
    await preview.getByText("this server's default provider / its default model").waitFor();

    await preview.getByRole("button", { name: "Create agent" }).click();
    await page.getByText("Imported Quill Two.").waitFor();
    const stored = (await agents()).find((agent) => agent.name === "Quill Two");
    expect(stored).toMatchObject({
      modelProvider: null,
      model: null,
      personality: { sourceModelProvider: "anthropic", sourceModel: "claude-3-haiku-20240307" },
    });
  });

  it("cancels a preview without creating anything", async () => {
    const before = (await agents()).length;
    await choose({ ...character, name: "Quill Three" });
    const preview = page.getByRole("region", { name: "Preview of quill.character.json" });
    await preview.getByRole("button", { name: "Cancel" }).click();
    await preview.waitFor({ state: "detached" });
    expect((await agents()).length).toBe(before);
  });

  it("shows the warning of an agent created in the form with a provider not configured here", async () => {
    await page.goto(`${server.url}/console/agents/new`);
    await page.getByLabel("Name").fill("Sorrel");
    await page.getByLabel("Model provider").selectOption("anthropic");
    await page.getByRole("button", { name: "Create agent" }).click();
    const shown = page.getByRole("region", { name: "Warnings of this save" });
    await shown.getByRole("listitem").filter({ hasText: "ANTHROPIC_API_KEY" }).waitFor();
    expect((await agents()).find((agent) => agent.name === "Sorrel")).toMatchObject({
      modelProvider: "anthropic",
    });
  });
});
