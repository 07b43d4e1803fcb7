import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@agentry/logging";
import { afterEach, describe, expect, it } from "vitest";
import { buildRegistry } from "../src/registry.js";
import { agentFields } from "../src/testing/index.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function seeded(dataDir: string, purgeAgent?: (accountId: string, agentId: string) => Promise<void>) {
  const registry = await buildRegistry({
    dataDir,
    logger: silentLogger(),
    outboxIntervalMs: 20,
    ...(purgeAgent ? { purgeAgent } : {}),
  });
  const account =
    (await registry.store.getAccountByName("a")) ??
    (await registry.store.createAccount({ name: "a", tier: "standard", limitOverrides: {} }));
  return { registry, account };
}

describe("outbox relay", () => {
  it("purges a deleted agent once, right after the delete", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentry-relay-"));
    dirs.push(dataDir);
    const purged: string[] = [];
    const { registry, account } = await seeded(dataDir, async (_accountId, agentId) => {
      purged.push(agentId);
    });
    const agent = await registry.store.createAgent(account.id, agentFields({ name: "x" }));
    await registry.store.deleteAgent(account.id, agent.id);
    registry.relay.kick();
    await registry.relay.settle();
    expect(purged).toEqual([agent.id]);
    registry.relay.kick();
    await registry.relay.settle();
    expect(purged).toEqual([agent.id]);
    await registry.close();
  });

  it("retries a failed purge until it succeeds", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentry-relay-"));
    dirs.push(dataDir);
    let attempts = 0;
    const { registry, account } = await seeded(dataDir, async () => {
      attempts += 1;
      if (attempts < 3) throw new Error("conversation service down");
    });
    const agent = await registry.store.createAgent(account.id, agentFields({ name: "x" }));
    await registry.store.deleteAgent(account.id, agent.id);
    for (let i = 0; i < 100 && attempts < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await registry.relay.settle();
    expect(attempts).toBe(3);
    expect(await registry.store.unpublishedEvents(10)).toEqual([]);
    await registry.close();
  });

  it("delivers at start what a registry that stopped before the purge left behind", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentry-relay-"));
    dirs.push(dataDir);
    const first = await seeded(dataDir);
    const agent = await first.registry.store.createAgent(first.account.id, agentFields({ name: "x" }));
    await first.registry.store.deleteAgent(first.account.id, agent.id);
    await first.registry.close();

    const purged: string[] = [];
    const second = await seeded(dataDir, async (_accountId, agentId) => {
      purged.push(agentId);
    });
    await second.registry.relay.settle();
    expect(purged).toEqual([agent.id]);
    await second.registry.close();
  });
});
