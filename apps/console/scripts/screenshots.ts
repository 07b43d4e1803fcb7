/**
 * Regenerates the README's console screenshots (docs/console/*.png): the real server on a temp DATA_DIR with the
 * fake OpenAI provider, seeded with a few agents, a conversation, usage and a webhook, photographed in Chromium.
 * Run with `pnpm --filter @agentry/console screenshots`.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { launchBrowser, newContext, ROOT, startReceiver, startServer } from "../e2e/harness.js";

const OUT = join(ROOT, "docs/console");
const server = await startServer();
const receiver = await startReceiver();
try {
  await server.cli(["accounts", "create", "acme", "--tier", "pro"]);
  const key = (await server.cli(["keys", "create", "--account", "acme", "--name", "laptop"]))
    .trim()
    .split("\n")
    .at(-1)!;
  await server.cli([
    "keys",
    "create",
    "--account",
    "acme",
    "--name",
    "ci",
    "--scopes",
    "agents:read,messages:send",
  ]);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return (await res.json()) as { data: { id: string } };
  };
  const ada = await call("POST", "/v1/agents", {
    name: "Ada",
    bio: ["A patient mathematics tutor."],
    goals: ["Explain each step."],
    modelProvider: "openai",
  });
  await call("POST", "/v1/agents", {
    name: "Support bot",
    bio: ["Answers questions about orders."],
    modelProvider: "openai",
  });
  const idle = await call("POST", "/v1/agents", { name: "Archivist", modelProvider: "openai" });
  await call("PATCH", `/v1/agents/${idle.data.id}`, { status: "inactive" });
  for (const text of ["What is 12 × 12?", "And 13 × 13?", "Why does that work?"]) {
    await call("POST", `/v1/agents/${ada.data.id}/messages`, { text, userId: "sam", roomId: "homework" });
  }
  await call("POST", "/v1/webhooks", { url: receiver.url, events: ["*"], description: "Order system" });

  const browser = await launchBrowser();
  const context = await newContext(browser, { width: 1280, height: 800 });
  const page = await context.newPage();
  await page.goto(await server.signInLink("acme"));
  await page.locator("main h1").waitFor();
  await mkdir(OUT, { recursive: true });
  const shot = async (path: string, name: string, prepare?: () => Promise<void>) => {
    await page.goto(`${server.url}/console${path}`);
    await page.locator("main h1").waitFor();
    await page.waitForLoadState("networkidle");
    await prepare?.();
    await page.screenshot({ path: join(OUT, `${name}.png`) });
  };
  await shot("/agents", "agents");
  await shot(`/agents/${ada.data.id}/edit`, "agent-edit");
  await shot(`/chat?agent=${ada.data.id}`, "chat", async () => {
    server.openai.reply("12 × 12 = **144**. In code:\n\n```js\nconsole.log(12 * 12);\n```");
    await page.getByLabel("User id").fill("sam");
    await page.getByLabel("Room id").fill("homework");
    await page.getByLabel("Message").fill("Show me 12 × 12 in code");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".turn.assistant").getByText("tokens").waitFor();
  });
  await shot("/history", "history", async () => {
    await page.getByRole("button", { name: /sam in homework/ }).click();
    await page.locator(".messages li").first().waitFor();
  });
  await shot("/usage", "usage", async () => {
    await page.getByLabel("By", { exact: true }).selectOption("hour");
    await page.locator(".chart canvas").first().waitFor();
  });
  await shot("/webhooks", "webhooks", async () => {
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByRole("button", { name: "Refresh" }).waitFor();
    for (let i = 0; i < 20 && (await page.locator(".badge.succeeded").count()) === 0; i++) {
      await page.waitForTimeout(250);
      await page.getByRole("button", { name: "Refresh" }).click();
    }
  });
  await shot("/settings/api-keys", "api-keys");
  await browser.close();
  process.stdout.write(`wrote ${OUT}\n`);
} finally {
  await receiver.close();
  await server.close();
}
