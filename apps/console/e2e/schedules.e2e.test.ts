import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, openConsole, type RunningServer, request, screenshot } from "./harness.js";

/**
 * The agent page's schedules panel in Chromium against the real server: a schedule added from the form, listed
 * with its next fire, paused and resumed, a bad time zone refused with the server's words, and deleted.
 */
let server: RunningServer;
let page: Page;
let adminKey = "";
const ACCOUNT = "console-schedules";

let opened: Awaited<ReturnType<typeof openConsole>> | undefined;

beforeAll(async () => {
  opened = await openConsole(ACCOUNT);
  ({ server, adminKey, page } = opened);
}, 120_000);

afterAll(() => opened?.close());

describe("the agent page's schedules", () => {
  it("adds a schedule, shows its next fire, pauses and resumes it, refuses a bad time zone, and deletes it", async () => {
    const created = await request(server, adminKey, "POST", "/v1/agents", {
      name: "Planner",
      modelProvider: "openai",
    });
    expect(created.status).toBe(201);
    const agentId = (created.body!.data as { id: string }).id;
    await page.goto(`${server.url}/console/agents/${agentId}/edit`);
    const panel = page.locator("section.schedules");
    await page.getByRole("heading", { level: 2, name: "Schedules" }).waitFor();
    await panel.getByText("This agent has no schedules.").waitFor();

    await panel.getByLabel("Cron expression").fill("0 9 * * 1-5");
    await panel.getByLabel("Time zone").fill("Europe/Berlin");
    await panel.getByLabel("Message").fill("Post the morning summary.");
    await panel.getByRole("button", { name: "Add schedule" }).click();
    await panel.getByText(/Schedule created: next fire/).waitFor();
    const row = panel.locator("tr[data-schedule]");
    await row.getByText("0 9 * * 1-5", { exact: true }).waitFor();
    await row.getByText("Europe/Berlin", { exact: true }).waitFor();
    await row.getByText("Not fired yet").waitFor();

    const listed = await request(server, adminKey, "GET", `/v1/agents/${agentId}/schedules`);
    const schedule = (listed.body!.data as { id: string; nextFireAt: string; text: string }[])[0]!;
    expect(schedule.text).toBe("Post the morning summary.");
    expect(schedule.nextFireAt).not.toBeNull();
    // The next fire, as the browser writes a time: a date with the year in it.
    expect(await row.locator("td").nth(2).textContent()).toContain(
      String(new Date(schedule.nextFireAt).getFullYear()),
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "schedules-panel");

    await row.getByRole("button", { name: "Pause" }).click();
    await row.getByText("Paused", { exact: true }).waitFor();
    const paused = await request(server, adminKey, "GET", `/v1/agents/${agentId}/schedules/${schedule.id}`);
    expect((paused.body!.data as { enabled: boolean }).enabled).toBe(false);
    await row.getByRole("button", { name: "Resume" }).click();
    await row.getByRole("button", { name: "Pause" }).waitFor();

    await panel.getByLabel("Time zone").fill("Europe/Atlantis");
    await panel.getByLabel("Message").fill("Never stored.");
    await panel.getByRole("button", { name: "Add schedule" }).click();
    await panel
      .getByText(/IANA time zone/)
      .first()
      .waitFor();
    expect(await panel.locator("tr[data-schedule]").count()).toBe(1);

    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete schedule" }).click();
    await panel.getByText("This agent has no schedules.").waitFor();
    const gone = await request(server, adminKey, "GET", `/v1/agents/${agentId}/schedules/${schedule.id}`);
    expect(gone.status).toBe(404);
  }, 60_000);
});
