import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

const run = promisify(execFile);

export const ROOT = resolve(import.meta.dirname, "../../..");
/** Screenshots of every flow, for people to look at (git-ignored). */
export const OUTPUT = resolve(import.meta.dirname, "../test-output");
const TSX = join(ROOT, "node_modules/.bin/tsx");

/** Debian's chromium (apt-get install chromium); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** The all-in-one server as `pnpm start` runs it, in a child process, on a temp DATA_DIR with the fake OpenAI. */
export interface RunningServer {
  url: string;
  dataDir: string;
  openai: FakeProviderServer<OpenAIChatBody>;
  /** Runs the admin CLI against the server's DATA_DIR. */
  cli(args: string[]): Promise<string>;
  /** A one-time sign-in link for the account, acting for the member with that email (the first owner without). */
  signInLink(account: string, member?: string): Promise<string>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * `env`: more of the server's settings (a platform API's address, the connectors' intervals); `port`: the port to
 * listen on, when another party must know the server's address first (an OIDC provider's redirect URI).
 */
export async function startServer(
  options: { env?: Record<string, string>; port?: number } = {},
): Promise<RunningServer> {
  const openai = await startFakeOpenAI({ apiKey: "sk-console-e2e" });
  const dataDir = await mkdtemp(join(tmpdir(), "agentry-console-e2e-"));
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: url,
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-console-e2e",
    DEFAULT_MODEL_PROVIDER: "openai",
    ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_SCHEDULE: "1s,2s",
    LOG_LEVEL: "warn",
    LOG_FORMAT: "json",
    ...options.env,
  };
  delete env.DATABASE_URL;
  const child: ChildProcess = spawn(
    process.execPath,
    [join(ROOT, "scripts/start.mjs"), join(ROOT, "apps/server")],
    {
      cwd: ROOT,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${stderr}`);
    const ready = await fetch(`${url}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`the server did not start within 60 s: ${stderr}`);
    await new Promise((done) => setTimeout(done, 250));
  }
  const cli = async (args: string[]) =>
    (await run(TSX, [join(ROOT, "apps/cli/src/main.ts"), ...args], { env, cwd: ROOT })).stdout;
  return {
    url,
    dataDir,
    openai,
    cli,
    async signInLink(account, member) {
      const printed = await cli([
        "console",
        "link",
        "--account",
        account,
        ...(member ? ["--member", member] : []),
        "--json",
      ]);
      return (JSON.parse(printed) as { url: string }).url;
    },
    async close() {
      child.kill("SIGTERM");
      await new Promise((done) => {
        if (child.exitCode !== null) done(null);
        else child.once("exit", done);
      });
      await openai.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every rate limit an account has, by the names the CLI's `--limit` takes. */
const RATE_LIMITS = [
  "requestsPerMinute",
  "createPerMinute",
  "listPerMinute",
  "getPerMinute",
  "updatePerMinute",
  "deletePerMinute",
  "messagesPerMinute",
];

/**
 * An enterprise account whose rate limits are all 100,000 a minute but those given, so that a run of many requests
 * meets none it does not mean to, and a full-access key of it (its secret).
 */
export async function seedAccount(
  server: RunningServer,
  account: string,
  limits: Record<string, number> = {},
): Promise<string> {
  const values = { ...Object.fromEntries(RATE_LIMITS.map((name) => [name, 100_000])), ...limits };
  await server.cli([
    "accounts",
    "create",
    account,
    "--tier",
    "enterprise",
    ...Object.entries(values).flatMap(([name, value]) => ["--limit", `${name}=${value}`]),
  ]);
  const printed = await server.cli(["keys", "create", "--account", account, "--name", `${account}-admin`]);
  return printed.trim().split("\n").at(-1)!;
}

/**
 * Signs in to the account's console with a one-time link, as the member with that email (the account's first owner
 * without one), in `target` (a page, or a new page of a browser context), and waits for the Agents page every
 * sign-in lands on.
 */
export async function signIn(
  server: RunningServer,
  target: BrowserContext | Page,
  account: string,
  options: { member?: string } = {},
): Promise<Page> {
  const page = "goto" in target ? target : await target.newPage();
  await page.goto(await server.signInLink(account, options.member));
  await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor();
  return page;
}

/** A call of the server's API with a key: its status and its parsed body (null when it has none). */
export async function request(
  server: RunningServer,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

/** Headless Chromium with the flags that keep it off the network it must not reach. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export async function newContext(
  browser: Browser,
  options: { width?: number; height?: number; dark?: boolean } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1440, height: options.height ?? 900 },
    colorScheme: options.dark ? "dark" : "light",
    acceptDownloads: true,
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  return context;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
}

/** A receiver of webhook deliveries on loopback: what it got, and it answers 204. */
export async function startReceiver(): Promise<{ url: string; received: unknown[]; close(): Promise<void> }> {
  const received: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push(JSON.parse(body || "null"));
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const axeSource = await import("node:fs/promises").then((fs) =>
    fs.readFile(join(ROOT, "apps/console/node_modules/axe-core/axe.min.js"), "utf8"),
  );
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(axeSource);
  const results = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<unknown> } })
      .axe;
    return axe.run(document, { resultTypes: ["violations"] });
  })) as { violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] };
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** The page's cumulative layout shift so far (the Layout Instability API; shifts right after input excluded). */
export function layoutShift(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        let total = 0;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries() as (PerformanceEntry & {
            value: number;
            hadRecentInput: boolean;
          })[]) {
            if (!entry.hadRecentInput) total += entry.value;
          }
        }).observe({ type: "layout-shift", buffered: true });
        setTimeout(() => resolve(total), 100);
      }),
  );
}

/**
 * A server with one seeded account, a browser and a page signed in to that account's console: an e2e file's start.
 * `server` is passed to startServer, `limits` to seedAccount.
 */
export async function openConsole(
  account: string,
  options: { server?: Parameters<typeof startServer>[0]; limits?: Record<string, number> } = {},
) {
  const server = await startServer(options.server);
  try {
    const adminKey = await seedAccount(server, account, options.limits);
    const browser = await launchBrowser();
    const context = await newContext(browser);
    const page = await signIn(server, context, account);
    return {
      server,
      adminKey,
      browser,
      context,
      page,
      async close() {
        await browser.close();
        await server.close();
      },
    };
  } catch (error) {
    await server.close();
    throw error;
  }
}
