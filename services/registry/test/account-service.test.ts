import { isWellFormedApiKey, SCOPES, sha256Hex } from "@agentry/core";
import { fromConnectError } from "@agentry/errors";
import { ListApiKeysResponseSchema, Tier } from "@agentry/proto";
import { toJsonString } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startRegistry } from "./harness.js";

let h: Harness;

beforeEach(async () => {
  h = await startRegistry();
});
afterEach(async () => {
  await h.close();
});

async function failure(
  call: Promise<unknown>,
): Promise<{ rpc: ConnectError; app: ReturnType<typeof fromConnectError> }> {
  try {
    await call;
  } catch (error) {
    return { rpc: ConnectError.from(error), app: fromConnectError(error) };
  }
  throw new Error("expected the call to fail");
}

const FULL_STANDARD = {
  requestsPerMinute: 60,
  createPerMinute: 10,
  listPerMinute: 60,
  getPerMinute: 60,
  updatePerMinute: 30,
  deletePerMinute: 10,
  messagesPerMinute: 60,
  concurrentMessages: 10,
  maxAgents: 100,
};

describe("accounts", () => {
  it("creates a standard account by default, with every limit in force", async () => {
    const { account } = await h.accounts.createAccount({ name: "acme" });
    expect(account).toMatchObject({ name: "acme", tier: Tier.STANDARD, limits: FULL_STANDARD });
    expect(account?.id).toMatch(/^acct_/);
    expect(account?.limitOverrides?.maxAgents).toBeUndefined();
    expect(Math.abs(timestampDate(account!.createTime!).getTime() - Date.now())).toBeLessThan(60_000);
  });

  it("applies an enterprise account's overrides over the defaults", async () => {
    const { account } = await h.accounts.createAccount({
      name: "big",
      tier: Tier.ENTERPRISE,
      limitOverrides: { maxAgents: 5000, requestsPerMinute: 10_000 },
    });
    expect(account?.limitOverrides).toMatchObject({ maxAgents: 5000, requestsPerMinute: 10_000 });
    expect(account?.limits).toMatchObject({ ...FULL_STANDARD, maxAgents: 5000, requestsPerMinute: 10_000 });
    expect(await h.store.getAccount(account!.id)).toMatchObject({
      tier: "enterprise",
      limitOverrides: { maxAgents: 5000, requestsPerMinute: 10_000 },
    });
  });

  it("refuses overrides below enterprise, and values that are not positive", async () => {
    for (const request of [
      { name: "a", tier: Tier.PRO, limitOverrides: { maxAgents: 5 } },
      { name: "b", limitOverrides: { maxAgents: 5 } },
      { name: "c", tier: Tier.ENTERPRISE, limitOverrides: { maxAgents: 0 } },
      { name: "d", tier: Tier.ENTERPRISE, limitOverrides: { getPerMinute: -2 } },
      { name: "   " },
    ]) {
      const { rpc, app } = await failure(h.accounts.createAccount(request));
      expect(rpc.code).toBe(Code.InvalidArgument);
      expect(app.code).toBe("INVALID_REQUEST");
    }
    expect((await h.accounts.listAccounts({})).accounts).toEqual([]);
  });

  it("refuses a name that is taken", async () => {
    await h.accounts.createAccount({ name: "acme" });
    const { app } = await failure(h.accounts.createAccount({ name: "acme", tier: Tier.PRO }));
    expect(app.code).toBe("INVALID_REQUEST");
    expect(app.message).toBe("an account named acme already exists");
  });

  it("reads an account by id or by name, and lists them oldest first", async () => {
    const { account: a } = await h.accounts.createAccount({ name: "a" });
    const { account: b } = await h.accounts.createAccount({ name: "b", tier: Tier.PRO });
    expect((await h.accounts.getAccount({ lookup: { case: "id", value: a!.id } })).account).toEqual(a);
    expect((await h.accounts.getAccount({ lookup: { case: "name", value: "b" } })).account).toEqual(b);
    expect((await h.accounts.listAccounts({})).accounts).toEqual([a, b]);
  });

  it("answers NOT_FOUND for an unknown account and INVALID_REQUEST without a lookup", async () => {
    const byName = await failure(h.accounts.getAccount({ lookup: { case: "name", value: "nobody" } }));
    expect(byName.rpc.code).toBe(Code.NotFound);
    expect(byName.app.code).toBe("NOT_FOUND");
    expect((await failure(h.accounts.getAccount({ lookup: { case: "id", value: "acct_x" } }))).app.code).toBe(
      "NOT_FOUND",
    );
    expect((await failure(h.accounts.getAccount({}))).app.code).toBe("INVALID_REQUEST");
  });
});

describe("api keys", () => {
  let accountId: string;
  beforeEach(async () => {
    accountId = (await h.accounts.createAccount({ name: "acme" })).account!.id;
  });

  it("returns the secret once and stores only its SHA-256 and prefix", async () => {
    const { apiKey, secret } = await h.accounts.createApiKey({ accountId, name: "ci" });
    expect(isWellFormedApiKey(secret)).toBe(true);
    expect(apiKey).toMatchObject({ accountId, name: "ci", prefix: secret.slice(0, apiKey!.prefix.length) });
    expect(apiKey?.prefix.length).toBeLessThan(secret.length / 2);
    // Made without scopes: a full-access key, listed with every scope this version has.
    expect(apiKey?.scopes).toEqual([...SCOPES]);
    expect(apiKey?.fullAccess).toBe(true);
    expect(apiKey?.expireTime).toBeUndefined();

    const stored = await h.store.findApiKeyBySha256(sha256Hex(secret));
    expect(stored?.key.id).toBe(apiKey?.id);
    expect(JSON.stringify(await h.store.listApiKeys(accountId))).not.toContain(secret);
    const listed = await h.accounts.listApiKeys({ accountId });
    expect(toJsonString(ListApiKeysResponseSchema, listed)).not.toContain(
      secret.slice(apiKey!.prefix.length),
    );
  });

  it("grants the requested scopes only, and refuses unknown ones", async () => {
    const { apiKey } = await h.accounts.createApiKey({
      accountId,
      scopes: ["messages:send", "agents:read", "agents:read"],
    });
    expect(apiKey?.scopes).toEqual(["agents:read", "messages:send"]);
    expect(apiKey?.fullAccess).toBe(false);
    const { app } = await failure(h.accounts.createApiKey({ accountId, scopes: ["agents:read", "admin"] }));
    expect(app.code).toBe("INVALID_REQUEST");
    expect(app.message).toContain("admin");
  });

  it("refuses a key for an unknown account or with a past expiry", async () => {
    expect((await failure(h.accounts.createApiKey({ accountId: "acct_nobody" }))).app.code).toBe("NOT_FOUND");
    const past = timestampFromDate(new Date(Date.now() - 1000));
    expect((await failure(h.accounts.createApiKey({ accountId, expireTime: past }))).app.code).toBe(
      "INVALID_REQUEST",
    );
  });

  it("verifies a good key, returning the key and its account with limits", async () => {
    const expires = new Date(Date.now() + 3_600_000);
    const { apiKey, secret } = await h.accounts.createApiKey({
      accountId,
      scopes: ["agents:read"],
      expireTime: timestampFromDate(expires),
    });
    const verified = await h.accounts.verifyApiKey({ secretSha256: sha256Hex(secret) });
    expect(verified.apiKey).toEqual(apiKey);
    expect(verified.account).toMatchObject({ id: accountId, tier: Tier.STANDARD, limits: FULL_STANDARD });
    expect(timestampDate(verified.apiKey!.expireTime!).getTime()).toBe(expires.getTime());
  });

  it("refuses unknown, revoked and expired keys alike", async () => {
    const revoked = await h.accounts.createApiKey({ accountId });
    await h.accounts.revokeApiKey({ id: revoked.apiKey!.id });
    const expiredSha = sha256Hex("agentry_sk_expired");
    await h.store.createApiKey({
      accountId,
      name: "old",
      scopes: ["agents:read"],
      expiresAt: new Date(Date.now() - 1).toISOString(),
      sha256: expiredSha,
      prefix: "agentry_sk_expire",
    });

    for (const secretSha256 of [sha256Hex(revoked.secret), expiredSha, sha256Hex("agentry_sk_unknown")]) {
      const { rpc, app } = await failure(h.accounts.verifyApiKey({ secretSha256 }));
      expect(rpc.code).toBe(Code.Unauthenticated);
      expect(app.code).toBe("UNAUTHORIZED");
      expect(app.message).toBe("The API key is invalid, revoked or expired.");
    }
  });

  it("revokes once, within the given account only", async () => {
    const { apiKey } = await h.accounts.createApiKey({ accountId });
    const other = (await h.accounts.createAccount({ name: "other" })).account!.id;
    expect((await failure(h.accounts.revokeApiKey({ id: apiKey!.id, accountId: other }))).app.code).toBe(
      "NOT_FOUND",
    );
    const first = await h.accounts.revokeApiKey({ id: apiKey!.id, accountId });
    expect(first.apiKey?.revokeTime).toBeDefined();
    expect(first.alreadyRevoked).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await h.accounts.revokeApiKey({ id: apiKey!.id });
    expect(again.apiKey?.revokeTime).toEqual(first.apiKey?.revokeTime);
    expect(again.alreadyRevoked).toBe(true);
    expect((await failure(h.accounts.revokeApiKey({ id: "key_missing" }))).app.code).toBe("NOT_FOUND");
  });

  it("records last use in batches, later times winning, unknown keys ignored", async () => {
    const { apiKey } = await h.accounts.createApiKey({ accountId });
    const use = (iso: string) => ({ keyId: apiKey!.id, useTime: timestampFromDate(new Date(iso)) });
    await h.accounts.touchApiKeys({
      uses: [
        use("2026-05-02T00:00:00.000Z"),
        { keyId: "key_unknown", useTime: timestampFromDate(new Date()) },
      ],
    });
    await h.accounts.touchApiKeys({ uses: [use("2026-05-01T00:00:00.000Z")] });
    const { apiKeys } = await h.accounts.listApiKeys({ accountId });
    const stored = apiKeys.find((key) => key.id === apiKey!.id)!;
    expect(timestampDate(stored.lastUsedTime!).toISOString()).toBe("2026-05-02T00:00:00.000Z");
  });

  it("lists an account's keys, revoked ones included, with their last use", async () => {
    const a = await h.accounts.createApiKey({ accountId, name: "a" });
    const b = await h.accounts.createApiKey({ accountId, name: "b" });
    await h.accounts.revokeApiKey({ id: a.apiKey!.id });
    await h.store.touchApiKeys(new Map([[b.apiKey!.id, "2026-05-01T00:00:00.000Z"]]));
    const { apiKeys } = await h.accounts.listApiKeys({ accountId });
    expect(apiKeys.map((k) => k.name)).toEqual(["a", "b"]);
    expect(apiKeys[0]?.revokeTime).toBeDefined();
    expect(timestampDate(apiKeys[1]!.lastUsedTime!).toISOString()).toBe("2026-05-01T00:00:00.000Z");
    expect((await failure(h.accounts.listApiKeys({ accountId: "acct_nobody" }))).app.code).toBe("NOT_FOUND");
  });
});

describe("console sign-in links and sessions", () => {
  const sha = (c: string) => c.repeat(64);
  const inMs = (ms: number) => timestampFromDate(new Date(Date.now() + ms));

  async function linkedAccount() {
    const { account } = await h.accounts.createAccount({ name: `console-${Date.now()}` });
    await h.accounts.createConsoleLink({
      accountId: account!.id,
      tokenSha256: sha("1"),
      expireTime: inMs(600_000),
    });
    return account!;
  }

  it("redeems a link for a session that verifies, until it is ended", async () => {
    const account = await linkedAccount();
    const { session, account: owner } = await h.accounts.redeemConsoleLink({
      tokenSha256: sha("1"),
      sessionSha256: sha("a"),
      expireTime: inMs(3_600_000),
      idleTimeoutSeconds: 1800,
    });
    expect(owner?.id).toBe(account.id);
    expect(owner?.limits).toMatchObject(FULL_STANDARD);
    expect(session).toMatchObject({ accountId: account.id, idleTimeoutSeconds: 1800 });
    const verified = await h.accounts.verifyConsoleSession({ sessionSha256: sha("a") });
    expect(verified.session?.id).toBe(session?.id);
    await h.accounts.endConsoleSession({ sessionSha256: sha("a") });
    const ended = await failure(h.accounts.verifyConsoleSession({ sessionSha256: sha("a") }));
    expect(ended.rpc.code).toBe(Code.Unauthenticated);
    // Ending again, or a session that never was, succeeds.
    await h.accounts.endConsoleSession({ sessionSha256: sha("a") });
    await h.accounts.endConsoleSession({ sessionSha256: sha("f") });
  });

  it("refuses a session idle for longer than its idle timeout, and one past its absolute expiry", async () => {
    const account = await linkedAccount();
    await h.accounts.createConsoleLink({
      accountId: account.id,
      tokenSha256: sha("2"),
      expireTime: inMs(600_000),
    });
    await h.accounts.redeemConsoleLink({
      tokenSha256: sha("1"),
      sessionSha256: sha("a"),
      expireTime: inMs(3_600_000),
      idleTimeoutSeconds: 1,
    });
    await h.accounts.redeemConsoleLink({
      tokenSha256: sha("2"),
      sessionSha256: sha("b"),
      expireTime: inMs(1_000),
      idleTimeoutSeconds: 3600,
    });
    await h.accounts.verifyConsoleSession({ sessionSha256: sha("a") });
    await h.accounts.verifyConsoleSession({ sessionSha256: sha("b") });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    for (const session of ["a", "b"]) {
      const refused = await failure(h.accounts.verifyConsoleSession({ sessionSha256: sha(session) }));
      expect(refused.rpc.code).toBe(Code.Unauthenticated);
    }
  });

  it("refuses a used or unknown link with UNAUTHENTICATED", async () => {
    await linkedAccount();
    const redeem = (token: string, session: string) =>
      h.accounts.redeemConsoleLink({
        tokenSha256: sha(token),
        sessionSha256: sha(session),
        expireTime: inMs(3_600_000),
        idleTimeoutSeconds: 60,
      });
    await redeem("1", "a");
    expect((await failure(redeem("1", "b"))).rpc.code).toBe(Code.Unauthenticated);
    expect((await failure(redeem("2", "c"))).rpc.code).toBe(Code.Unauthenticated);
    expect((await failure(h.accounts.verifyConsoleSession({ sessionSha256: sha("b") }))).rpc.code).toBe(
      Code.Unauthenticated,
    );
  });

  it("checks its arguments: hex SHA-256s, a future expiry at most 30 days ahead, a positive idle timeout", async () => {
    const account = await linkedAccount();
    const invalid = async (call: Promise<unknown>, field: string) => {
      const { app } = await failure(call);
      expect(app.code).toBe("INVALID_REQUEST");
      expect(app.details?.[0]?.field).toBe(field);
    };
    await invalid(
      h.accounts.createConsoleLink({ accountId: account.id, tokenSha256: "nope", expireTime: inMs(60_000) }),
      "token_sha256",
    );
    await invalid(
      h.accounts.createConsoleLink({
        accountId: account.id,
        tokenSha256: sha("2"),
        expireTime: inMs(-1_000),
      }),
      "expire_time",
    );
    const session = { tokenSha256: sha("1"), sessionSha256: sha("a"), idleTimeoutSeconds: 60 };
    await invalid(
      h.accounts.redeemConsoleLink({ ...session, expireTime: inMs(31 * 86_400_000) }),
      "expire_time",
    );
    await invalid(
      h.accounts.redeemConsoleLink({ ...session, expireTime: inMs(60_000), idleTimeoutSeconds: 0 }),
      "idle_timeout_seconds",
    );
    await invalid(
      h.accounts.redeemConsoleLink({ ...session, sessionSha256: "A".repeat(64), expireTime: inMs(60_000) }),
      "session_sha256",
    );
    const missing = await failure(
      h.accounts.createConsoleLink({
        accountId: "acct_01JAAAAAAAAAAAAAAAAAAAAAAA",
        tokenSha256: sha("3"),
        expireTime: inMs(60_000),
      }),
    );
    expect(missing.rpc.code).toBe(Code.NotFound);
    // None of the refused calls used the link up.
    await h.accounts.redeemConsoleLink({ ...session, expireTime: inMs(60_000) });
  });
});
