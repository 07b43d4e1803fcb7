import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accessibilityViolations,
  launchBrowser,
  newContext,
  type RunningServer,
  request,
  seedAccount,
  signIn,
  startServer,
} from "./harness.js";

/**
 * Members in Chromium against the real server: an owner invites, changes a role and removes; a viewer signed in by
 * a link made for them sees the account and is refused what their role does not allow, in words that say why.
 */
let server: RunningServer;
let browser: Browser;
const ACCOUNT = "console-members";
let adminKey = "";

async function signInAs(member?: string): Promise<Page> {
  return signIn(server, await newContext(browser), ACCOUNT, member ? { member } : {});
}

beforeAll(async () => {
  server = await startServer();
  adminKey = await seedAccount(server, ACCOUNT);
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("members", () => {
  it("an owner invites a member, changes their role and removes them", async () => {
    const page = await signInAs();
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
    await page.getByRole("row", { name: /Owner/ }).waitFor();

    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByLabel("Name (optional)").fill("Ada");
    await page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.getByText("Invited ada@example.com as viewer.").waitFor();
    const row = page.getByRole("row", { name: /ada@example\.com/ });
    await expect(row.getByRole("combobox").inputValue()).resolves.toBe("viewer");
    expect(await accessibilityViolations(page)).toEqual([]);

    await row.getByRole("combobox").selectOption("developer");
    await page.getByText("ada@example.com is now developer.").waitFor();
    const listed = await request(server, adminKey, "GET", "/v1/members?order=asc");
    expect((listed.body!.data as { email: string; role: string }[]).map((m) => m.role)).toEqual([
      "owner",
      "developer",
    ]);

    await row.getByRole("button", { name: /Remove/ }).click();
    await page
      .getByRole("dialog", { name: "Remove this member?" })
      .getByRole("button", { name: "Remove member" })
      .click();
    await page.getByText("Removed ada@example.com.").waitFor();
    // The notice comes before the list is read again.
    await expect.poll(() => page.getByRole("row", { name: /ada@example\.com/ }).count()).toBe(0);
  });

  it("a viewer's session reads, and is refused a change with the reason", async () => {
    await request(server, adminKey, "POST", "/v1/members", { email: "vic@example.com", role: "viewer" });
    const page = await signInAs("vic@example.com");
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByRole("row", { name: /vic@example\.com/ }).waitFor();
    await page.getByLabel("Email").fill("eve@example.com");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.getByText(/Your role 'viewer' does not allow this operation/).waitFor();
    const after = await request(server, adminKey, "GET", "/v1/members");
    expect((after.body!.data as { email: string }[]).map((m) => m.email)).not.toContain("eve@example.com");
  });
});
