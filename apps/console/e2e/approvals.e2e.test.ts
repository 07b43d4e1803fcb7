import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { accessibilityViolations, openConsole, type RunningServer, request, screenshot } from "./harness.js";

/**
 * The agent page's "Waiting for approval" panel in Chromium against the real server: background messages paused
 * before a tool call that needs approval are listed with the call; one approved runs it and completes, one
 * rejected with a reason completes with the refusal given to the model.
 */
let server: RunningServer;
let page: Page;
let adminKey = "";
const ACCOUNT = "console-approvals";

let opened: Awaited<ReturnType<typeof openConsole>> | undefined;

beforeAll(async () => {
  opened = await openConsole(ACCOUNT);
  ({ server, adminKey, page } = opened);
}, 120_000);

afterAll(() => opened?.close());

interface MessageState {
  status: string;
  text?: string;
  toolCalls?: { id: string; ok: boolean; output?: unknown; error?: string }[];
}

async function pausedMessage(agentId: string, callId: string, expression: string): Promise<string> {
  server.openai.callTools([{ id: callId, name: "calculator__calculate", arguments: { expression } }]);
  const sent = await request(server, adminKey, "POST", `/v1/agents/${agentId}/messages`, {
    text: `What is ${expression}?`,
    background: true,
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  const messageId = (sent.body!.data as { id: string }).id;
  await vi.waitFor(async () => expect((await read(agentId, messageId)).status).toBe("requires_action"), {
    timeout: 15_000,
    interval: 100,
  });
  return messageId;
}

async function read(agentId: string, messageId: string): Promise<MessageState> {
  const res = await request(server, adminKey, "GET", `/v1/agents/${agentId}/messages/${messageId}`);
  return res.body!.data as MessageState;
}

async function completed(agentId: string, messageId: string): Promise<MessageState> {
  await vi.waitFor(async () => expect((await read(agentId, messageId)).status).toBe("completed"), {
    timeout: 15_000,
    interval: 100,
  });
  return read(agentId, messageId);
}

describe("the agent page's tool approvals", () => {
  it("lists paused messages with their calls, approves one that then completes, and rejects another", async () => {
    const created = await request(server, adminKey, "POST", "/v1/agents", {
      name: "Teller",
      modelProvider: "openai",
      plugins: [{ name: "calculator", requireApproval: true }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const agentId = (created.body!.data as { id: string }).id;

    const first = await pausedMessage(agentId, "call_approve", "6 * 7");
    await page.goto(`${server.url}/console/agents/${agentId}/edit`);
    const panel = page.locator("section.approvals");
    await page.getByRole("heading", { level: 2, name: "Waiting for approval" }).waitFor();
    const firstItem = panel.locator(`li[data-message="${first}"]`);
    await firstItem.getByText("calculator__calculate", { exact: true }).waitFor();
    expect(await firstItem.locator("pre").textContent()).toContain('"expression": "6 * 7"');
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "approvals-panel");

    server.openai.reply("It is 42.");
    await firstItem.getByRole("button", { name: "Approve" }).click();
    await panel.getByText("calculator__calculate approved.").waitFor();
    await panel.getByText("No message is waiting for approval.").waitFor();
    const done = await completed(agentId, first);
    expect(done.text).toBe("It is 42.");
    expect(done.toolCalls).toMatchObject([{ id: "call_approve", ok: true, output: { result: "42" } }]);

    const second = await pausedMessage(agentId, "call_reject", "1 / 0");
    await panel.getByRole("button", { name: "Refresh" }).click();
    const secondItem = panel.locator(`li[data-message="${second}"]`);
    await secondItem.getByRole("button", { name: "Reject" }).click();
    await secondItem.getByLabel("Reason (optional, given to the model)").fill("no dividing by zero");
    server.openai.reply("I will not, then.");
    await secondItem.getByRole("button", { name: "Reject call" }).click();
    await panel.getByText("calculator__calculate rejected.").waitFor();
    await panel.getByText("No message is waiting for approval.").waitFor();
    const refused = await completed(agentId, second);
    expect(refused.text).toBe("I will not, then.");
    expect(refused.toolCalls).toMatchObject([
      { id: "call_reject", ok: false, error: "The person refused this tool call: no dividing by zero" },
    ]);
  }, 90_000);
});
