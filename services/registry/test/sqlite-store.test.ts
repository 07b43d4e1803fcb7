import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isId, SCOPES, timeOfId } from "@agentry/core";
import { runSqliteMigrations, sqliteSchemaVersion } from "@agentry/sqlite";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openRegistryStore } from "../src/index.js";
import { REGISTRY_DB_FILE } from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";
import { agentFields, registryStoreContract } from "../src/testing/index.js";
import { expectQuotaAcross, expectQuotaAcrossProcesses, startContender } from "./fixtures/quota.js";

registryStoreContract("sqlite", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-"));
  const store = await openRegistryStore({ dataDir });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describe("SQLite registry file", () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-sqlite-"));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("creates the data directory, applies the migrations once and keeps the data when reopened", async () => {
    const nested = join(dataDir, "a", "b");
    const first = await openRegistryStore({ dataDir: nested });
    const account = await first.createAccount({ name: "acme", tier: "pro", limitOverrides: {} });
    await first.close();

    const second = await openRegistryStore({ dataDir: nested });
    expect(await second.getAccountByName("acme")).toEqual(account);
    await second.close();
    expect(sqliteSchemaVersion(join(nested, REGISTRY_DB_FILE))).toBe(
      Math.max(...MIGRATIONS.map((m) => m.version)),
    );
  });

  it("keeps the quota with two store instances on one file in one process", async () => {
    const a = await openRegistryStore({ dataDir });
    const b = await openRegistryStore({ dataDir });
    try {
      await expectQuotaAcross(a, b);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("reads an agent as stored, whichever store instance on the file changed it last", async () => {
    const a = await openRegistryStore({ dataDir });
    const b = await openRegistryStore({ dataDir });
    try {
      const account = await a.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
      const agent = await a.createAgent(account.id, agentFields());
      expect((await a.getAgent(account.id, agent.id))?.name).toBe("agent");
      expect((await b.getAgent(account.id, agent.id))?.name).toBe("agent");
      const firstPage = { page: 1, limit: 10, sortBy: "createdAt", order: "desc" } as const;
      expect((await a.listAgents(account.id, firstPage)).items.map((item) => item.name)).toEqual(["agent"]);
      await b.updateAgent(account.id, agent.id, { name: "renamed by b" });
      // A page whose agents a holds is still read afresh once b has committed, total included.
      const second = await b.createAgent(account.id, agentFields({ name: "second, by b" }));
      expect(await a.listAgents(account.id, firstPage)).toEqual({
        items: [second, await b.getAgent(account.id, agent.id)],
        total: 2,
      });
      await b.deleteAgent(account.id, second.id);
      expect((await a.listAgents(account.id, firstPage)).total).toBe(1);
      expect((await a.getAgent(account.id, agent.id))?.name).toBe("renamed by b");
      await a.updateAgent(account.id, agent.id, { name: "renamed by a" });
      expect((await a.getAgent(account.id, agent.id))?.name).toBe("renamed by a");
      expect((await b.getAgent(account.id, agent.id))?.name).toBe("renamed by a");
      await a.reportAgentHealth(account.id, agent.id, {
        code: "MODEL_ERROR",
        message: "down",
        at: "2026-01-01T00:00:00.000Z",
      });
      expect((await a.getAgent(account.id, agent.id))?.status).toBe("error");
      expect((await b.getAgent(account.id, agent.id))?.status).toBe("error");
      // Another account never reads it, cached or not.
      expect(await a.getAgent("acct_other", agent.id)).toBeNull();
      await b.deleteAgent(account.id, agent.id);
      expect(await a.getAgent(account.id, agent.id)).toBeNull();
      // Reads share the kept record, so it is read-only: a caller that tries to change it fails, and what the
      // store returns later is unchanged.
      const again = await a.createAgent(account.id, agentFields());
      const read = await a.getAgent(account.id, again.id);
      expect(() => read!.bio.push("changed by the caller")).toThrow(TypeError);
      expect(() => {
        (read!.personality as Record<string, unknown>).tone = "changed";
      }).toThrow(TypeError);
      const [listed] = (
        await a.listAgents(account.id, { page: 1, limit: 1, sortBy: "createdAt", order: "desc" })
      ).items;
      expect(listed).toBe(read);
      expect((await a.getAgent(account.id, again.id))?.bio).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("lists a page afresh after each write of an agent by the same store, a page listed before included", async () => {
    const store = await openRegistryStore({ dataDir });
    try {
      const account = await store.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
      const newest = { page: 1, limit: 2, sortBy: "createdAt", order: "desc" } as const;
      const erring = { ...newest, status: "error" } as const;
      const names = async (query: typeof newest | typeof erring) => {
        const page = await store.listAgents(account.id, query);
        return { names: page.items.map((agent) => agent.name), total: page.total };
      };
      const first = await store.createAgent(account.id, agentFields({ name: "first" }));
      expect(await names(newest)).toEqual({ names: ["first"], total: 1 });
      expect(await names(erring)).toEqual({ names: [], total: 0 });
      expect(await names(newest)).toEqual({ names: ["first"], total: 1 });
      const second = await store.createAgent(account.id, agentFields({ name: "second" }));
      expect(await names(newest)).toEqual({ names: ["second", "first"], total: 2 });
      await store.updateAgent(account.id, first.id, { name: "first, renamed" });
      expect(await names(newest)).toEqual({ names: ["second", "first, renamed"], total: 2 });
      await store.reportAgentHealth(account.id, second.id, {
        code: "MODEL_ERROR",
        message: "down",
        at: "2026-01-01T00:00:00.000Z",
      });
      expect(await names(erring)).toEqual({ names: ["second"], total: 1 });
      await store.createAgentUnderKey(account.id, agentFields({ name: "third" }), {
        keyHash: "a".repeat(64),
        fingerprint: "b".repeat(64),
      });
      expect(await names(newest)).toEqual({ names: ["third", "second"], total: 3 });
      await store.deleteAgent(account.id, second.id);
      expect(await names(newest)).toEqual({ names: ["third", "first, renamed"], total: 2 });
      expect(await names(erring)).toEqual({ names: [], total: 0 });
    } finally {
      await store.close();
    }
  });

  it("keeps the quota with two processes creating agents on one file at the same time", async () => {
    const setup = await openRegistryStore({ dataDir });
    const account = await setup.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
    await setup.close();

    // Both contenders open the file (and race to migrate it) before either starts creating.
    const contenders = [startContender(dataDir, 65), startContender(dataDir, 65)];
    try {
      await Promise.all(contenders.map((c) => c.ready));
      await expectQuotaAcrossProcesses(contenders, account.id);
    } finally {
      for (const c of contenders) c.child.kill();
    }

    const check = await openRegistryStore({ dataDir });
    try {
      const list = await check.listAgents(account.id, {
        page: 1,
        limit: 100,
        sortBy: "createdAt",
        order: "asc",
      });
      expect(list.total).toBe(100);
      expect(
        (await check.unpublishedEvents("webhooks", 1000)).filter((e) => e.type === "agent.created"),
      ).toHaveLength(100);
    } finally {
      await check.close();
    }
  });
});

describe("SQLite registry schema version 2", () => {
  it("gives every account that existed before members an owner, for whom its sessions then act", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-v8-"));
    try {
      const v8 = new Database(join(dataDir, REGISTRY_DB_FILE));
      runSqliteMigrations(v8, { service: "registry", migrations: MIGRATIONS.slice(0, 8) });
      const at = "2026-01-01T00:00:00.000Z";
      v8.prepare(
        "INSERT INTO accounts (id, name, tier, limit_overrides, created_at) VALUES ('acct_A', 'acme', 'standard', '{}', ?)",
      ).run(at);
      v8.prepare(
        `INSERT INTO console_sessions (sha256, id, account_id, created_at, expires_at, idle_timeout_ms, last_seen_at)
         VALUES (?, 'ses_A', 'acct_A', ?, '2999-01-01T00:00:00.000Z', 86400000000, ?)`,
      ).run("5".repeat(64), at, new Date().toISOString());
      v8.close();

      const store = await openRegistryStore({ dataDir });
      try {
        const { items } = await store.listMembers("acct_A", { limit: 10, order: "asc" });
        expect(items).toEqual([
          {
            id: expect.any(String),
            accountId: "acct_A",
            email: null,
            name: "Owner",
            role: "owner",
            createdAt: at,
          },
        ]);
        expect(isId("member", items[0]!.id)).toBe(true);
        expect(timeOfId(items[0]!.id)).toBe(Date.parse(at));
        expect((await store.useConsoleSession("5".repeat(64)))?.member).toEqual(items[0]);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("turns keys holding exactly the five scopes of version 1 into full-access keys, and only those", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-v1-"));
    try {
      const v1 = new Database(join(dataDir, REGISTRY_DB_FILE));
      runSqliteMigrations(v1, { service: "registry", migrations: MIGRATIONS.slice(0, 1) });
      const at = "2026-01-01T00:00:00.000Z";
      v1.prepare(
        "INSERT INTO accounts (id, name, tier, limit_overrides, created_at) VALUES ('acct_A', 'acme', 'standard', '{}', ?)",
      ).run(at);
      const insert = v1.prepare(
        `INSERT INTO api_keys (id, account_id, name, sha256, prefix, scopes, created_at)
         VALUES (?, 'acct_A', ?, ?, 'agentry_sk_abcdef', ?, ?)`,
      );
      const keys: [string, string[]][] = [
        ["all", ["agents:read", "agents:write", "agents:delete", "messages:send", "keys:manage"]],
        ["all-reordered", ["keys:manage", "messages:send", "agents:delete", "agents:write", "agents:read"]],
        ["four", ["agents:read", "agents:write", "agents:delete", "messages:send"]],
        ["one", ["agents:read"]],
        ["four-twice", ["agents:read", "agents:write", "agents:delete", "messages:send", "agents:read"]],
      ];
      for (const [name, scopes] of keys) {
        insert.run(`key_${name}`, name, `sha-${name}`, JSON.stringify(scopes), at);
      }
      v1.close();

      const store = await openRegistryStore({ dataDir });
      try {
        const byName = new Map((await store.listApiKeys("acct_A")).map((key) => [key.name, key]));
        expect(byName.get("all")).toMatchObject({ fullAccess: true, scopes: [...SCOPES] });
        expect(byName.get("all-reordered")).toMatchObject({ fullAccess: true, scopes: [...SCOPES] });
        expect(byName.get("four")).toMatchObject({ fullAccess: false, scopes: keys[2]![1] });
        expect(byName.get("one")).toMatchObject({ fullAccess: false, scopes: ["agents:read"] });
        expect(byName.get("four-twice")).toMatchObject({ fullAccess: false, scopes: keys[2]![1] });
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("SQLite registry schema version 5", () => {
  it("counts the agents already there, by account and status", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-v4-"));
    try {
      const v4 = new Database(join(dataDir, REGISTRY_DB_FILE));
      runSqliteMigrations(v4, { service: "registry", migrations: MIGRATIONS.slice(0, 4) });
      const at = "2026-01-01T00:00:00.000Z";
      const account = v4.prepare(
        "INSERT INTO accounts (id, name, tier, limit_overrides, created_at) VALUES (?, ?, 'standard', '{}', ?)",
      );
      account.run("acct_A", "a", at);
      account.run("acct_B", "b", at);
      const agent = v4.prepare(
        `INSERT INTO agents (id, account_id, name, bio, personality, knowledge, goals, clients, settings, plugins,
           status, created_at, updated_at)
         VALUES (?, ?, 'x', '[]', '{}', '[]', '[]', '[]', '{}', '[]', ?, ?, ?)`,
      );
      const rows: [string, string][] = [
        ["acct_A", "active"],
        ["acct_A", "active"],
        ["acct_A", "inactive"],
        ["acct_B", "error"],
      ];
      for (const [i, [owner, status]] of rows.entries()) agent.run(`agt_${i}`, owner, status, at, at);
      v4.close();

      const store = await openRegistryStore({ dataDir });
      try {
        const total = async (accountId: string, status?: "active" | "inactive" | "error") =>
          (
            await store.listAgents(accountId, {
              page: 1,
              limit: 1,
              sortBy: "createdAt",
              order: "desc",
              ...(status ? { status } : {}),
            })
          ).total;
        expect([
          await total("acct_A"),
          await total("acct_A", "active"),
          await total("acct_A", "inactive"),
        ]).toEqual([3, 2, 1]);
        expect([await total("acct_B"), await total("acct_B", "error")]).toEqual([1, 1]);
        await store.deleteAgent("acct_A", "agt_0");
        expect(await total("acct_A", "active")).toBe(1);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("SQLite registry schema version 3", () => {
  it("gives unrelayed outbox events ids, starts webhooks where the purges are, and drops copies of secrets", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-v2-"));
    try {
      const v2 = new Database(join(dataDir, REGISTRY_DB_FILE));
      runSqliteMigrations(v2, { service: "registry", migrations: MIGRATIONS.slice(0, 2) });
      const insert = v2.prepare(
        `INSERT INTO outbox (type, account_id, agent_id, payload, created_at, published_at)
         VALUES (?, 'acct_A', ?, ?, ?, ?)`,
      );
      const agent = (id: string) =>
        JSON.stringify({ agent: { id, settings: { secrets: { KEY: "sk-old" } } } });
      insert.run(
        "agent.created",
        "agt_1",
        agent("agt_1"),
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:01.000Z",
      );
      insert.run("agent.created", "agt_2", agent("agt_2"), "2026-01-02T00:00:00.000Z", null);
      insert.run(
        "agent.status_changed",
        "agt_2",
        JSON.stringify({
          accountId: "acct_A",
          agentId: "agt_2",
          from: "active",
          to: "error",
          statusReason: null,
        }),
        "2026-01-03T00:00:00.000Z",
        null,
      );
      v2.close();

      const store = await openRegistryStore({ dataDir });
      try {
        const webhooks = await store.unpublishedEvents("webhooks", 10);
        expect(webhooks.map((e) => e.agentId)).toEqual(["agt_2", "agt_2"]);
        for (const event of webhooks) {
          expect(isId("event", event.id)).toBe(true);
          expect(timeOfId(event.id)).toBe(Date.parse(event.createdAt));
        }
        expect(await store.unpublishedEvents("conversation", 10)).toEqual(webhooks);
        expect(webhooks[0]!.payload).toEqual({ agent: { id: "agt_2", settings: {} } });

        // A row an older version writes during a rolling upgrade gets its id when first read, for good.
        const raw = new Database(join(dataDir, REGISTRY_DB_FILE));
        raw
          .prepare(
            `INSERT INTO outbox (type, account_id, agent_id, payload, created_at)
             VALUES ('agent.deleted', 'acct_A', 'agt_2', '{"accountId":"acct_A","agentId":"agt_2"}', ?)`,
          )
          .run("2026-01-04T00:00:00.000Z");
        const late = (await store.unpublishedEvents("webhooks", 10)).at(-1)!;
        expect(late.type).toBe("agent.deleted");
        expect(isId("event", late.id)).toBe(true);
        expect((await store.unpublishedEvents("conversation", 10)).at(-1)!.id).toBe(late.id);
        expect(JSON.stringify(raw.prepare("SELECT payload FROM outbox").all())).not.toContain("sk-old");
        raw.close();
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
