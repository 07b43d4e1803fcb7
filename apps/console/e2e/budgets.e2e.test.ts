import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, openConsole, type RunningServer, request } from "./harness.js";

/**
 * Budgets in Chromium against the real server: an account budget and an agent budget made in the page, listed with
 * the spend the API reports after a message, one edited, one deleted, and a limit the API refuses shown in its words.
 */
let server: RunningServer;
let page: Page;
let adminKey = "";
const ACCOUNT = "console-budgets";

interface ListedBudget {
  id: string;
  agentId: string | null;
  unit: string;
  period: string;
  limit: number;
  spend: { spent: number; remaining: number; percent: number };
}

async function budgets(): Promise<ListedBudget[]> {
  const listed = await request(server, adminKey, "GET", "/v1/budgets");
  expect(listed.status).toBe(200);
  return listed.body!.data as ListedBudget[];
}

let opened: Awaited<ReturnType<typeof openConsole>> | undefined;

beforeAll(async () => {
  opened = await openConsole(ACCOUNT);
  ({ server, adminKey, page } = opened);
}, 180_000);

afterAll(() => opened?.close());

describe("budgets", () => {
  it("creates an account and an agent budget, lists their spend, edits one and deletes one", async () => {
    const created = await request(server, adminKey, "POST", "/v1/agents", {
      name: "Spender",
      modelProvider: "openai",
    });
    expect(created.status).toBe(201);
    const agentId = (created.body!.data as { id: string }).id;

    await page.getByRole("link", { name: "Budgets" }).click();
    await page.getByRole("heading", { level: 1, name: "Budgets" }).waitFor();
    await page.getByText("No budgets yet").waitFor();

    // The account's: 100,000 tokens a day.
    await page.getByLabel("Limit", { exact: true }).fill("100000");
    await page.getByRole("button", { name: "Create budget" }).click();
    await page.getByText("Budget created: 100,000 tokens per UTC day.").waitFor();

    // A limit the API refuses is shown in the API's words, and nothing is made.
    await page.getByLabel("Counts the messages of").selectOption("agent");
    await page.getByLabel("Agent", { exact: true }).selectOption({ label: "Spender" });
    await page.getByLabel("Limit", { exact: true }).fill("1.5");
    await page.getByRole("button", { name: "Create budget" }).click();
    await page
      .getByRole("alert")
      .getByText(/whole number/)
      .waitFor();
    expect(await budgets()).toHaveLength(1);

    // The agent's: 5 dollars a month.
    await page.getByLabel("Unit").selectOption("usd");
    await page.getByLabel("Limit", { exact: true }).fill("5");
    await page.getByLabel("Period", { exact: true }).selectOption("month");
    await page.getByRole("button", { name: "Create budget" }).click();
    await page.getByText("Budget created: $5.00 per UTC month.").waitFor();
    const agentRow = page.getByRole("row", { name: /Agent Spender/ });
    await agentRow.getByRole("cell", { name: "$5.00 per UTC month" }).waitFor();
    const made = await budgets();
    expect(made.map((b) => [b.agentId, b.unit, b.period, b.limit])).toEqual([
      [null, "tokens", "day", 100_000],
      [agentId, "usd", "month", 5],
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);

    // A message spends tokens; the account's row shows what the API counts.
    const sent = await request(server, adminKey, "POST", `/v1/agents/${agentId}/messages`, { text: "Hello" });
    expect(sent.status).toBe(200);
    const account = (await budgets()).find((b) => b.agentId === null)!;
    expect(account.spend.spent).toBeGreaterThan(0);
    await page.reload();
    const accountRow = page.getByRole("row", { name: /^Account/ });
    await accountRow
      .getByText(
        `${account.spend.percent}% · ${account.spend.spent.toLocaleString("en-US")} tokens spent, ${account.spend.remaining.toLocaleString("en-US")} tokens left`,
      )
      .waitFor();
    await expect(accountRow.getByRole("meter").getAttribute("value")).resolves.toBe(
      String(account.spend.percent),
    );

    // Edit: the account's budget becomes 250,000 tokens a month.
    await accountRow.getByRole("button", { name: /Edit/ }).click();
    const form = page.getByRole("form", { name: "Edit the budget of Account" });
    await form.getByLabel("Limit (tokens)").fill("250000");
    await form.getByLabel("Period").selectOption("month");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByText("Budget of Account is now 250,000 tokens per UTC month.").waitFor();
    await accountRow.getByRole("cell", { name: "250,000 tokens per UTC month" }).waitFor();
    const edited = (await budgets()).find((b) => b.agentId === null)!;
    expect([edited.limit, edited.period]).toEqual([250_000, "month"]);

    // Delete the agent's, after confirming.
    await agentRow.getByRole("button", { name: /Delete/ }).click();
    await page
      .getByRole("dialog", { name: "Delete this budget?" })
      .getByRole("button", { name: "Delete budget" })
      .click();
    await page.getByText("Budget of Agent Spender deleted.").waitFor();
    // The notice may come before the list is read again.
    await expect.poll(() => page.getByRole("row", { name: /Agent Spender/ }).count()).toBe(0);
    expect((await budgets()).map((b) => b.agentId)).toEqual([null]);
  });
});
