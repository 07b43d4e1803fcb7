import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isId, SCOPES, timeOfId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { silentLogger } from "@agentry/logging";
import { runPgMigrations } from "@agentry/pg";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config.js";
import { buildRegistry, openRegistryStore } from "../src/index.js";
import { openPostgresRegistryStore, PostgresRegistryStore } from "../src/store/postgres.js";
import { migrationTarget, PG_MIGRATIONS } from "../src/store/postgres-migrations.js";
import { REGISTRY_DB_FILE } from "../src/store/sqlite.js";
import type { RegistryStore } from "../src/store/types.js";
import { agentFields, registryStoreContract } from "../src/testing/index.js";
import { expectQuotaAcross, expectQuotaAcrossProcesses, startContender } from "./fixtures/quota.js";
import { TEST_SECRETS_KEY } from "./harness.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
}, 60_000);
afterAll(() => db?.close());

// Each test gets an empty store of its own: a fresh schema, migrated from nothing, in this file's database.
let schemas = 0;
registryStoreContract("postgres", async () => {
  const store = await openPostgresRegistryStore({
    connectionString: db.url,
    schema: `registry_${++schemas}`,
  });
  return { store, cleanup: () => store.close() };
});

async function sql<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function closeAll(stores: RegistryStore[]): Promise<void> {
  await Promise.all(stores.map((store) => store.close()));
}

describe("choosing the store", () => {
  it("opens Postgres with a database URL, its tables in the registry schema, and writes no SQLite file", async () => {
    const url = await db.createDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-pg-"));
    try {
      const store = await openRegistryStore({ dataDir, databaseUrl: url });
      try {
        expect(store).toBeInstanceOf(PostgresRegistryStore);
        const account = await store.createAccount({ name: "acme", tier: "pro", limitOverrides: {} });
        const rows = await sql<{ id: string }>(url, "SELECT id FROM registry.accounts");
        expect(rows).toEqual([{ id: account.id }]);
      } finally {
        await store.close();
      }
      expect(existsSync(join(dataDir, REGISTRY_DB_FILE))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("keeps SQLite without a database URL", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-pg-"));
    try {
      const store = await openRegistryStore({ dataDir });
      await store.close();
      expect(store).not.toBeInstanceOf(PostgresRegistryStore);
      expect(existsSync(join(dataDir, REGISTRY_DB_FILE))).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a schema name that would need quoting", async () => {
    await expect(openPostgresRegistryStore({ connectionString: db.url, schema: 'x"; DROP' })).rejects.toThrow(
      /invalid schema name/,
    );
  });
});

describe("DATABASE_URL", () => {
  it("selects Postgres; empty means unset; anything but a postgres URL is refused without repeating it", () => {
    const url = "postgres://agentry:s3cret@db.internal:5432/agentry";
    expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    expect(loadConfig({ DATABASE_URL: "postgresql://db/agentry" }).DATABASE_URL).toBe(
      "postgresql://db/agentry",
    );
    expect(loadConfig({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
    expect(loadConfig({}).DATABASE_URL).toBeUndefined();
    for (const bad of ["mysql://u:s3cret@db/x", "s3cret"]) {
      expect(() => loadConfig({ DATABASE_URL: bad })).toThrow("DATABASE_URL: must be a postgres:// URL");
      expect(() => loadConfig({ DATABASE_URL: bad })).not.toThrow(/s3cret/);
    }
  });

  it("gives two registries one database: both serve the data and the deletion is relayed", async () => {
    const url = await db.createDatabase();
    const purged: string[] = [];
    const build = () =>
      buildRegistry({
        dataDir: "unused",
        databaseUrl: url,
        logger: silentLogger(),
        secretsKey: TEST_SECRETS_KEY,
        outboxIntervalMs: 20,
        purgeAgent: async (_accountId, agentId) => {
          purged.push(agentId);
        },
      });
    const [one, two] = await Promise.all([build(), build()]);
    try {
      expect(await one.ready()).toBe(true);
      const account = await one.store.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
      const agent = await one.store.createAgent(account.id, agentFields());
      expect(await two.store.getAgent(account.id, agent.id)).toEqual(agent);
      expect(await two.store.deleteAgent(account.id, agent.id)).toBe(true);
      await vi.waitFor(async () => expect(await one.store.unpublishedEvents("conversation", 10)).toEqual([]));
      // At least once: both relays may have delivered it.
      expect(new Set(purged)).toEqual(new Set([agent.id]));
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe("migrations", () => {
  it("applies one set of migrations when many instances open a fresh database at once", async () => {
    const url = await db.createDatabase();
    const stores = await Promise.all(
      Array.from({ length: 12 }, () => openRegistryStore({ dataDir: "unused", databaseUrl: url })),
    );
    try {
      const versions = await sql<{ version: number }>(
        url,
        "SELECT version FROM registry.schema_migrations ORDER BY version",
      );
      expect(versions.map((v) => v.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
      // Every instance works on the one schema.
      const account = await stores[0]!.createAccount({
        name: "shared",
        tier: "standard",
        limitOverrides: {},
      });
      for (const store of stores) expect(await store.getAccount(account.id)).toEqual(account);
    } finally {
      await closeAll(stores);
    }
  });

  it("applies only the migrations a schema lacks, each once", async () => {
    const url = await db.createDatabase();
    const pool = new pg.Pool({ connectionString: url });
    try {
      const next = {
        version: 1000,
        name: "probe",
        sql: (s: string) => `CREATE TABLE ${s}.probe (x integer)`,
      };
      await Promise.all([
        runPgMigrations(pool, migrationTarget("registry", [...PG_MIGRATIONS, next])),
        runPgMigrations(pool, migrationTarget("registry", [...PG_MIGRATIONS, next])),
      ]);
      await runPgMigrations(pool, migrationTarget("registry", [...PG_MIGRATIONS, next]));
      const rows = await pool.query(
        "SELECT count(*)::int AS n FROM registry.schema_migrations WHERE version = 1000",
      );
      expect(rows.rows[0]).toEqual({ n: 1 });
      expect((await pool.query("SELECT count(*)::int AS n FROM registry.probe")).rows[0]).toEqual({ n: 0 });
    } finally {
      await pool.end();
    }
  });

  it("turns keys holding exactly the five scopes of version 1 into full-access keys, and only those", async () => {
    const url = await db.createDatabase();
    const pool = new pg.Pool({ connectionString: url });
    const keys: [string, string[]][] = [
      ["all", ["agents:read", "agents:write", "agents:delete", "messages:send", "keys:manage"]],
      ["all-reordered", ["keys:manage", "messages:send", "agents:delete", "agents:write", "agents:read"]],
      ["four", ["agents:read", "agents:write", "agents:delete", "messages:send"]],
      ["one", ["agents:read"]],
      ["four-twice", ["agents:read", "agents:write", "agents:delete", "messages:send", "agents:read"]],
    ];
    try {
      await runPgMigrations(pool, migrationTarget("registry", PG_MIGRATIONS.slice(0, 1)));
      await pool.query(
        "INSERT INTO registry.accounts (id, name, tier, limit_overrides, created_at) VALUES ('acct_A', 'acme', 'standard', '{}', now())",
      );
      for (const [name, scopes] of keys) {
        await pool.query(
          `INSERT INTO registry.api_keys (id, account_id, name, sha256, prefix, scopes, created_at)
           VALUES ($1, 'acct_A', $2, $3, 'agentry_sk_abcdef', $4, now())`,
          [`key_${name}`, name, `sha-${name}`, JSON.stringify(scopes)],
        );
      }
    } finally {
      await pool.end();
    }
    const store = await openRegistryStore({ dataDir: "unused", databaseUrl: url });
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
  });

  it("gives unrelayed outbox events ids, starts webhooks where the purges are, and drops copies of secrets", async () => {
    const url = await db.createDatabase();
    const pool = new pg.Pool({ connectionString: url });
    const agent = (id: string) => JSON.stringify({ agent: { id, settings: { secrets: { KEY: "sk-old" } } } });
    try {
      await runPgMigrations(pool, migrationTarget("registry", PG_MIGRATIONS.slice(0, 2)));
      const insert = `INSERT INTO registry.outbox (type, account_id, agent_id, payload, created_at, published_at)
        VALUES ($1, 'acct_A', $2, $3, $4, $5)`;
      await pool.query(insert, [
        "agent.created",
        "agt_1",
        agent("agt_1"),
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:01.000Z",
      ]);
      await pool.query(insert, ["agent.created", "agt_2", agent("agt_2"), "2026-01-02T00:00:00.000Z", null]);
    } finally {
      await pool.end();
    }
    const store = await openRegistryStore({ dataDir: "unused", databaseUrl: url });
    try {
      const [event, ...rest] = await store.unpublishedEvents("webhooks", 10);
      expect(rest).toEqual([]);
      expect(event).toMatchObject({ agentId: "agt_2", payload: { agent: { id: "agt_2", settings: {} } } });
      expect(isId("event", event!.id)).toBe(true);
      expect(timeOfId(event!.id)).toBe(Date.parse("2026-01-02T00:00:00.000Z"));
      expect(await store.unpublishedEvents("conversation", 10)).toEqual([event]);

      // Rows an older version writes during a rolling upgrade get their ids when first read; two readers at
      // once agree on them.
      await sql(
        url,
        `INSERT INTO registry.outbox (type, account_id, agent_id, payload, created_at)
         SELECT 'agent.deleted', 'acct_A', 'agt_' || n, '{}', now() FROM generate_series(1, 20) AS n`,
      );
      const other = await openRegistryStore({ dataDir: "unused", databaseUrl: url });
      try {
        const [mine, theirs] = await Promise.all([
          store.unpublishedEvents("webhooks", 100),
          other.unpublishedEvents("conversation", 100),
        ]);
        expect(mine).toHaveLength(21);
        expect(theirs.map((e) => e.id)).toEqual(mine.map((e) => e.id));
        expect((await store.unpublishedEvents("webhooks", 100)).map((e) => e.id)).toEqual(
          mine.map((e) => e.id),
        );
      } finally {
        await other.close();
      }
      expect(JSON.stringify(await sql(url, "SELECT payload FROM registry.outbox"))).not.toContain("sk-old");
    } finally {
      await store.close();
    }
  });

  it("refuses a database whose schema is newer than this build, and leaves it untouched", async () => {
    const url = await db.createDatabase();
    await (await openRegistryStore({ dataDir: "unused", databaseUrl: url })).close();
    await sql(
      url,
      "INSERT INTO registry.schema_migrations (version, name, applied_at) VALUES (999, 'future', now())",
    );
    await expect(openRegistryStore({ dataDir: "unused", databaseUrl: url })).rejects.toThrow(
      /schema version 999/,
    );
    expect(await sql(url, "SELECT version FROM registry.schema_migrations WHERE version = 999")).toHaveLength(
      1,
    );
  });

  it("uses a schema an operator created for it without needing the right to create schemas", async () => {
    const url = await db.createDatabase();
    const database = new URL(url).pathname.slice(1);
    const role = `agentry_app_${database.slice(-12)}`;
    await sql(url, `CREATE ROLE ${role} LOGIN PASSWORD 'app'`);
    try {
      // Lets a tests' role that is not a superuser hand the schema to the app's role.
      await sql(url, `GRANT ${role} TO CURRENT_USER`);
      await sql(url, `REVOKE CREATE ON DATABASE ${database} FROM PUBLIC`);
      await sql(url, `CREATE SCHEMA registry AUTHORIZATION ${role}`);
      const asApp = new URL(url);
      asApp.username = role;
      asApp.password = "app";
      const store = await openRegistryStore({ dataDir: "unused", databaseUrl: asApp.toString() });
      try {
        await expect(
          store.createAccount({ name: "least privilege", tier: "standard", limitOverrides: {} }),
        ).resolves.toMatchObject({ name: "least privilege" });
      } finally {
        await store.close();
      }
    } finally {
      await sql(url, `DROP SCHEMA IF EXISTS registry CASCADE`);
      await sql(url, `DROP ROLE ${role}`);
    }
  });
});

describe("quota across connections and processes", () => {
  it("creates exactly maxAgents of 130 simultaneous creates from two pools", async () => {
    const url = await db.createDatabase();
    const a = await openRegistryStore({ dataDir: "unused", databaseUrl: url });
    const b = await openRegistryStore({ dataDir: "unused", databaseUrl: url });
    try {
      await expectQuotaAcross(a, b);
    } finally {
      await closeAll([a, b]);
    }
  });

  // A longer timeout: each contender is a fresh Node process compiling TypeScript, slow on a busy machine.
  it("creates exactly maxAgents when two processes, which also race to migrate, create at the same time", async () => {
    const url = await db.createDatabase();
    // Both contenders open the fresh database (and race to migrate it) before the account exists.
    const contenders = [startContender(url, 65), startContender(url, 65)];
    try {
      await Promise.all(contenders.map((c) => c.ready));
      const setup = await openRegistryStore({ dataDir: "unused", databaseUrl: url });
      const account = await setup.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
      await setup.close();
      await expectQuotaAcrossProcesses(contenders, account.id);
      const rows = await sql<{ n: number }>(
        url,
        "SELECT count(*)::int AS n FROM registry.agents WHERE account_id = $1",
        [account.id],
      );
      expect(rows[0]!.n).toBe(100);
      expect(await sql(url, "SELECT version FROM registry.schema_migrations")).toHaveLength(
        PG_MIGRATIONS.length,
      );
    } finally {
      for (const c of contenders) c.child.kill();
    }
  }, 120_000);
});

describe("values Postgres cannot hold", () => {
  it("refuses U+0000 in text and in JSON with INVALID_REQUEST, storing nothing", async () => {
    const store = await openPostgresRegistryStore({ connectionString: db.url, schema: "nul_chars" });
    try {
      const account = await store.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
      for (const bad of [{ name: "a\u0000b" }, { bio: ["x\u0000"] }, { personality: { "k\u0000": 1 } }]) {
        const error = await store.createAgent(account.id, agentFields(bad)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe("INVALID_REQUEST");
      }
      expect(
        (await store.listAgents(account.id, { page: 1, limit: 10, sortBy: "name", order: "asc" })).total,
      ).toBe(0);
      expect(await store.unpublishedEvents("webhooks", 10)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe("losing the database", () => {
  it("answers AGENT_UNAVAILABLE while the database is unreachable, reports dropped connections, and recovers", async () => {
    const proxy = await startProxy(db.url);
    const availability = { failed: vi.fn(), recovered: vi.fn() };
    const store = await openPostgresRegistryStore({
      connectionString: proxy.url,
      schema: "outage",
      availability,
    });
    try {
      const account = await store.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
      await proxy.cut();
      await vi.waitFor(() => expect(availability.failed).toHaveBeenCalled());
      for (const call of [
        () => store.getAccount(account.id),
        () => store.createAgent(account.id, agentFields()),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe("AGENT_UNAVAILABLE");
        expect((error as AppError).message).not.toContain(proxy.url);
      }
      await proxy.restore();
      availability.recovered.mockClear();
      await expect(store.createAgent(account.id, agentFields())).resolves.toMatchObject({
        accountId: account.id,
      });
      expect(availability.recovered).toHaveBeenCalled();
      expect(await store.getAccount(account.id)).toEqual(account);
    } finally {
      await store.close();
      await proxy.close();
    }
  });

  it("waits to open while nothing answers, and opens once the database does", async () => {
    const proxy = await startProxy(db.url);
    await proxy.cut();
    const availability = { failed: vi.fn(), recovered: vi.fn() };
    try {
      let opened = false;
      const opening = openPostgresRegistryStore({
        connectionString: proxy.url,
        schema: "late",
        availability,
      }).then((store) => {
        opened = true;
        return store;
      });
      await vi.waitFor(() => expect(availability.failed.mock.calls.length).toBeGreaterThan(1));
      expect(opened).toBe(false);
      await proxy.restore();
      const store = await opening;
      try {
        expect(availability.recovered).toHaveBeenCalled();
        await expect(store.listAccounts()).resolves.toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      await proxy.close();
    }
  });
});

/**
 * A TCP relay in front of the test server that can drop every connection and refuse new ones (`cut`), then
 * accept again on the same port (`restore`): the database going away and coming back, as the store sees it.
 */
async function startProxy(target: string): Promise<{
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const relay = (client: Socket) => {
    const server = tcpConnect(Number(upstream.port || 5432), upstream.hostname);
    track(client);
    track(server);
    client.pipe(server).pipe(client);
    client.on("close", () => server.destroy());
    server.on("close", () => client.destroy());
  };
  let server: Server = createServer(relay);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  const stop = async () => {
    if (!server.listening) return;
    const closed = once(server, "close");
    server.close();
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    url: url.toString(),
    cut: stop,
    async restore() {
      server = createServer(relay);
      server.listen(port, "127.0.0.1");
      await once(server, "listening");
    },
    close: stop,
  };
}
