import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { openConversationStore } from "@agentry/conversation";
import { isWellFormedApiKey, LIMIT_NAMES, SCOPES, sha256Hex } from "@agentry/core";
import { afterAll, describe, expect, test } from "vitest";
import {
  agentry,
  allBytes,
  cleanUp,
  lines,
  oneLine,
  openTestStore,
  shell,
  tempDataDir,
  tempDir,
} from "./harness.js";

afterAll(cleanUp);

// The real CLI as a child process, as an admin runs it. The many cases of each command run in process (faster)
// in the other test files.
describe.concurrent("the agentry process", () => {
  test("creates accounts, refuses a taken name, and lists them", async () => {
    const dataDir = await tempDataDir();
    const created = await agentry(["accounts", "create", "acme"], { dataDir });
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(created.stdout).toMatch(/^tier\s+standard$/m);

    const enterprise = await agentry(
      ["accounts", "create", "bigco", "--tier", "enterprise", "--limit", "maxAgents=500", "--json"],
      { dataDir },
    );
    expect(enterprise.code).toBe(0);
    expect(JSON.parse(enterprise.stdout)).toMatchObject({ tier: "enterprise", limits: { maxAgents: 500 } });

    const duplicate = await agentry(["accounts", "create", "acme"], { dataDir });
    expect(duplicate.code).toBe(1);
    expect(duplicate.stdout).toBe("");
    expect(oneLine(duplicate.stderr)).toBe("agentry accounts create: an account named 'acme' already exists");

    const list = await agentry(["accounts", "list"], { dataDir });
    expect(list).toMatchObject({ code: 0, stderr: "" });
    const [header, ...rows] = lines(list.stdout);
    expect(header?.split(/\s+/)).toEqual(["ID", "NAME", "TIER", "CREATED", ...LIMIT_NAMES]);
    expect(rows.map((row) => row.split(/\s+/).slice(1, 3))).toEqual([
      ["acme", "standard"],
      ["bigco", "enterprise"],
    ]);
  });

  test("keys create prints the key alone on its last line; the store holds its SHA-256, never the key", async () => {
    const dataDir = await tempDataDir();
    // The service may hold the store open meanwhile; the CLI works beside it.
    const store = await openTestStore(dataDir);
    const account = await store.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });

    const result = await agentry(["keys", "create", "--account", "acme", "--name", "ci"], { dataDir });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const secret = lines(result.stdout).at(-1) ?? "";
    expect(isWellFormedApiKey(secret)).toBe(true);
    expect(result.stdout.split(secret)).toHaveLength(2);

    const found = await store.findApiKeyBySha256(sha256Hex(secret));
    expect(found?.account.id).toBe(account.id);
    expect(found?.key).toMatchObject({
      name: "ci",
      scopes: [...SCOPES],
      fullAccess: true,
      prefix: secret.slice(0, 17),
    });
    expect(result.stdout).toContain(found?.key.id);

    const bytes = await allBytes(dataDir);
    expect(bytes.includes(secret)).toBe(false);
    expect(bytes.includes(secret.slice(0, 17))).toBe(true);
    expect(bytes.includes(sha256Hex(secret))).toBe(true);
  });

  test("`keys create ... | tail -1` yields the key", async () => {
    const dataDir = await tempDataDir();
    const store = await openTestStore(dataDir);
    await store.createAccount({ name: "acme", tier: "pro", limitOverrides: {} });

    const result = await shell("$AGENTRY keys create --account acme --name deploy | tail -1", { dataDir });
    expect(result.code).toBe(0);
    const secret = result.stdout.trim();
    expect(isWellFormedApiKey(secret)).toBe(true);
    expect((await store.findApiKeyBySha256(sha256Hex(secret)))?.key.name).toBe("deploy");
  });

  test("lists and revokes keys; an unknown key id fails", async () => {
    const dataDir = await tempDataDir();
    const store = await openTestStore(dataDir);
    const account = await store.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
    const key = await store.createApiKey({
      accountId: account.id,
      name: "ci",
      scopes: ["agents:read"],
      expiresAt: null,
      sha256: "0".repeat(64),
      prefix: "agentry_sk_abcdef",
    });

    const revoke = await agentry(["keys", "revoke", key.id], { dataDir });
    expect(revoke).toMatchObject({
      code: 0,
      stderr: "",
      stdout: `Revoked API key ${key.id} (agentry_sk_abcdef).\n`,
    });
    const revokedAt = (await store.listApiKeys(account.id))[0]?.revokedAt;
    expect(revokedAt).toEqual(expect.any(String));

    const list = await agentry(["keys", "list", "--account", "acme"], { dataDir });
    expect(list.code).toBe(0);
    expect(lines(list.stdout)[1]?.split(/\s+/)).toEqual([
      key.id,
      "ci",
      "agentry_sk_abcdef",
      "agents:read",
      expect.stringMatching(/Z$/),
      "-",
      "-",
      (revokedAt ?? "").replace(/\.\d+Z$/, "Z"),
    ]);

    const unknown = await agentry(["keys", "revoke", "key_01JD0S3V6Q8Y1J7K2M4N5P6R7S"], { dataDir });
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toBe(
      "agentry keys revoke: no API key with id 'key_01JD0S3V6Q8Y1J7K2M4N5P6R7S'",
    );
  });

  test.each([
    [["accounts", "create", "acme", "--tier", "gold"], "agentry accounts create: unknown tier 'gold'"],
    [["keys", "create", "--account", "acme", "--scopes", "all"], "agentry keys create: unknown scope 'all'"],
    [["accounts", "remove", "acme"], "agentry accounts: unknown command 'remove'"],
    [[], "agentry: missing command"],
  ])("%j exits 2 with one line and leaves DATA_DIR alone", async (args, expected) => {
    const dataDir = await tempDataDir();
    const result = await agentry(args, { dataDir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(oneLine(result.stderr)).toContain(expected);
    expect(existsSync(dataDir)).toBe(false);
  });

  test("usage reads the conversation store beside the registry's", async () => {
    const dataDir = await tempDataDir();
    const registry = await openTestStore(dataDir);
    const account = await registry.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
    const conversations = await openConversationStore({ dataDir });
    const at = "2026-03-10T10:05:00.000Z";
    await conversations.recordCall({
      accountId: account.id,
      agentId: "agt_A",
      userId: "",
      roomId: "",
      id: "msg_01JTESTPROCESS00000000000001",
      requestId: null,
      apiKeyId: null,
      provider: "openai",
      model: "gpt-test",
      stream: false,
      outcome: "failed",
      errorCode: "AGENT_UNAVAILABLE",
      errorMessage: "The provider is overloaded.",
      latencyMs: 30,
      firstTokenMs: null,
      inputTokens: 0,
      outputTokens: 0,
      createdAt: at,
    });
    await conversations.close();

    const result = await agentry(
      ["usage", "--account", "acme", "--from", "2026-03-10", "--to", "2026-03-12"],
      {
        dataDir,
      },
    );
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(lines(result.stdout).slice(2)).toEqual([
      "2026-03-10T00:00:00Z  1         1       0          0           -            -            -         -",
      "2026-03-11T00:00:00Z  0         0       0          0           -            -            -         -",
      "total                 1         1       0          0           -            -            -         -",
    ]);
  });

  test("--help exits 0", async () => {
    const result = await agentry(["--help"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain("agentry <group> <command>");
  });

  test("a relative DATA_DIR is resolved against INIT_CWD, where the user ran `pnpm cli`", async () => {
    const home = await tempDir();
    const result = await agentry(["accounts", "create", "acme"], {
      env: { DATA_DIR: "state/registry", INIT_CWD: home },
    });
    expect(result.code).toBe(0);
    expect(existsSync(path.join(home, "state/registry/registry.db"))).toBe(true);
  });

  test("without INIT_CWD, DATA_DIR defaults to ./data in the current directory", async () => {
    const home = await tempDir();
    const result = await agentry(["accounts", "create", "acme"], { cwd: home });
    expect(result.code).toBe(0);
    const store = await openTestStore(path.join(home, "data"));
    expect(await store.getAccountByName("acme")).not.toBeNull();
  });

  test("a store that cannot be opened fails with exit 1 and one line", async () => {
    const notADirectory = path.join(await tempDir(), "file");
    await writeFile(notADirectory, "not a directory");
    const result = await agentry(["accounts", "list"], { dataDir: notADirectory });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(/^agentry accounts list: ./);
  });

  test("an empty DATA_DIR is a configuration failure (exit 1)", async () => {
    const result = await agentry(["accounts", "list"], { env: { DATA_DIR: "" } });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toContain("DATA_DIR");
  });
});
