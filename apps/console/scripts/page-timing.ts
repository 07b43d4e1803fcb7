/**
 * How soon each console page is usable after navigation, in Chromium against the real server (a temp DATA_DIR,
 * the fake OpenAI provider), seeded with a few agents, a conversation and a webhook: for each page, the time from
 * `page.goto` to its heading shown and no part of it still loading (`aria-busy`: its data fetched and drawn), a
 * full load each time (no client-side navigation), median and worst of `ROUNDS` loads. Run with `pnpm --filter @agentry/console bench:pages`.
 */
import { launchBrowser, newContext, startServer } from "../e2e/harness.js";

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const server = await startServer();
try {
  // Limits that a few hundred page loads never meet.
  const limits = [
    "requestsPerMinute",
    "createPerMinute",
    "listPerMinute",
    "getPerMinute",
    "messagesPerMinute",
  ];
  await server.cli([
    "accounts",
    "create",
    "acme",
    "--tier",
    "enterprise",
    ...limits.flatMap((name) => ["--limit", `${name}=100000`]),
  ]);
  const key = (await server.cli(["keys", "create", "--account", "acme", "--name", "bench"]))
    .trim()
    .split("\n")
    .at(-1)!;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return (await res.json()) as { data: { id: string } };
  };
  const agent = await call("POST", "/v1/agents", { name: "Ada", bio: ["A tutor."], modelProvider: "openai" });
  for (let i = 0; i < 5; i++)
    await call("POST", "/v1/agents", { name: `Agent ${i}`, modelProvider: "openai" });
  for (const text of ["One?", "Two?", "Three?"]) {
    await call("POST", `/v1/agents/${agent.data.id}/messages`, { text, userId: "sam" });
  }
  await call("POST", "/v1/webhooks", { url: "https://hooks.example.com/agentry", events: ["*"] });

  const browser = await launchBrowser();
  const context = await newContext(browser, { width: 1280, height: 800 });
  const page = await context.newPage();
  await page.goto(await server.signInLink("acme"));
  await page.locator("main h1").waitFor();
  const pages = [
    "/agents",
    `/agents/${agent.data.id}/edit`,
    "/chat",
    "/history",
    "/usage",
    "/webhooks",
    "/keys",
  ];
  const rows: string[] = [];
  for (const path of pages) {
    const times: number[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const started = performance.now();
      await page.goto(`${server.url}/console${path}`);
      await page.locator("main h1").waitFor();
      await page
        .waitForFunction(() => document.querySelector('[aria-busy="true"]') === null, undefined, {
          timeout: 10_000,
        })
        .catch(async (error: Error) => {
          const busy = await page
            .locator('[aria-busy="true"]')
            .first()
            .evaluate((element) => element.outerHTML);
          throw new Error(`${path} stayed busy: ${busy}`, { cause: error });
        });
      // The first load warms the browser's cache of the console's files, as a person's first visit does.
      if (round > 0) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)]!;
    rows.push(
      `| \`/console${path.replace(agent.data.id, "{id}")}\` | ${median.toFixed(0)} ms | ${times.at(-1)!.toFixed(0)} ms |`,
    );
  }
  process.stdout.write(
    `${["| Page | Usable after navigation, median | Worst |", "| --- | --- | --- |", ...rows].join("\n")}\n`,
  );
  await browser.close();
} finally {
  await server.close();
}
