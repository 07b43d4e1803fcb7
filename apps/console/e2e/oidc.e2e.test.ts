import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accessibilityViolations,
  freePort,
  launchBrowser,
  newContext,
  type RunningServer,
  request,
  screenshot,
  seedAccount,
  startServer,
} from "./harness.js";
import { type LocalOidcProvider, startOidcProvider } from "./oidc-provider.js";

/**
 * OIDC sign-in in Chromium, against a real OpenID provider on this machine: the provider's login, its consent, the
 * authorization code redeemed with PKCE, the verified email mapped to a member, a session with that member's role;
 * the sign-in page's SSO button, its words for a refusal, and its account picker for an email in several accounts.
 */
let server: RunningServer;
let provider: LocalOidcProvider;
let browser: Browser;
const ACCOUNT = "console-oidc";
const SECOND = "console-oidc-second";
let adminKey = "";

/** Starts at the console's sign-in page, follows its SSO button, and logs in at the provider's development form. */
async function logInWithProvider(page: Page, email: string): Promise<void> {
  await page.goto(`${server.url}/console/sign-in`);
  await page.getByRole("link", { name: "Sign in with SSO" }).click();
  await page.locator("input[name=login]").fill(email);
  await page.locator("input[name=password]").fill("any password");
  await page.locator("button[type=submit]").click();
}

/** Signs in at the provider and consents. */
async function signInWithProvider(page: Page, email: string): Promise<void> {
  await logInWithProvider(page, email);
  await page.getByRole("button", { name: /continue/i }).click();
}

beforeAll(async () => {
  const port = await freePort();
  provider = await startOidcProvider(`http://127.0.0.1:${port}/console/oidc/callback`);
  server = await startServer({
    port,
    env: {
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
    },
  });
  adminKey = await seedAccount(server, ACCOUNT);
  const secondKey = await seedAccount(server, SECOND);
  await request(server, adminKey, "POST", "/v1/members", { email: "dev@example.com", role: "developer" });
  // A person in both accounts, joined to this one first.
  await request(server, adminKey, "POST", "/v1/members", { email: "multi@example.com", role: "admin" });
  await request(server, secondKey, "POST", "/v1/members", { email: "multi@example.com", role: "viewer" });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await provider?.close();
});

describe("OIDC sign-in", () => {
  it("signs a member in from the sign-in page's SSO button, with their role's scopes, not full access", async () => {
    const page = await (await newContext(browser)).newPage();
    await signInWithProvider(page, "dev@example.com");
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor();
    const described = await page.evaluate(async () => (await fetch("/console/session")).json());
    expect(described.data.member).toMatchObject({ email: "dev@example.com", role: "developer" });
    expect(described.data.scopes).toContain("agents:write");
    expect(described.data.scopes).not.toContain("keys:manage");
    const keys = await page.evaluate(async () => (await fetch("/v1/api-keys")).status);
    expect(keys).toBe(403);
  });

  it("says on the sign-in page that an email no account has needs an invitation", async () => {
    const page = await (await newContext(browser)).newPage();
    await signInWithProvider(page, "stranger@example.com");
    await page.getByRole("heading", { level: 1, name: "Sign in to the Agentry console" }).waitFor();
    await expect(page.getByRole("alert").textContent()).resolves.toBe(
      "No account here has a member with the email stranger@example.com. Ask an owner or admin of your account to invite that address, then sign in with SSO again.",
    );
    // Said once: the address no longer carries it, and the way to try again is right there.
    expect(page.url()).toBe(`${server.url}/console/sign-in`);
    await page.getByRole("link", { name: "Sign in with SSO" }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "oidc-refused");
    const described = await page.evaluate(async () => (await fetch("/console/session")).status);
    expect(described).toBe(401);
  });

  it("says so on the sign-in page when the person declines at the provider", async () => {
    const page = await (await newContext(browser)).newPage();
    await logInWithProvider(page, "dev@example.com");
    await page.getByRole("link", { name: "[ Cancel ]" }).click();
    await page.getByRole("alert").getByText("you declined there. Sign in with SSO again to retry.").waitFor();
    expect(page.url()).toBe(`${server.url}/console/sign-in`);
  });

  it("lets a member of several accounts pick the account, and the choice works once", async () => {
    const page = await (await newContext(browser)).newPage();
    await signInWithProvider(page, "multi@example.com");
    const picker = page.getByRole("region", { name: "Choose an account" });
    await picker.getByText("multi@example.com is a member of several accounts.").waitFor();
    // Oldest membership first, each with the role held there.
    expect(await picker.getByRole("listitem").allTextContents()).toEqual([
      `${ACCOUNT} as admin`,
      `${SECOND} as viewer`,
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "oidc-account-picker");
    const notOffered = await page.evaluate(async () => {
      const res = await fetch("/console/oidc/accounts", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ accountId: "acc_00000000000000000000000000" }),
      });
      return { status: res.status, body: await res.json() };
    });
    expect(notOffered.status).toBe(400);
    expect(notOffered.body.error.details).toEqual([
      { field: "accountId", issue: "is not one of the accounts multi@example.com may sign in to" },
    ]);

    await picker.getByRole("button", { name: SECOND }).click();
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor();
    await expect(page.getByText(SECOND, { exact: true }).isVisible()).resolves.toBe(true);
    const described = await page.evaluate(async () => (await fetch("/console/session")).json());
    expect(described.data.account.name).toBe(SECOND);
    expect(described.data.member).toMatchObject({ email: "multi@example.com", role: "viewer" });
    expect(described.data.scopes).not.toContain("agents:write");
    // The choice is spent: it cannot open a second session.
    const again = await page.evaluate(async () => {
      const res = await fetch("/console/oidc/accounts");
      return { status: res.status, body: await res.json() };
    });
    expect(again.status).toBe(401);
    expect(again.body.error.message).toBe(
      "No account choice is waiting, or it took more than ten minutes: sign in with SSO again.",
    );
  });
});
