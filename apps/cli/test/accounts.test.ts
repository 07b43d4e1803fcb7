import { existsSync } from "node:fs";
import { LIMIT_NAMES, TIER_DEFAULTS } from "@agentry/core";
import { afterAll, describe, expect, test } from "vitest";
import { cleanUp, lines, oneLine, openTestStore, run, tempDataDir } from "./harness.js";

afterAll(cleanUp);

interface AccountJson {
  id: string;
  name: string;
  tier: string;
  createdAt: string;
  limitOverrides: Record<string, number>;
  limits: Record<string, number>;
}

describe("accounts create", () => {
  test("creates a standard account by default and prints it with the limits in force", async () => {
    const dataDir = await tempDataDir();
    const result = await run(["accounts", "create", "acme"], dataDir);

    expect(result).toMatchObject({ code: 0, stderr: "" });
    const out = result.stdout;
    expect(out).toMatch(/^id\s+acct_[0-9A-Z]{26}$/m);
    expect(out).toMatch(/^name\s+acme$/m);
    expect(out).toMatch(/^tier\s+standard$/m);
    for (const name of LIMIT_NAMES) {
      expect(out).toMatch(new RegExp(`^\\s+${name}\\s+${TIER_DEFAULTS.standard[name]}$`, "m"));
    }

    const store = await openTestStore(dataDir);
    const stored = await store.getAccountByName("acme");
    expect(stored).toMatchObject({ name: "acme", tier: "standard", limitOverrides: {} });
    expect(out).toContain(stored?.id);
  });

  test("--json prints the account with its overrides and the limits in force", async () => {
    const dataDir = await tempDataDir();
    const result = await run(
      [
        "accounts",
        "create",
        "bigco",
        "--tier",
        "enterprise",
        "--limit",
        "maxAgents=500",
        "--limit",
        "requestsPerMinute=1000",
        "--json",
      ],
      dataDir,
    );

    expect(result).toMatchObject({ code: 0, stderr: "" });
    const account = JSON.parse(result.stdout) as AccountJson;
    expect(account).toMatchObject({
      name: "bigco",
      tier: "enterprise",
      limitOverrides: { maxAgents: 500, requestsPerMinute: 1000 },
      limits: { ...TIER_DEFAULTS.enterprise, maxAgents: 500, requestsPerMinute: 1000 },
    });
    expect(account.id).toMatch(/^acct_/);
    expect(new Date(account.createdAt).toISOString()).toBe(account.createdAt);

    const store = await openTestStore(dataDir);
    expect(await store.getAccount(account.id)).toMatchObject({
      name: "bigco",
      tier: "enterprise",
      limitOverrides: { maxAgents: 500, requestsPerMinute: 1000 },
    });
  });

  test("the plain output marks overridden limits", async () => {
    const dataDir = await tempDataDir();
    const result = await run(
      ["accounts", "create", "bigco", "--tier", "enterprise", "--limit", "maxAgents=7"],
      dataDir,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\s+maxAgents\s+7\s+\(override\)$/m);
    expect(result.stdout).toMatch(/^\s+createPerMinute\s+10$/m);
  });

  test("a pro account has pro limits", async () => {
    const dataDir = await tempDataDir();
    const result = await run(["accounts", "create", "mid", "--tier", "pro", "--json"], dataDir);
    expect(result.code).toBe(0);
    const account = JSON.parse(result.stdout) as AccountJson;
    expect(account.limits).toEqual(TIER_DEFAULTS.pro);
    expect(account.limits.requestsPerMinute).toBe(300);
  });

  test("a taken name fails with exit 1 and leaves the first account alone", async () => {
    const dataDir = await tempDataDir();
    expect((await run(["accounts", "create", "acme", "--tier", "pro"], dataDir)).code).toBe(0);

    const again = await run(["accounts", "create", "acme"], dataDir);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(oneLine(again.stderr)).toContain("an account named 'acme' already exists");

    const store = await openTestStore(dataDir);
    const accounts = await store.listAccounts();
    expect(accounts.map((a) => [a.name, a.tier])).toEqual([["acme", "pro"]]);
  });

  test.each([
    { args: ["acme", "--tier", "gold"], message: "unknown tier 'gold' (tiers: standard, pro, enterprise)" },
    { args: ["acme", "--limit", "maxAgents=5"], message: "--limit applies only to enterprise accounts" },
    { args: ["acme", "--tier", "pro", "--limit", "maxAgents=5"], message: "only to enterprise accounts" },
    { args: ["acme", "--tier", "enterprise", "--limit", "maxAgent=5"], message: "unknown limit 'maxAgent'" },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "max_agents=5"],
      message: "unknown limit 'max_agents'",
    },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "maxAgents=0"],
      message: "must be an integer from 1 to 2147483647",
    },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "maxAgents=-3"],
      message: "must be an integer from 1 to 2147483647",
    },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "maxAgents=1.5"],
      message: "must be an integer from 1 to 2147483647",
    },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "maxAgents=1e3"],
      message: "must be an integer from 1 to 2147483647",
    },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "maxAgents="],
      message: "must be an integer from 1 to 2147483647",
    },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "maxAgents=99999999999999999999"],
      message: "must be an integer from 1 to 2147483647",
    },
    { args: ["acme", "--tier", "enterprise", "--limit", "maxAgents"], message: "--limit takes NAME=VALUE" },
    {
      args: ["acme", "--tier", "enterprise", "--limit", "maxAgents=5", "--limit", "maxAgents=6"],
      message: "limit maxAgents is given twice",
    },
    { args: ["acme", "--tier"], message: "argument missing" },
    { args: ["acme", "--colour", "red"], message: "unknown option '--colour'" },
    { args: [], message: "missing NAME" },
    { args: ["acme", "corp"], message: "unexpected argument 'corp'" },
    { args: ["   "], message: "the account name is empty" },
    { args: ["x".repeat(201)], message: "longer than 200 characters" },
    { args: ["acct_01JD0S3V6Q8Y1J7K2M4N5P6R7S"], message: "looks like an account id" },
  ])("$args is a usage error (exit 2): $message", async ({ args, message }) => {
    const dataDir = await tempDataDir();
    const result = await run(["accounts", "create", ...args], dataDir);

    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    const line = oneLine(result.stderr);
    expect(line).toContain(message);
    expect(line).toMatch(/^agentry accounts create: .*\(run 'agentry accounts create --help' for usage\)$/);
    // A wrong command line never opens, let alone creates, the store.
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("accounts list", () => {
  test("prints a table of every account with its limits in force, oldest first", async () => {
    const dataDir = await tempDataDir();
    expect((await run(["accounts", "create", "acme"], dataDir)).code).toBe(0);
    expect(
      (
        await run(
          ["accounts", "create", "bigco", "--tier", "enterprise", "--limit", "maxAgents=500"],
          dataDir,
        )
      ).code,
    ).toBe(0);

    const result = await run(["accounts", "list"], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const [header, first, second, ...rest] = lines(result.stdout);
    expect(rest).toEqual([]);
    expect(header?.split(/\s+/)).toEqual(["ID", "NAME", "TIER", "CREATED", ...LIMIT_NAMES]);
    const standard = LIMIT_NAMES.map((name) => String(TIER_DEFAULTS.standard[name]));
    const enterprise = LIMIT_NAMES.map((name) =>
      name === "maxAgents" ? "500*" : String(TIER_DEFAULTS.enterprise[name]),
    );
    const timestamp = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(first?.split(/\s+/)).toEqual([
      expect.stringMatching(/^acct_/),
      "acme",
      "standard",
      timestamp,
      ...standard,
    ]);
    expect(second?.split(/\s+/)).toEqual([
      expect.stringMatching(/^acct_/),
      "bigco",
      "enterprise",
      timestamp,
      ...enterprise,
    ]);
  });

  test("--json prints the accounts with their limits in force", async () => {
    const dataDir = await tempDataDir();
    await run(["accounts", "create", "acme", "--tier", "pro"], dataDir);
    await run(
      ["accounts", "create", "bigco", "--tier", "enterprise", "--limit", "concurrentMessages=50"],
      dataDir,
    );

    const result = await run(["accounts", "list", "--json"], dataDir);
    expect(result.code).toBe(0);
    const accounts = JSON.parse(result.stdout) as AccountJson[];
    expect(accounts.map((a) => [a.name, a.tier, a.limits])).toEqual([
      ["acme", "pro", TIER_DEFAULTS.pro],
      ["bigco", "enterprise", { ...TIER_DEFAULTS.enterprise, concurrentMessages: 50 }],
    ]);
  });

  test("with no accounts says so, and the JSON list is empty", async () => {
    const dataDir = await tempDataDir();
    const plain = await run(["accounts", "list"], dataDir);
    expect(plain).toMatchObject({ code: 0, stderr: "" });
    expect(plain.stdout).toContain("No accounts.");
    const json = await run(["accounts", "list", "--json"], dataDir);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  test("an extra argument is a usage error", async () => {
    const dataDir = await tempDataDir();
    const result = await run(["accounts", "list", "acme"], dataDir);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain("unexpected argument 'acme'");
  });
});

describe("accounts update", () => {
  test("changes the tier and overrides, keeping other overrides unless reset", async () => {
    const dataDir = await tempDataDir();
    expect((await run(["accounts", "create", "acme"], dataDir)).code).toBe(0);
    const toPro = await run(["accounts", "update", "acme", "--tier", "pro", "--json"], dataDir);
    expect(toPro.code).toBe(0);
    expect((JSON.parse(toPro.stdout) as AccountJson).limits.requestsPerMinute).toBe(300);

    const big = await run(
      [
        "accounts",
        "update",
        "acme",
        "--tier",
        "enterprise",
        "--limit",
        "maxAgents=900",
        "--limit",
        "createPerMinute=50",
      ],
      dataDir,
    );
    expect(big.code).toBe(0);
    const more = await run(["accounts", "update", "acme", "--limit", "maxAgents=1000", "--json"], dataDir);
    expect((JSON.parse(more.stdout) as AccountJson).limitOverrides).toEqual({
      maxAgents: 1000,
      createPerMinute: 50,
    });
    const reset = await run(["accounts", "update", "acme", "--reset-limits", "--json"], dataDir);
    expect((JSON.parse(reset.stdout) as AccountJson).limitOverrides).toEqual({});

    await run(["accounts", "update", "acme", "--limit", "maxAgents=5"], dataDir);
    const down = await run(["accounts", "update", "acme", "--tier", "standard", "--json"], dataDir);
    expect(JSON.parse(down.stdout) as AccountJson).toMatchObject({ tier: "standard", limitOverrides: {} });

    const store = await openTestStore(dataDir);
    expect(await store.getAccountByName("acme")).toMatchObject({ tier: "standard", limitOverrides: {} });
  });

  test("refuses nothing to change, limits outside enterprise, too large values and unknown accounts", async () => {
    const dataDir = await tempDataDir();
    expect((await run(["accounts", "create", "acme"], dataDir)).code).toBe(0);
    expect(await run(["accounts", "update", "acme"], dataDir)).toMatchObject({ code: 2 });
    expect(await run(["accounts", "update", "acme", "--limit", "maxAgents=5"], dataDir)).toMatchObject({
      code: 2,
    });
    expect(
      await run(
        ["accounts", "update", "acme", "--tier", "enterprise", "--limit", "maxAgents=2147483648"],
        dataDir,
      ),
    ).toMatchObject({ code: 2 });
    const missing = await run(["accounts", "update", "nobody", "--tier", "pro"], dataDir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nobody/);
  });
});
