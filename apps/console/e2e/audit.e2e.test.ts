import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accessibilityViolations,
  newContext,
  openConsole,
  type RunningServer,
  request,
  screenshot,
} from "./harness.js";

/**
 * The Audit log page in Chromium against the real server: an agent created and then renamed with a key shows as
 * two events, newest first, the rename's change expanding to its values before and after; a filter narrows the
 * list, pages follow the cursors, and the export downloads what the filters match as NDJSON.
 */
let server: RunningServer;
let browser: Browser;
let page: Page;
let adminKey = "";
let keyId = "";
const ACCOUNT = "console-audit";

let opened: Awaited<ReturnType<typeof openConsole>> | undefined;

beforeAll(async () => {
  opened = await openConsole(ACCOUNT);
  ({ server, adminKey, browser, page } = opened);
  const keys = await request(server, adminKey, "GET", "/v1/api-keys");
  keyId = (keys.body!.data as { id: string }[])[0]!.id;
}, 180_000);

afterAll(() => opened?.close());

describe("the audit log", () => {
  it("shows a create and an update newest first, with the update's changes, filters and an export", async () => {
    const created = await request(server, adminKey, "POST", "/v1/agents", {
      name: "Ada",
      modelProvider: "openai",
    });
    expect(created.status).toBe(201);
    const agentId = (created.body!.data as { id: string }).id;
    const updated = await request(server, adminKey, "PATCH", `/v1/agents/${agentId}`, {
      name: "Ada Lovelace",
    });
    expect(updated.status).toBe(200);

    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    const table = page.getByRole("table", { name: "Audit events, newest first" });
    const update = table.getByRole("row").filter({ hasText: "agent.update" });
    await update.waitFor();
    const actions = await table.locator(":scope > tbody > tr > td:nth-child(3)").allTextContents();
    expect(actions.indexOf("agent.update")).toBeLessThan(actions.indexOf("agent.create"));
    expect(actions.indexOf("agent.create")).toBeGreaterThanOrEqual(0);
    await expect(update.textContent()).resolves.toContain(`key ${keyId}`);
    await expect(update.textContent()).resolves.toContain(agentId);

    await update.getByRole("button", { name: /Show \d+ change/ }).click();
    const changes = page.getByRole("table", { name: "Changes of agent.update" });
    await changes.waitFor();
    const name = changes.getByRole("row").filter({ hasText: "name" });
    await expect(name.getByRole("cell").allTextContents()).resolves.toEqual(['"Ada"', '"Ada Lovelace"']);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "audit-log");

    // At 360 px, in dark mode, the page fits the screen with its filters one under another.
    const narrow = await newContext(browser, { width: 360, height: 740, dark: true });
    await narrow.addCookies(await page.context().cookies());
    const small = await narrow.newPage();
    await small.goto(`${server.url}/console/settings/audit`);
    await small.getByRole("row").filter({ hasText: "agent.update" }).waitFor();
    const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    expect(await accessibilityViolations(small)).toEqual([]);
    await narrow.close();

    await page.getByLabel("Action").fill("agent.create");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect
      .poll(() => table.locator(":scope > tbody > tr > td:nth-child(3)").allTextContents())
      .toEqual(["agent.create"]);

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Export NDJSON" }).click(),
    ]);
    const lines = (await readFile((await download.path())!, "utf8")).trim().split("\n");
    expect(lines.map((line) => JSON.parse(line) as { action: string; target: { id: string } })).toEqual([
      expect.objectContaining({ action: "agent.create", target: expect.objectContaining({ id: agentId }) }),
    ]);
  });

  it("pages through the record with previous and next", async () => {
    for (let i = 0; i < 21; i++) {
      const made = await request(server, adminKey, "POST", "/v1/agents", {
        name: `Paged ${i}`,
        modelProvider: "openai",
      });
      expect(made.status).toBe(201);
    }
    await page.goto(`${server.url}/console/settings/audit`);
    const cells = page
      .getByRole("table", { name: "Audit events, newest first" })
      .locator(":scope > tbody > tr > td:nth-child(4)");
    await expect.poll(() => cells.count()).toBe(20);
    const first = await cells.allTextContents();
    expect(first[0]).toContain("agent");
    await page.getByRole("button", { name: "Next page" }).click();
    await expect.poll(async () => (await cells.allTextContents())[0]).not.toBe(first[0]);
    const second = await cells.allTextContents();
    expect(second.some((cell) => first.includes(cell))).toBe(false);
    await page.getByRole("button", { name: "Previous page" }).click();
    await expect.poll(() => cells.allTextContents()).toEqual(first);
  });
});
