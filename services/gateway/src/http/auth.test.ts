import { generateApiKey, sha256Hex } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { AccountSchema, type AccountService, ApiKeySchema, Tier } from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Authenticator } from "./auth.js";

/** A registry that knows the keys in `valid` (by SHA-256) and counts what it is asked. */
function registry(valid: Set<string>) {
  const asked: string[] = [];
  const accounts = {
    async verifyApiKey({ secretSha256 }: { secretSha256: string }) {
      asked.push(secretSha256);
      if (!valid.has(secretSha256))
        throw new AppError("UNAUTHORIZED", "The API key is invalid, revoked or expired.");
      return {
        apiKey: create(ApiKeySchema, { id: "key_1", fullAccess: true }),
        account: create(AccountSchema, { id: "acct_1", tier: Tier.STANDARD }),
      };
    },
  } as unknown as Client<typeof AccountService>;
  return { accounts, asked };
}

describe("Authenticator", () => {
  it("asks the registry once per key and cache lifetime, by the key's SHA-256, and refuses a revoked key after it", async () => {
    const { secret, sha256 } = generateApiKey();
    const valid = new Set([sha256]);
    const { accounts, asked } = registry(valid);
    let now = 1_000;
    const auth = new Authenticator(accounts, 750, () => now);

    const first = await auth.authenticate(`Bearer ${secret}`, {});
    expect(first.keyId).toBe("key_1");
    now += 749;
    expect((await auth.authenticate(`Bearer ${secret}`, {})).keyId).toBe("key_1");
    expect(asked).toEqual([sha256Hex(secret)]);

    valid.delete(sha256);
    now += 1;
    await expect(auth.authenticate(`Bearer ${secret}`, {})).rejects.toThrow(/revoked/);
    expect(asked).toHaveLength(2);
    // A refusal is not kept: the next request asks again.
    await expect(auth.authenticate(`Bearer ${secret}`, {})).rejects.toThrow(/revoked/);
    expect(asked).toHaveLength(3);
  });

  it("refuses a missing, malformed or mistyped key without asking the registry", async () => {
    const { accounts, asked } = registry(new Set());
    const auth = new Authenticator(accounts, 750);
    const { secret } = generateApiKey();
    const mistyped = `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
    await expect(auth.authenticate("", {})).rejects.toThrow(/Missing API key/);
    await expect(auth.authenticate(`Basic ${secret}`, {})).rejects.toThrow(/form 'Bearer <API key>'/);
    await expect(auth.authenticate(`Bearer ${mistyped}`, {})).rejects.toThrow(/malformed/);
    expect(asked).toEqual([]);
  });

  it("holds a key no longer than about twice the cache lifetime after its last request", async () => {
    const { secret, sha256 } = generateApiKey();
    const { accounts } = registry(new Set([sha256]));
    const auth = new Authenticator(accounts, 30);
    await auth.authenticate(`Bearer ${secret}`, {});
    // What the process holds as sent: the keys of its entries.
    const held = (auth as unknown as { entries: Map<string, unknown> }).entries;
    expect([...held.keys()]).toEqual([`Bearer ${secret}`]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(held.size).toBe(0);
  });
});
