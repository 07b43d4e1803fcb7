import { sha256Hex } from "@agentry/core";
import { afterAll, describe, expect, test } from "vitest";
import { cleanUp, createAccount, lines, oneLine, openTestStore, run, tempDataDir } from "./harness.js";

afterAll(cleanUp);

const session = { sha256: "a".repeat(64), expiresAt: "2099-01-01T00:00:00Z", idleTimeoutMs: 60_000 };

function tokenOf(url: string): string {
  const match = /^http:\/\/localhost:8080\/console\/sign-in#token=([A-Za-z0-9_-]{43})$/.exec(url);
  if (!match) throw new Error(`not a sign-in link: ${url}`);
  return match[1]!;
}

describe("console link", () => {
  test("prints a one-time sign-in link on its last line; the store holds only its token's SHA-256", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);
    const result = await run(["console", "link", "--account", "acme"], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const token = tokenOf(lines(result.stdout).at(-1)!);
    expect(result.stdout).toContain("valid once until");

    const store = await openTestStore(dataDir);
    const redeemed = await store.redeemConsoleLink(sha256Hex(token), session);
    expect(redeemed?.account.id).toBe(account.id);
    expect(
      await store.redeemConsoleLink(sha256Hex(token), { ...session, sha256: "b".repeat(64) }),
    ).toBeNull();
  });

  test("expires after --ttl minutes and points at --base-url", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const before = Date.now();
    const result = await run(
      [
        "console",
        "link",
        "--account",
        "acme",
        "--ttl",
        "5",
        "--base-url",
        "https://agents.example.com/",
        "--json",
      ],
      dataDir,
    );
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as { url: string; expiresAt: string };
    expect(printed.url).toMatch(/^https:\/\/agents\.example\.com\/console\/sign-in#token=[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(printed.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(4.9 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(5 * 60_000 + 5_000);
  });

  test("points where the server is reached: PUBLIC_BASE_URL, else PORT, as the server reads them; --base-url wins", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const link = async (env: Record<string, string>, extra: string[] = []) => {
      const result = await run(["console", "link", "--account", "acme", "--json", ...extra], dataDir, env);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      return (JSON.parse(result.stdout) as { url: string }).url.replace(/#token=.*$/, "");
    };
    expect(await link({})).toBe("http://localhost:8080/console/sign-in");
    expect(await link({ PORT: "3000" })).toBe("http://localhost:3000/console/sign-in");
    expect(await link({ PORT: "3000", PUBLIC_BASE_URL: "https://agents.example.com/" })).toBe(
      "https://agents.example.com/console/sign-in",
    );
    // An empty PUBLIC_BASE_URL is unset, as the server has it.
    expect(await link({ PORT: "3000", PUBLIC_BASE_URL: "" })).toBe("http://localhost:3000/console/sign-in");
    expect(
      await link({ PORT: "3000", PUBLIC_BASE_URL: "https://agents.example.com" }, [
        "--base-url",
        "http://127.0.0.1:9000",
      ]),
    ).toBe("http://127.0.0.1:9000/console/sign-in");

    const text = await run(["console", "link", "--account", "acme"], dataDir, { PORT: "3000" });
    expect(text.stdout).toContain("for the server at http://localhost:3000 (PUBLIC_BASE_URL, else PORT");
    const bad = await run(["console", "link", "--account", "acme"], dataDir, { PORT: "eighty" });
    expect(bad.code).not.toBe(0);
    expect(oneLine(bad.stderr)).toContain("PORT");
  });

  test("refuses an unknown account, a missing --account and a bad --ttl", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const unknown = await run(["console", "link", "--account", "nobody"], dataDir);
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toContain("no account named 'nobody'");
    const missing = await run(["console", "link"], dataDir);
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toContain("missing --account NAME");
    for (const ttl of ["0", "61", "ten"]) {
      const bad = await run(["console", "link", "--account", "acme", "--ttl", ttl], dataDir);
      expect(bad.code).toBe(2);
      expect(oneLine(bad.stderr)).toContain("--ttl takes whole minutes");
    }
  });
});
