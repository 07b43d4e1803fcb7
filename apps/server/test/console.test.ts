import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "@agentry/core";
import { Tier } from "@agentry/proto";
import { startDeployable } from "@agentry/testing";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

let h: Harness;
let consoleDir: string;

beforeAll(async () => {
  consoleDir = await mkdtemp(join(tmpdir(), "agentry-console-"));
  await mkdir(join(consoleDir, "assets"));
  await writeFile(join(consoleDir, "index.html"), "<!doctype html><title>console</title>");
  await writeFile(join(consoleDir, "assets", "main-abc123.js"), "console.log('hi')");
  h = await startHarness({ CONSOLE_DIR: consoleDir });
});
afterAll(async () => {
  await h.close();
  await rm(consoleDir, { recursive: true, force: true });
});

/** A sign-in link's token, stored as `agentry console link` stores it. */
async function linkFor(accountId: string, ttlMs = 600_000): Promise<string> {
  const token = randomBytes(32).toString("base64url");
  await h.gateway.context.accounts.createConsoleLink({
    accountId,
    tokenSha256: sha256Hex(token),
    expireTime: timestampFromMs(Date.now() + ttlMs),
  });
  return token;
}

interface Session {
  cookie: string;
  csrf: string;
  setCookies: string[];
}

async function signIn(tenant: Tenant): Promise<Session> {
  const token = await linkFor(tenant.accountId);
  const res = await fetch(`${h.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }),
  });
  expect(res.status).toBe(201);
  const setCookies = res.headers.getSetCookie();
  const value = (name: string) =>
    setCookies
      .find((c) => c.startsWith(`${name}=`))!
      .split(";")[0]!
      .slice(name.length + 1);
  return {
    cookie: `agentry_session=${value("agentry_session")}; agentry_csrf=${value("agentry_csrf")}`,
    csrf: value("agentry_csrf"),
    setCookies,
  };
}

describe("the console's files", () => {
  it("redirects /console to /console/ and serves the page with its security headers", async () => {
    const bare = await fetch(`${h.url}/console`, { redirect: "manual" });
    expect(bare.status).toBe(302);
    expect(bare.headers.get("location")).toBe("/console/");
    const page = await fetch(`${h.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await page.text()).toContain("<title>console</title>");
  });

  it("answers the page for any route of the single page, and hashed assets cached for good", async () => {
    for (const path of ["/console/agents", "/console/sign-in", "/console/history/agt_x"]) {
      const res = await fetch(`${h.url}${path}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("<title>console</title>");
    }
    const asset = await fetch(`${h.url}/console/assets/main-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect(await asset.text()).toBe("console.log('hi')");
  });

  it("answers 404 in the envelope for a missing file, and never serves a file outside its directory", async () => {
    const missing = await fetch(`${h.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorBody).error.code).toBe("NOT_FOUND");
    for (const path of [
      "/console/..%2f..%2fpackage.json",
      "/console/%2e%2e/%2e%2e/etc/passwd",
      "/console/a/../../x.json",
    ]) {
      const res = await fetch(`${h.url}${path}`);
      expect([400, 404]).toContain(res.status);
    }
  });

  it("says how to build the console when there is no build", async () => {
    const other = await startHarness({ CONSOLE_DIR: join(consoleDir, "missing") });
    try {
      const res = await fetch(`${other.url}/console/`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as ErrorBody).error.message).toMatch(/not built/);
    } finally {
      await other.close();
    }
  });
});

describe("console sessions", () => {
  it("redeems a sign-in link for an HttpOnly, Secure, SameSite=Strict session cookie and a readable CSRF cookie", async () => {
    const tenant = await h.tenant();
    const session = await signIn(tenant);
    const [sessionCookie, csrfCookie] = ["agentry_session", "agentry_csrf"].map((name) =>
      session.setCookies.find((c) => c.startsWith(`${name}=`))!.toLowerCase(),
    );
    expect(sessionCookie).toContain("httponly");
    expect(sessionCookie).toContain("secure");
    expect(sessionCookie).toContain("samesite=strict");
    expect(sessionCookie).toContain("path=/");
    expect(csrfCookie).not.toContain("httponly");
    expect(csrfCookie).toContain("samesite=strict");

    const described = await fetch(`${h.url}/console/session`, { headers: { cookie: session.cookie } });
    expect(described.status).toBe(200);
    const { data } = (await described.json()) as { data: { id: string; account: { id: string } } };
    expect(data.id).toMatch(/^ses_/);
    expect(data.account.id).toBe(tenant.accountId);
  });

  it("uses a link once, and refuses an expired, unknown or malformed one", async () => {
    const tenant = await h.tenant();
    const token = await linkFor(tenant.accountId);
    const redeem = (value: unknown) =>
      h.request<ErrorBody>("POST", "/console/session", { body: { token: value } });
    const extra = await h.request<ErrorBody>("POST", "/console/session", { body: { token, remember: true } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details).toEqual([
      { field: "remember", issue: "is not a field of this request" },
    ]);
    expect((await redeem(token)).status).toBe(201);
    const again = await redeem(token);
    expect(again.status).toBe(401);
    expect(again.body.error.message).toMatch(/invalid, used or expired/);

    const soon = await linkFor(tenant.accountId, 50);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await redeem(soon)).status).toBe(401);
    expect((await redeem(randomBytes(32).toString("base64url"))).status).toBe(401);
    expect((await redeem("short")).body.error.message).toMatch(/malformed/);
    const missing = await redeem(42);
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([
      { field: "token", issue: "is required and must be a string" },
    ]);
  });

  it("acts for its account with every scope, reads without a CSRF token and writes only with it", async () => {
    const tenant = await h.tenant({ scopes: ["agents:read"] });
    const session = await signIn(tenant);
    const list = await h.request("GET", "/v1/agents", { headers: { cookie: session.cookie } });
    expect(list.status).toBe(200);

    const create = (headers: Record<string, string>) =>
      h.request<ErrorBody>("POST", "/v1/agents", { body: { name: "From the console" }, headers });
    const withoutToken = await create({ cookie: session.cookie });
    expect(withoutToken.status).toBe(403);
    expect(withoutToken.body.error.message).toMatch(/CSRF token/);
    expect((await create({ cookie: session.cookie, "x-csrf-token": "x".repeat(43) })).status).toBe(403);
    const other = await signIn(await h.tenant());
    expect((await create({ cookie: session.cookie, "x-csrf-token": other.csrf })).status).toBe(403);

    const created = await create({ cookie: session.cookie, "x-csrf-token": session.csrf });
    expect(created.status).toBe(201);
    const keys = await h.request<{ data: unknown[] }>("GET", "/v1/api-keys", {
      headers: { cookie: session.cookie },
    });
    expect(keys.status).toBe(200);
    // The other tenant's session sees none of this account's agents.
    const foreign = await h.request<{ data: unknown[] }>("GET", "/v1/agents", {
      headers: { cookie: other.cookie },
    });
    expect(foreign.body.data).toEqual([]);
  });

  it("lets an Authorization header win over the cookie", async () => {
    const tenant = await h.tenant();
    const session = await signIn(tenant);
    const res = await h.request<ErrorBody>("GET", "/v1/agents", {
      headers: { cookie: session.cookie, authorization: "Bearer nope" },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/malformed/);
  });

  it("refuses an unknown session cookie with 401", async () => {
    const res = await h.request<ErrorBody>("GET", "/v1/agents", {
      headers: { cookie: `agentry_session=${randomBytes(32).toString("base64url")}` },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/session has ended/);
  });

  it("signs out only with the CSRF token, clears the cookies, and the session is refused afterwards", async () => {
    const tenant = await h.tenant();
    const session = await signIn(tenant);
    const refused = await h.request<ErrorBody>("DELETE", "/console/session", {
      headers: { cookie: session.cookie },
    });
    expect(refused.status).toBe(403);
    expect((await h.request("GET", "/v1/agents", { headers: { cookie: session.cookie } })).status).toBe(200);

    const out = await fetch(`${h.url}/console/session`, {
      method: "DELETE",
      headers: { cookie: session.cookie, "x-csrf-token": session.csrf },
    });
    expect(out.status).toBe(200);
    const cleared = out.headers.getSetCookie().find((c) => c.startsWith("agentry_session="))!;
    expect(cleared).toMatch(/^agentry_session=;/);
    expect(cleared.toLowerCase()).toContain("expires=thu, 01 jan 1970");
    const after = await h.request<ErrorBody>("GET", "/v1/agents", { headers: { cookie: session.cookie } });
    expect(after.status).toBe(401);
    expect((await fetch(`${h.url}/console/session`, { headers: { cookie: session.cookie } })).status).toBe(
      401,
    );
  });

  it("holds on another gateway over the same store, as after a restart", async () => {
    const tenant = await h.tenant();
    const session = await signIn(tenant);
    const other = await startHarness({ DATA_DIR: h.dataDir });
    try {
      const res = await other.request<{ data: unknown[] }>("GET", "/v1/agents", {
        headers: { cookie: session.cookie },
      });
      expect(res.status).toBe(200);
      const out = await fetch(`${other.url}/console/session`, {
        method: "DELETE",
        headers: { cookie: session.cookie, "x-csrf-token": session.csrf },
      });
      expect(out.status).toBe(200);
      // Signed out on the other gateway: refused here too once this gateway's cache entry lapses (750 ms).
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect((await h.request("GET", "/v1/agents", { headers: { cookie: session.cookie } })).status).toBe(
        401,
      );
    } finally {
      await other.close();
    }
  });

  it("spends from the account's rate limits, as a key does, and reports them in the headers", async () => {
    const tenant = await h.tenant({ tier: Tier.STANDARD });
    const session = await signIn(tenant);
    const res = await h.request("GET", "/v1/agents", { headers: { cookie: session.cookie } });
    expect(res.headers.get("x-ratelimit-limit")).toBe("60");
    const viaKey = await h.request("GET", "/v1/agents", { key: tenant.key });
    expect(Number(viaKey.headers.get("x-ratelimit-remaining"))).toBe(
      Number(res.headers.get("x-ratelimit-remaining")) - 1,
    );
  });
});

describe("console sessions over plain http", () => {
  it("sets no Secure flag on http, and sets it behind a trusted proxy that says https", async () => {
    const plain = await startHarness({ PUBLIC_BASE_URL: "http://localhost:8080", TRUST_PROXY: "true" });
    try {
      const { accounts } = plain.gateway.context;
      const { account } = await accounts.createAccount({ name: "plain-http" });
      const cookieOf = async (headers: Record<string, string>) => {
        const token = randomBytes(32).toString("base64url");
        await accounts.createConsoleLink({
          accountId: account!.id,
          tokenSha256: sha256Hex(token),
          expireTime: timestampFromMs(Date.now() + 60_000),
        });
        const res = await fetch(`${plain.url}/console/session`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ token }),
        });
        expect(res.status).toBe(201);
        return res.headers
          .getSetCookie()
          .find((c) => c.startsWith("agentry_session="))!
          .toLowerCase();
      };
      expect(await cookieOf({})).not.toContain("secure");
      expect(await cookieOf({ "x-forwarded-proto": "https" })).toContain("secure");
    } finally {
      await plain.close();
    }
  });
});

describe("the split gateway", () => {
  it("serves the console's build at /console by default, as the all-in-one server does", async () => {
    // Its services are never called for the console's files; nothing listens at these addresses.
    const gateway = await startDeployable("services/gateway", {
      PORT: "0",
      REGISTRY_URL: "http://127.0.0.1:9",
      CONVERSATION_URL: "http://127.0.0.1:9",
      WEBHOOKS_URL: "http://127.0.0.1:9",
    });
    try {
      const page = await fetch(`${gateway.url}/console/`);
      expect(page.status).toBe(200);
      // The build pnpm install makes (apps/console/dist): its page loads its script from /console/assets/.
      expect(await page.text()).toMatch(/<script type="module"[^>]+src="\/console\/assets\/[^"]+\.js"/);
    } finally {
      await gateway.stop("SIGKILL");
    }
  });
});
