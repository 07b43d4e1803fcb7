import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { sha256Hex } from "@agentry/core";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

/**
 * The console's OIDC routes where no provider answers: the start and the callback send the browser back to the
 * sign-in page with an outcome it words, and the account picker's routes refuse what they must. The sign-in itself,
 * against a real provider, is apps/console/e2e/oidc.e2e.test.ts.
 */
let h: Harness;
let tenant: Tenant;

/** A port nothing listens on: the provider that cannot be reached. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

beforeAll(async () => {
  h = await startHarness({
    OIDC_ISSUER: `http://127.0.0.1:${await closedPort()}`,
    OIDC_CLIENT_ID: "agentry-console",
    OIDC_CLIENT_SECRET: "console-test-secret",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${h.url}${path}`, { redirect: "manual", headers });

/** The choice cookie as the callback writes it, offering the given accounts with the given link tokens. */
function choiceCookie(choices: { token: string; accountId: string; name: string }[]): string {
  const value = Buffer.from(
    JSON.stringify({
      email: "ada@example.com",
      choices: choices.map(({ token, accountId, name }) => ({
        token,
        account: { id: accountId, name },
        role: "owner",
      })),
    }),
  ).toString("base64url");
  return `agentry_oidc_accounts=${value}`;
}

function pick(accountId: unknown, cookie?: string, contentType = "application/json") {
  return fetch(`${h.url}/console/oidc/accounts`, {
    method: "POST",
    headers: { "content-type": contentType, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ accountId }),
  });
}

describe("the OIDC start and callback", () => {
  it("says OIDC is on, and where it starts", async () => {
    const res = await get("/console/oidc");
    expect(await res.json()).toEqual({
      success: true,
      data: { enabled: true, startUrl: "/console/oidc/start" },
    });
  });

  it("sends the browser back to the sign-in page when the provider cannot be reached", async () => {
    const res = await get("/console/oidc/start");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/console/sign-in?sso=unavailable");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("sends a callback with no sign-in in flight back to the sign-in page as expired", async () => {
    const res = await get("/console/oidc/callback?code=abc&state=xyz");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/console/sign-in?sso=expired");
    expect(res.headers.getSetCookie().some((c) => c.startsWith("agentry_session="))).toBe(false);
  });
});

describe("the account picker", () => {
  it("has no choice to show or take without the callback's cookie", async () => {
    const listed = await get("/console/oidc/accounts");
    expect(listed.status).toBe(401);
    expect(((await listed.json()) as ErrorBody).error.message).toBe(
      "No account choice is waiting, or it took more than ten minutes: sign in with SSO again.",
    );
    const picked = await pick(tenant.accountId);
    expect(picked.status).toBe(401);
    const garbled = await get("/console/oidc/accounts", { cookie: "agentry_oidc_accounts=not-json" });
    expect(garbled.status).toBe(401);
  });

  it("takes only JSON naming an account that was offered", async () => {
    const cookie = choiceCookie([{ token: "t".repeat(43), accountId: tenant.accountId, name: "Acme" }]);
    expect((await pick(tenant.accountId, cookie, "text/plain")).status).toBe(415);
    const missing = await pick(undefined, cookie);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as ErrorBody).error.details).toEqual([
      { field: "accountId", issue: "is required and must be a string" },
    ]);
    const other = await pick("acc_someone_else", cookie);
    expect(other.status).toBe(400);
    expect(((await other.json()) as ErrorBody).error.details).toEqual([
      { field: "accountId", issue: "is not one of the accounts ada@example.com may sign in to" },
    ]);
  });

  it("lists the choices, and a pick redeems its one-time link once: a token never issued opens nothing", async () => {
    const token = randomBytes(32).toString("base64url");
    await h.gateway.context.accounts.createConsoleLink({
      accountId: tenant.accountId,
      tokenSha256: sha256Hex(token),
      expireTime: timestampFromMs(Date.now() + 60_000),
    });
    const forged = randomBytes(32).toString("base64url");
    const cookie = choiceCookie([
      { token, accountId: tenant.accountId, name: "Acme" },
      { token: forged, accountId: "acc_forged", name: "Forged" },
    ]);
    const listed = await get("/console/oidc/accounts", { cookie });
    expect(await listed.json()).toEqual({
      success: true,
      data: {
        email: "ada@example.com",
        accounts: [
          { id: tenant.accountId, name: "Acme", role: "owner" },
          { id: "acc_forged", name: "Forged", role: "owner" },
        ],
      },
    });

    const refused = await pick("acc_forged", cookie);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as ErrorBody).error.message).toBe(
      "This account choice was used or has expired: sign in with SSO again.",
    );
    expect(refused.headers.getSetCookie().some((c) => /^agentry_session=[^;]/.test(c))).toBe(false);

    const picked = await pick(tenant.accountId, cookie);
    expect(picked.status).toBe(201);
    const session = (await picked.json()) as { data: { account: { id: string }; member: { role: string } } };
    expect(session.data.account.id).toBe(tenant.accountId);
    expect(session.data.member.role).toBe("owner");
    const cookies = picked.headers.getSetCookie();
    expect(cookies.some((c) => /^agentry_session=[A-Za-z0-9_-]{43};/.test(c))).toBe(true);
    // The choice is cleared as it is taken.
    expect(cookies.some((c) => /^agentry_oidc_accounts=;.*path=\/console\/oidc\/accounts/i.test(c))).toBe(
      true,
    );
    expect((await pick(tenant.accountId, cookie)).status).toBe(401);
  });
});
