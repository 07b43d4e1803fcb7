import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  launchBrowser,
  newContext,
  type RunningServer,
  request,
  seedAccount,
  startServer,
} from "./harness.js";
import { type LocalOidcProvider, startOidcProvider } from "./oidc-provider.js";

/**
 * OIDC sign-in in Chromium, against a real OpenID provider on this machine: the provider's login, its consent, the
 * authorization code redeemed with PKCE, the verified email mapped to a member, a session with that member's role.
 */
let server: RunningServer;
let provider: LocalOidcProvider;
let browser: Browser;
const ACCOUNT = "console-oidc";
let adminKey = "";

/** Signs in at the provider's development login and consents. */
async function signInWithProvider(page: Page, email: string): Promise<void> {
  await page.goto(`${server.url}/console/oidc/start`);
  await page.locator("input[name=login]").fill(email);
  await page.locator("input[name=password]").fill("any password");
  await page.locator("button[type=submit]").click();
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
  await request(server, adminKey, "POST", "/v1/members", { email: "dev@example.com", role: "developer" });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await provider?.close();
});

describe("OIDC sign-in", () => {
  it("signs a member in with their role's scopes, not full access", async () => {
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

  it("answers an email no account has with a page that says what to do", async () => {
    const page = await (await newContext(browser)).newPage();
    await signInWithProvider(page, "stranger@example.com");
    await page.getByRole("heading", { name: "Sign-in refused" }).waitFor();
    expect(await page.textContent("main")).toContain(
      "No account has a member with the email stranger@example.com: ask an owner or admin of your account to invite you.",
    );
  });
});
