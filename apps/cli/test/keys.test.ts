import { existsSync } from "node:fs";
import { isWellFormedApiKey, SCOPES, sha256Hex } from "@agentry/core";
import { afterAll, describe, expect, test } from "vitest";
import {
  allBytes,
  cleanUp,
  createAccount,
  createKey,
  lines,
  oneLine,
  openTestStore,
  run,
  tempDataDir,
} from "./harness.js";

afterAll(cleanUp);

interface KeyJson {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  scopes: string[];
  fullAccess: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

describe("keys create", () => {
  test("prints a well-formed key alone on its last line; the store holds only its SHA-256", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);

    const result = await run(["keys", "create", "--account", "acme", "--name", "ci"], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const output = lines(result.stdout);
    const secret = output.at(-1) ?? "";
    expect(isWellFormedApiKey(secret)).toBe(true);
    // The key appears once, on the last line, and nowhere else in the output.
    expect(result.stdout.indexOf(secret)).toBe(result.stdout.length - secret.length - 1);
    expect(output.length).toBeGreaterThan(1);

    const store = await openTestStore(dataDir);
    const found = await store.findApiKeyBySha256(sha256Hex(secret));
    expect(found?.account.id).toBe(account.id);
    expect(found?.key).toMatchObject({
      accountId: account.id,
      name: "ci",
      prefix: secret.slice(0, "agentry_sk_".length + 6),
      scopes: [...SCOPES],
      fullAccess: true,
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
    });
    expect(result.stdout).toContain(found?.key.id);
  });

  test("the plaintext key is nowhere in the data directory, while its prefix and hash are", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const { secret } = await createKey(dataDir, ["--account", "acme"]);

    const bytes = await allBytes(dataDir);
    expect(bytes.includes(secret)).toBe(false);
    // Controls: the search does see what the store does keep about the key.
    expect(bytes.includes(secret.slice(0, "agentry_sk_".length + 6))).toBe(true);
    expect(bytes.includes(sha256Hex(secret))).toBe(true);
  });

  test("each key is new", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const first = await createKey(dataDir, ["--account", "acme"]);
    const second = await createKey(dataDir, ["--account", "acme"]);
    expect(first.secret).not.toBe(second.secret);
    expect(first.id).not.toBe(second.id);
  });

  test("--scopes keeps the given scopes in their canonical order; --expires is stored in UTC", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const { secret } = await createKey(dataDir, [
      "--account",
      "acme",
      "--scopes",
      "messages:send, agents:read,messages:send",
      "--expires",
      "2099-06-30T12:00:00+02:00",
    ]);

    const store = await openTestStore(dataDir);
    const found = await store.findApiKeyBySha256(sha256Hex(secret));
    expect(found?.key.scopes).toEqual(["agents:read", "messages:send"]);
    expect(found?.key.fullAccess).toBe(false);
    expect(found?.key.expiresAt).toBe("2099-06-30T10:00:00.000Z");
  });

  test("without --scopes the key has full access, shown as today's scopes and said to gain later ones", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const result = await run(["keys", "create", "--account", "acme"], dataDir);
    expect(result.code).toBe(0);
    const scopesLine = lines(result.stdout).find((line) => line.trim().startsWith("scopes"));
    expect(scopesLine).toContain(SCOPES.join(", "));
    expect(scopesLine).toContain("full access: also every scope added later");
    const secret = lines(result.stdout).at(-1) ?? "";
    const store = await openTestStore(dataDir);
    expect((await store.findApiKeyBySha256(sha256Hex(secret)))?.key).toMatchObject({
      scopes: [...SCOPES],
      fullAccess: true,
    });

    // Naming every scope is not full access: the key holds those and no later ones.
    const named = await run(
      ["keys", "create", "--account", "acme", "--scopes", SCOPES.join(","), "--json"],
      dataDir,
    );
    expect(JSON.parse(named.stdout)).toMatchObject({ scopes: [...SCOPES], fullAccess: false });
    const listed = lines((await run(["keys", "list", "--account", "acme"], dataDir)).stdout);
    expect(listed.filter((line) => line.includes(`${SCOPES.join(",")}+`))).toHaveLength(1);
  });

  test("--expires takes a date alone as midnight UTC", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const { secret } = await createKey(dataDir, ["--account", "acme", "--expires", "2099-01-31"]);
    const store = await openTestStore(dataDir);
    expect((await store.findApiKeyBySha256(sha256Hex(secret)))?.key.expiresAt).toBe(
      "2099-01-31T00:00:00.000Z",
    );
  });

  test("--account also takes the account id", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);
    const { secret } = await createKey(dataDir, ["--account", account.id]);
    const store = await openTestStore(dataDir);
    expect((await store.findApiKeyBySha256(sha256Hex(secret)))?.account.name).toBe("acme");
  });

  test("--json prints the record with the key", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);
    const result = await run(
      ["keys", "create", "--account", "acme", "--scopes", "agents:read", "--json"],
      dataDir,
    );
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as KeyJson & { key: string };
    expect(isWellFormedApiKey(created.key)).toBe(true);
    expect(created).toMatchObject({
      accountId: account.id,
      scopes: ["agents:read"],
      fullAccess: false,
      revokedAt: null,
    });
    const store = await openTestStore(dataDir);
    expect((await store.findApiKeyBySha256(sha256Hex(created.key)))?.key.id).toBe(created.id);
  });

  test("an unknown account fails with exit 1 and creates nothing", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const result = await run(["keys", "create", "--account", "nope"], dataDir);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(oneLine(result.stderr)).toBe("agentry keys create: no account named 'nope'");

    const store = await openTestStore(dataDir);
    const acme = await store.getAccountByName("acme");
    expect(await store.listApiKeys(acme?.id ?? "")).toEqual([]);
  });

  test("an unknown account id fails with exit 1", async () => {
    const dataDir = await tempDataDir();
    const result = await run(["keys", "create", "--account", "acct_01JD0S3V6Q8Y1J7K2M4N5P6R7S"], dataDir);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe(
      "agentry keys create: no account with id 'acct_01JD0S3V6Q8Y1J7K2M4N5P6R7S'",
    );
  });

  test.each([
    { args: [], message: "missing --account NAME" },
    { args: ["--account"], message: "argument missing" },
    { args: ["--account", "acme", "--scopes", "agents:admin"], message: "unknown scope 'agents:admin'" },
    { args: ["--account", "acme", "--scopes", ","], message: "--scopes needs at least one scope" },
    { args: ["--account", "acme", "--expires", "next week"], message: "--expires takes an ISO 8601 date" },
    { args: ["--account", "acme", "--expires", "2099-02-30"], message: "--expires takes an ISO 8601 date" },
    {
      args: ["--account", "acme", "--expires", "2099-01-01T10:00:00"],
      message: "--expires takes an ISO 8601",
    },
    { args: ["--account", "acme", "--expires", "2001-01-01"], message: "is not in the future" },
    { args: ["--account", "acme", "--name", "x".repeat(201)], message: "--name is longer than 200" },
    { args: ["--account", "acme", "--key", "x"], message: "unknown option '--key'" },
    { args: ["acme"], message: "unexpected argument 'acme'" },
  ])("$args is a usage error (exit 2): $message", async ({ args, message }) => {
    const dataDir = await tempDataDir();
    const result = await run(["keys", "create", ...args], dataDir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(oneLine(result.stderr)).toContain(message);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("keys list", () => {
  test("lists the account's keys, oldest first, showing prefixes and never the keys", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    await createAccount(dataDir, ["other"]);
    const first = await createKey(dataDir, ["--account", "acme", "--name", "ci", "--scopes", "agents:read"]);
    const second = await createKey(dataDir, ["--account", "acme", "--expires", "2099-01-31"]);
    await createKey(dataDir, ["--account", "other", "--name", "elsewhere"]);

    const result = await run(["keys", "list", "--account", "acme"], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const [header, row1, row2, ...rest] = lines(result.stdout);
    // The second key, made without --scopes, has full access: today's scopes, marked, and the mark explained.
    expect(rest).toEqual(["+ full access: also every scope added later"]);
    expect(header?.split(/\s{2,}/)).toEqual([
      "ID",
      "NAME",
      "PREFIX",
      "SCOPES",
      "CREATED",
      "LAST USED",
      "EXPIRES",
      "REVOKED",
    ]);
    const created = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(row1?.split(/\s+/)).toEqual([
      first.id,
      "ci",
      first.secret.slice(0, 17),
      "agents:read",
      created,
      "-",
      "-",
      "-",
    ]);
    expect(row2?.split(/\s+/)).toEqual([
      second.id,
      "-",
      second.secret.slice(0, 17),
      `${SCOPES.join(",")}+`,
      created,
      "-",
      "2099-01-31T00:00:00Z",
      "-",
    ]);
    expect(result.stdout).not.toContain(first.secret);
    expect(result.stdout).not.toContain(second.secret);
    expect(result.stdout).not.toContain("elsewhere");
  });

  test("--json prints the key records", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);
    const key = await createKey(dataDir, ["--account", "acme", "--name", "ci"]);

    const result = await run(["keys", "list", "--account", account.id, "--json"], dataDir);
    expect(result.code).toBe(0);
    const keys = JSON.parse(result.stdout) as KeyJson[];
    expect(keys).toEqual([
      {
        id: key.id,
        accountId: account.id,
        name: "ci",
        prefix: key.secret.slice(0, 17),
        scopes: [...SCOPES],
        fullAccess: true,
        createdAt: expect.any(String),
        lastUsedAt: null,
        expiresAt: null,
        revokedAt: null,
        // Made by the admin CLI, not by a member.
        createdBy: null,
      },
    ]);
  });

  test("an account without keys says so", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const result = await run(["keys", "list", "--account", "acme"], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain("Account acme has no API keys.");
    const json = await run(["keys", "list", "--account", "acme", "--json"], dataDir);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  test("an unknown account fails with exit 1; a missing --account is a usage error", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const unknown = await run(["keys", "list", "--account", "nope"], dataDir);
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toBe("agentry keys list: no account named 'nope'");

    const missing = await run(["keys", "list"], dataDir);
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toContain("missing --account NAME");
  });
});

describe("keys revoke", () => {
  test("revokes the key; revoking again keeps the first time", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const key = await createKey(dataDir, ["--account", "acme"]);
    const other = await createKey(dataDir, ["--account", "acme"]);

    const result = await run(["keys", "revoke", key.id], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe(`Revoked API key ${key.id} (${key.secret.slice(0, 17)}).\n`);

    const store = await openTestStore(dataDir);
    const revoked = (await store.findApiKeyBySha256(sha256Hex(key.secret)))?.key;
    expect(revoked?.revokedAt).toEqual(expect.any(String));
    expect((await store.findApiKeyBySha256(sha256Hex(other.secret)))?.key.revokedAt).toBeNull();

    const again = await run(["keys", "revoke", key.id, "--json"], dataDir);
    expect(again.code).toBe(0);
    expect((JSON.parse(again.stdout) as KeyJson).revokedAt).toBe(revoked?.revokedAt);
    const plain = await run(["keys", "revoke", key.id], dataDir);
    expect(plain.stdout).toContain("was already revoked");

    const list = await run(["keys", "list", "--account", "acme", "--json"], dataDir);
    const keys = JSON.parse(list.stdout) as KeyJson[];
    expect(keys.map((k) => [k.id, k.revokedAt])).toEqual([
      [key.id, revoked?.revokedAt],
      [other.id, null],
    ]);
  });

  test("an unknown key id fails with exit 1", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const result = await run(["keys", "revoke", "key_01JD0S3V6Q8Y1J7K2M4N5P6R7S"], dataDir);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(oneLine(result.stderr)).toBe(
      "agentry keys revoke: no API key with id 'key_01JD0S3V6Q8Y1J7K2M4N5P6R7S'",
    );
  });

  test("a missing or extra key id is a usage error", async () => {
    const dataDir = await tempDataDir();
    const missing = await run(["keys", "revoke"], dataDir);
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toContain("missing KEY_ID");
    const extra = await run(["keys", "revoke", "key_a", "key_b"], dataDir);
    expect(extra.code).toBe(2);
    expect(oneLine(extra.stderr)).toContain("unexpected argument 'key_b'");
  });
});
