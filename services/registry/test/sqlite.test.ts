import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { AppError } from "@agentry/errors";
import { sqliteSchemaVersion } from "@agentry/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openRegistryStore } from "../src/index.js";
import { REGISTRY_DB_FILE } from "../src/store/sqlite.js";
import { MIGRATIONS } from "../src/store/sqlite-migrations.js";
import type { AgentFields } from "../src/store/types.js";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const CONTENDER = fileURLToPath(new URL("./fixtures/create-agents.ts", import.meta.url));

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-sqlite-"));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const fields: AgentFields = {
  name: "agent",
  bio: [],
  personality: {},
  knowledge: [],
  goals: [],
  clients: [],
  settings: {},
  modelProvider: null,
  model: null,
  plugins: [],
};

describe("SQLite registry file", () => {
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
      const account = await a.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
      const results = await Promise.allSettled(
        Array.from({ length: 130 }, (_, i) => (i % 2 === 0 ? a : b).createAgent(account.id, fields)),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(100);
      const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
      expect(refused).toHaveLength(30);
      for (const reason of refused) {
        expect(reason).toBeInstanceOf(AppError);
        expect((reason as AppError).code).toBe("INSUFFICIENT_QUOTA");
      }
      expect(
        (await b.listAgents(account.id, { page: 1, limit: 1, sortBy: "name", order: "asc" })).total,
      ).toBe(100);
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
      const agent = await a.createAgent(account.id, fields);
      expect((await a.getAgent(account.id, agent.id))?.name).toBe("agent");
      expect((await b.getAgent(account.id, agent.id))?.name).toBe("agent");
      await b.updateAgent(account.id, agent.id, { name: "renamed by b" });
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
      // Each read is a record of its own: changing one changes nothing the store returns later.
      const again = await a.createAgent(account.id, fields);
      const read = await a.getAgent(account.id, again.id);
      read!.bio.push("changed by the caller");
      expect((await a.getAgent(account.id, again.id))?.bio).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("keeps the quota with two processes creating agents on one file at the same time", async () => {
    const setup = await openRegistryStore({ dataDir });
    const account = await setup.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
    await setup.close();

    // Both contenders open the file (and race to migrate it) before either starts creating.
    const contenders = [startContender(account.id, 65), startContender(account.id, 65)];
    try {
      await Promise.all(contenders.map((c) => c.ready));
      for (const c of contenders) c.child.stdin.write("go\n");
      const outcomes = await Promise.all(contenders.map((c) => c.outcome));

      expect(outcomes.flatMap((o) => o.other)).toEqual([]);
      expect(outcomes.reduce((n, o) => n + o.created, 0)).toBe(100);
      expect(outcomes.reduce((n, o) => n + o.quota, 0)).toBe(30);
      // Both really took part, so the two connections did contend for the lock.
      for (const o of outcomes) expect(o.created).toBeGreaterThan(0);
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
      expect((await check.unpublishedEvents(1000)).filter((e) => e.type === "agent.created")).toHaveLength(
        100,
      );
    } finally {
      await check.close();
    }
  });
});

interface Outcome {
  created: number;
  quota: number;
  other: string[];
}

function startContender(
  accountId: string,
  count: number,
): { child: ChildProcessWithoutNullStreams; ready: Promise<void>; outcome: Promise<Outcome> } {
  const child = spawn(process.execPath, ["--import", "tsx", CONTENDER, dataDir, accountId, String(count)], {
    cwd: PACKAGE_DIR,
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const lines = createInterface({ input: child.stdout });
  const received: string[] = [];
  let onLine: (() => void) | undefined;
  lines.on("line", (line) => {
    received.push(line);
    onLine?.();
  });
  const nthLine = (n: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (received.length > n) resolve(received[n]!);
      };
      onLine = check;
      check();
      once(child, "exit").then(([code]) => {
        if (received.length <= n) reject(new Error(`contender exited with ${code}: ${stderr}`));
      });
    });
  const ready = nthLine(0).then((line) => {
    if (line !== "ready") throw new Error(`unexpected output from contender: ${line}`);
  });
  const outcome = ready.then(() => nthLine(1)).then((line) => JSON.parse(line) as Outcome);
  return { child, ready, outcome };
}
