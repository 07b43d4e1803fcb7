import { afterAll, describe, expect, test } from "vitest";
import { cleanUp, lines, run, tempDataDir } from "./harness.js";

afterAll(cleanUp);

interface EventJson {
  action: string;
  actor: { type: string; id: string | null };
  target: { type: string; id: string };
}

describe("audit", () => {
  test("the CLI's changes are on the audit log as the CLI's, newest first", async () => {
    const dataDir = await tempDataDir();
    expect((await run(["accounts", "create", "acme", "--json"], dataDir)).code).toBe(0);
    const invited = await run(
      ["members", "invite", "--account", "acme", "--email", "ada@example.com", "--role", "viewer", "--json"],
      dataDir,
    );
    const ada = JSON.parse(invited.stdout) as { id: string };
    expect((await run(["keys", "create", "--account", "acme", "--name", "ci"], dataDir)).code).toBe(0);

    const listed = await run(["audit", "--account", "acme", "--json"], dataDir);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    const events = JSON.parse(listed.stdout) as EventJson[];
    expect(events.map((e) => e.action)).toEqual(["key.create", "member.invite", "account.create"]);
    expect(events.every((e) => e.actor.type === "cli" && e.actor.id === null)).toBe(true);
    expect(events[1]!.target).toEqual({ type: "member", id: ada.id });

    const filtered = await run(
      ["audit", "--account", "acme", "--action", "member.invite", "--json"],
      dataDir,
    );
    expect((JSON.parse(filtered.stdout) as EventJson[]).map((e) => e.action)).toEqual(["member.invite"]);
    const table = lines((await run(["audit", "--account", "acme", "--limit", "1"], dataDir)).stdout);
    expect(table[0]).toMatch(/^AT\s+ACTOR\s+ACTION\s+TARGET\s+IP/);
    expect(table).toHaveLength(2);
    expect(table[1]).toContain("key.create");

    const bad = await run(["audit", "--account", "acme", "--limit", "0"], dataDir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--limit must be an integer from 1 to 100");
  });
});
