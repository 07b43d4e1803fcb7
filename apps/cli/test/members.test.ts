import { afterAll, describe, expect, test } from "vitest";
import { cleanUp, lines, openTestStore, run, tempDataDir } from "./harness.js";

afterAll(cleanUp);

interface MemberJson {
  id: string;
  accountId: string;
  email: string | null;
  name: string;
  role: string;
}

describe("members", () => {
  test("an account starts with its owner; members are invited, listed, given roles and removed", async () => {
    const dataDir = await tempDataDir();
    const created = await run(
      ["accounts", "create", "acme", "--owner-email", "Boss@Example.com", "--owner-name", "Boss", "--json"],
      dataDir,
    );
    expect(created.code).toBe(0);

    const invited = await run(
      [
        "members",
        "invite",
        "--account",
        "acme",
        "--email",
        "ada@example.com",
        "--role",
        "developer",
        "--json",
      ],
      dataDir,
    );
    expect(invited).toMatchObject({ code: 0, stderr: "" });
    const ada = JSON.parse(invited.stdout) as MemberJson;
    expect(ada).toMatchObject({ email: "ada@example.com", name: "ada", role: "developer" });

    const listed = await run(["members", "list", "--account", "acme", "--json"], dataDir);
    expect((JSON.parse(listed.stdout) as MemberJson[]).map((m) => [m.email, m.role])).toEqual([
      ["boss@example.com", "owner"],
      ["ada@example.com", "developer"],
    ]);
    const table = lines((await run(["members", "list", "--account", "acme"], dataDir)).stdout);
    expect(table[0]).toMatch(/^ID\s+EMAIL\s+ROLE\s+NAME\s+ADDED/);
    expect(table[2]).toContain("ada@example.com");

    const promoted = await run(
      ["members", "set-role", "ada@example.com", "--account", "acme", "--role", "admin"],
      dataDir,
    );
    expect(promoted).toMatchObject({ code: 0, stdout: "ada@example.com is now admin of account acme.\n" });

    const removed = await run(["members", "remove", ada.id, "--account", "acme"], dataDir);
    expect(removed).toMatchObject({ code: 0, stdout: "Removed ada@example.com from account acme.\n" });
    const store = await openTestStore(dataDir);
    expect(await store.getMember(ada.accountId, ada.id)).toBeNull();
  });

  test("refuses what cannot be done, in words that say why", async () => {
    const dataDir = await tempDataDir();
    await run(["accounts", "create", "acme"], dataDir);
    const owner = JSON.parse(
      (await run(["members", "list", "--account", "acme", "--json"], dataDir)).stdout,
    )[0] as MemberJson;
    expect(owner).toMatchObject({ email: null, name: "Owner", role: "owner" });

    const lastOwner = await run(["members", "remove", owner.id, "--account", "acme"], dataDir);
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toContain("last owner");
    const demote = await run(
      ["members", "set-role", owner.id, "--account", "acme", "--role", "viewer"],
      dataDir,
    );
    expect(demote.code).toBe(1);

    await run(
      ["members", "invite", "--account", "acme", "--email", "a@example.com", "--role", "viewer"],
      dataDir,
    );
    const twice = await run(
      ["members", "invite", "--account", "acme", "--email", "A@example.com", "--role", "viewer"],
      dataDir,
    );
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("already has a member with the email a@example.com");

    const badRole = await run(
      ["members", "invite", "--account", "acme", "--email", "b@example.com", "--role", "boss"],
      dataDir,
    );
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain("--role must be one of owner, admin, developer, viewer");
    const badEmail = await run(
      ["members", "invite", "--account", "acme", "--email", "b", "--role", "viewer"],
      dataDir,
    );
    expect(badEmail.code).toBe(2);
    const unknown = await run(["members", "remove", "nobody@example.com", "--account", "acme"], dataDir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("has no member 'nobody@example.com'");
  });

  test("a console link signs in as the member it names", async () => {
    const dataDir = await tempDataDir();
    await run(["accounts", "create", "acme"], dataDir);
    await run(
      ["members", "invite", "--account", "acme", "--email", "v@example.com", "--role", "viewer"],
      dataDir,
    );
    const link = await run(
      ["console", "link", "--account", "acme", "--member", "v@example.com", "--json"],
      dataDir,
    );
    expect(link.code).toBe(0);
    const { url } = JSON.parse(link.stdout) as { url: string };
    const token = url.slice(url.indexOf("#token=") + "#token=".length);
    const store = await openTestStore(dataDir);
    const { sha256Hex } = await import("@agentry/core");
    const redeemed = await store.redeemConsoleLink(sha256Hex(token), {
      sha256: "c".repeat(64),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      idleTimeoutMs: 60_000,
    });
    expect(redeemed?.member).toMatchObject({ email: "v@example.com", role: "viewer" });
    const missing = await run(["console", "link", "--account", "acme", "--member", "x@example.com"], dataDir);
    expect(missing.code).toBe(1);
  });
});
