import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accessibilityViolations,
  newContext,
  openConsole,
  type RunningServer,
  request,
  screenshot,
  signIn,
} from "./harness.js";

/**
 * What a first-time user meets beyond the main flows, in Chromium against the real server: compressed files, a
 * rate-limit indicator that names its bucket, checks made before a request is spent, charts that draw light
 * traffic, narrow screens.
 */
let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const ACCOUNT = "console-polish";
let adminKey = "";

const api = (method: string, path: string, body?: unknown) => request(server, adminKey, method, path, body);

async function go(path: string, on: Page = page) {
  await on.goto(`${server.url}/console${path}`);
  await on.locator("main h1").waitFor();
}

async function createAgent(name: string): Promise<string> {
  const created = await api("POST", "/v1/agents", { name, modelProvider: "openai" });
  expect(created.status).toBe(201);
  return (created.body!.data as { id: string }).id;
}

let opened: Awaited<ReturnType<typeof openConsole>> | undefined;

beforeAll(async () => {
  // Every limit high but agent creation, which is 20 a minute: the smallest bucket of a request.
  opened = await openConsole(ACCOUNT, { limits: { createPerMinute: 20 } });
  ({ server, adminKey, browser, context, page } = opened);
}, 180_000);

afterAll(() => opened?.close());

describe("the console's files", () => {
  it("arrive compressed with brotli, varying by Accept-Encoding", async () => {
    const fresh = await context.newPage();
    const assets: { url: string; headers: Record<string, string> }[] = [];
    fresh.on("response", (response) => {
      if (/\/console\/assets\/.+\.(js|css)$/.test(response.url())) {
        assets.push({ url: response.url(), headers: {} });
        const entry = assets.at(-1)!;
        void response.allHeaders().then((headers) => Object.assign(entry.headers, headers));
      }
    });
    await go("/agents", fresh);
    await fresh.waitForLoadState("networkidle");
    expect(assets.map((a) => a.url.split(".").at(-1)).sort()).toEqual(["css", "js"]);
    for (const asset of assets) {
      expect(asset.headers["content-encoding"], asset.url).toBe("br");
      expect(asset.headers.vary, asset.url).toMatch(/accept-encoding/i);
    }
    await fresh.close();
  });
});

describe("the rate-limit indicator", () => {
  it("names the bucket it shows", async () => {
    await go("/agents/new");
    await page.getByLabel("Name").fill("Counted");
    // The edit page's read of the new agent waits, so that the create's answer is the latest one shown.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(/\/v1\/agents\/agt_[0-9A-Z]+$/, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await page.getByRole("button", { name: "Create agent" }).click();
      // The create answered 19 of the 20 creations a minute: that is the bucket shown, by name.
      await page.getByText("19/20 agent creations left").waitFor();
    } finally {
      release();
      await page.unrouteAll({ behavior: "wait" });
    }
    await page.getByRole("heading", { level: 1, name: "Edit agent" }).waitFor();
    await page.getByText(/\d+\/100000 requests left/).waitFor();
  });

  it("checks a new agent's fields in the page, so that a refused form spends no creation", async () => {
    const creates: string[] = [];
    const watch = (request: { method(): string; url(): string }) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/v1/agents") {
        creates.push(request.url());
      }
    };
    page.on("request", watch);
    try {
      await go("/agents/new");
      const name = page.getByLabel("Name");
      const create = page.getByRole("button", { name: "Create agent" });
      for (const bad of [
        { name: "   ", says: /name.*1 to 200 characters once surrounding whitespace is trimmed/ },
        { name: "Ok", settings: '{"temperature": 7}', says: /settings\.temperature.*at most 2/ },
        { name: "Ok", settings: '{"maxTokens": 9000}', says: /settings\.maxTokens.*at most 8192/ },
      ]) {
        await name.fill(bad.name);
        await page.getByLabel("Settings (JSON)").fill(bad.settings ?? "{}");
        await create.click();
        const alert = page.getByRole("alert").filter({ hasText: bad.says });
        await alert.waitFor();
        // Said in words of what to do, not only as a code.
        expect(await alert.textContent()).toContain("Correct the fields below");
      }
      await screenshot(page, "polish-validated-in-page");
      expect(creates).toEqual([]);
    } finally {
      page.off("request", watch);
    }
  });
});

/** Whether a chart's canvas has pixels of a colour (r, g, b), and whether anything is drawn in its leftmost columns. */
async function chartInk(color: [number, number, number]) {
  return page.locator(".chart canvas").evaluate((canvas: HTMLCanvasElement, [r, g, b]) => {
    const context = canvas.getContext("2d")!;
    const all = context.getImageData(0, 0, canvas.width, canvas.height).data;
    let colored = 0;
    for (let i = 0; i < all.length; i += 4) {
      if (Math.abs(all[i]! - r) < 24 && Math.abs(all[i + 1]! - g) < 24 && Math.abs(all[i + 2]! - b) < 24) {
        if (all[i + 3]! > 128) colored++;
      }
    }
    const edge = context.getImageData(0, 0, 3, canvas.height).data;
    let edgeInk = 0;
    for (let i = 3; i < edge.length; i += 4) if (edge[i]! > 0) edgeInk++;
    return { colored, edgeInk };
  }, color);
}

describe("usage charts", () => {
  it("draw light traffic's latency, and y-axis labels in full", async () => {
    const agentId = await createAgent("Light traffic");
    server.openai.reply("Hello there.", { usage: { input: 6000, output: 6000 } });
    const sent = await api("POST", `/v1/agents/${agentId}/messages`, { text: "hi" });
    expect(sent.status).toBe(200);
    await go("/usage");
    const blue: [number, number, number] = [37, 99, 235];
    await page.getByRole("cell", { name: "1", exact: true }).first().waitFor();

    await page.getByLabel("Show").selectOption("totalTokens");
    await page.waitForTimeout(300);
    const tokens = await chartInk(blue);
    expect(tokens.colored).toBeGreaterThan(0);
    // "12,000" drawn whole: nothing reaches the canvas's left edge.
    expect(tokens.edgeInk).toBe(0);

    // One message in a week: a single value among empty days, and among 168 empty hours.
    for (const granularity of ["day", "hour"]) {
      await page.getByLabel("By", { exact: true }).selectOption(granularity);
      for (const metric of ["p50", "p95"]) {
        await page.getByLabel("Show").selectOption(metric);
        await page.waitForTimeout(300);
        expect((await chartInk(blue)).colored, `${metric} by ${granularity}`).toBeGreaterThan(0);
      }
    }
    await screenshot(page, "polish-usage-latency");
  });
});

describe("at 360 px wide", () => {
  it("fits History and Agents on the screen, actions included", async () => {
    const narrow = await newContext(browser, { width: 360, height: 740 });
    const small = await signIn(server, narrow, ACCOUNT);
    try {
      const agentId = await createAgent("Narrow screen agent with a rather long name");
      // What people paste: a long command in a code block, an address without spaces.
      const user = "narrow-user-0123456789-abcdefghijklmnopqrstuvwxyz";
      server.openai.reply(
        "A reply long enough to wrap on a small screen. Run:\n\n```sh\ncurl -H 'authorization: Bearer $AGENTRY_API_KEY' https://agentry.example.com/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA/messages --data '{\"text\":\"hello\"}'\n```\n\nSee https://agentry.example.com/docs/a/very/long/path/without/any/spaces/that/goes/on/and/on/and/on.",
      );
      const sent = await api("POST", `/v1/agents/${agentId}/messages`, {
        text: "hello",
        userId: user,
        roomId: "r1",
      });
      expect(sent.status).toBe(200);

      await go("/history", small);
      await small.getByLabel("Agent").selectOption(agentId);
      await small
        .getByRole("button", { name: /narrow-user/ })
        .first()
        .click();
      await small.getByLabel("User id").fill(user);
      await small.getByText("A reply long enough").waitFor();
      expect(await accessibilityViolations(small)).toEqual([]);
      const width = await small.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(360);
      await screenshot(small, "polish-history-360");

      await go("/agents", small);
      const row = small.getByRole("row").filter({ hasText: "Narrow screen agent" });
      for (const name of [/Deactivate/, /Chat/, /Delete/]) {
        const box = (await row.getByRole("button", { name }).boundingBox())!;
        expect(box.x, String(name)).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, String(name)).toBeLessThanOrEqual(360);
      }
      expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      await screenshot(small, "polish-agents-360");
    } finally {
      await narrow.close();
    }
  });
});

describe("notices, focus, addresses and error wording", () => {
  it("clears an earlier success notice when a later save fails, and words the error before its code", async () => {
    const agentId = await createAgent("Noticed");
    await go(`/agents/${agentId}/edit`);
    await page.getByLabel("Name").fill("Noticed again");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved Noticed again.").waitFor();
    await page.getByLabel("Settings (JSON)").fill('{"temperature": 7}');
    await page.getByRole("button", { name: "Save changes" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    await expect(page.getByText("Saved Noticed again.").count()).resolves.toBe(0);
    // What to do comes first; the code is a small reference after it.
    expect(await alert.textContent()).toMatch(/^Correct the fields below/);
    expect(await alert.locator("small").textContent()).toContain("INVALID_REQUEST");
  });

  it("moves focus to the list of keys after 'I have stored it' and after a revoke", async () => {
    await go("/settings/api-keys");
    await page.getByLabel("Name").fill("focus-key");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("button", { name: "I have stored it" }).click();
    const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? "");
    await expect.poll(focused).toBe("Keys");
    const row = page.getByRole("row").filter({ hasText: "focus-key" });
    await row.getByRole("button", { name: /Revoke/ }).click();
    await page
      .getByRole("dialog", { name: "Revoke this key?" })
      .getByRole("button", { name: "Revoke key" })
      .click();
    await row.waitFor({ state: "detached" });
    await expect.poll(focused).toBe("Keys");
    await page.getByText("Revoked key focus-key.").waitFor();
  });

  it("keeps the agent whose history is shown in the address", async () => {
    const first = await createAgent("History first");
    const second = await createAgent("History second");
    await go(`/history?agent=${second}`);
    await expect.poll(() => page.getByLabel("Agent").inputValue()).toBe(second);
    await page.getByLabel("Agent").selectOption(first);
    await expect.poll(() => new URL(page.url()).search).toBe(`?agent=${first}`);
    await page.reload();
    await page.locator("main h1").waitFor();
    await expect.poll(() => page.getByLabel("Agent").inputValue()).toBe(first);
  });

  it("keeps the agents list's filter, sort and page in the address", async () => {
    await go("/agents");
    await page.getByLabel("Status").selectOption("active");
    await page.getByLabel("Sort by").selectOption("name:asc");
    await expect.poll(() => new URL(page.url()).search).toBe("?status=active&sort=name%3Aasc");
    await page.reload();
    await page.locator("main h1").waitFor();
    await expect(page.getByLabel("Status").inputValue()).resolves.toBe("active");
    await expect(page.getByLabel("Sort by").inputValue()).resolves.toBe("name:asc");
  });
});

describe("webhook deliveries", () => {
  it("follow a test event's delivery to its end without a refresh", async () => {
    // A receiver that takes a moment to answer, so that the log first shows the delivery unfinished.
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received.push(req.url ?? "");
        setTimeout(() => {
          res.statusCode = 204;
          res.end();
        }, 1500);
      });
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slow-hook`;
    try {
      const created = await api("POST", "/v1/webhooks", { url, events: ["agent.created"] });
      expect(created.status).toBe(201);
      await go("/webhooks");
      const card = page.getByRole("listitem").filter({ hasText: url });
      await card.getByRole("button", { name: "Send test event" }).click();
      const log = card.getByRole("region", { name: "Deliveries" });
      await log.waitFor();
      await log.getByText("succeeded", { exact: true }).waitFor({ timeout: 20_000 });
      expect(received).toEqual(["/slow-hook"]);
    } finally {
      await new Promise((done) => receiver.close(done));
    }
  });

  it("edits an endpoint's address, description and events in place", async () => {
    const before = "http://127.0.0.1:9/before-edit";
    const created = await api("POST", "/v1/webhooks", { url: before, events: ["*"] });
    expect(created.status).toBe(201);
    const webhookId = (created.body!.data as { id: string }).id;
    await go("/webhooks");
    const card = page.getByRole("listitem").filter({ hasText: before });
    await card.getByRole("button", { name: /^Edit/ }).click();
    const form = card.getByRole("form", { name: "Edit endpoint" });
    await form.getByLabel("URL").fill("http://127.0.0.1:9/after-edit");
    await form.getByLabel("Description (optional)").fill("Edited in the console");
    await form.getByLabel("Every event type (including ones added later)").uncheck();
    await form.getByLabel("agent.deleted").check();
    await form.getByRole("button", { name: "Save endpoint" }).click();
    await page.getByText("Saved the endpoint http://127.0.0.1:9/after-edit.").waitFor();
    const stored = (await api("GET", `/v1/webhooks/${webhookId}`)).body!.data as Record<string, unknown>;
    expect(stored).toMatchObject({
      url: "http://127.0.0.1:9/after-edit",
      description: "Edited in the console",
      events: ["agent.deleted"],
    });
  });
});
