import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isId, newId } from "@agentry/core";
import type { PublicEvent } from "@agentry/events";
import { silentLogger } from "@agentry/logging";
import type { PublishEvents } from "@agentry/outbox";
import { afterEach, describe, expect, it, vi } from "vitest";
import { webhookEvent, webhooksConsumer } from "../src/outbox/webhooks.js";
import { buildRegistry } from "../src/registry.js";
import type { JsonObject, OutboxEvent } from "../src/store/types.js";
import { agentFields } from "../src/testing/index.js";
import { TEST_SECRETS_KEY } from "./harness.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function seeded(dataDir: string, purgeAgent?: (accountId: string, agentId: string) => Promise<void>) {
  const registry = await buildRegistry({
    dataDir,
    logger: silentLogger(),
    secretsKey: TEST_SECRETS_KEY,
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
    registry.relays.conversation.kick();
    await registry.relays.conversation.settle();
    expect(purged).toEqual([agent.id]);
    registry.relays.conversation.kick();
    await registry.relays.conversation.settle();
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
    await registry.relays.conversation.settle();
    expect(attempts).toBe(3);
    expect(await registry.store.unpublishedEvents("conversation", 10)).toEqual([]);
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
    await second.registry.relays.conversation.settle();
    expect(purged).toEqual([agent.id]);
    await second.registry.close();
  });
});

describe("webhooks relay", () => {
  const BASE = "https://api.example.test";

  async function withWebhooks(
    dataDir: string,
    publish: PublishEvents | undefined,
    purge: (accountId: string, agentId: string) => Promise<void> = async () => {},
  ) {
    const registry = await buildRegistry({
      dataDir,
      logger: silentLogger(),
      secretsKey: TEST_SECRETS_KEY,
      outboxIntervalMs: 20,
      purgeAgent: purge,
      ...(publish ? { webhooks: { publish, publicBaseUrl: BASE } } : {}),
    });
    const account =
      (await registry.store.getAccountByName("a")) ??
      (await registry.store.createAccount({ name: "a", tier: "standard", limitOverrides: {} }));
    return { registry, account };
  }

  async function tempDir() {
    const dataDir = await mkdtemp(join(tmpdir(), "agentry-relay-"));
    dirs.push(dataDir);
    return dataDir;
  }

  it("publishes every agent event once, as receivers see it: the API's agent without secrets, {id} when deleted", async () => {
    const published: PublicEvent[] = [];
    const { registry, account } = await withWebhooks(await tempDir(), async (events) => {
      published.push(...events);
    });
    const agent = await registry.store.createAgent(
      account.id,
      agentFields({ name: "Ada", settings: { temperature: 1, secrets: { OPENAI_API_KEY: "sk-live" } } }),
    );
    await registry.store.updateAgent(account.id, agent.id, { name: "Ada L." });
    await registry.store.updateAgent(account.id, agent.id, { status: "inactive" });
    await registry.store.deleteAgent(account.id, agent.id);
    registry.relays.webhooks.kick();
    await vi.waitFor(() => expect(published).toHaveLength(5));
    await registry.relays.webhooks.settle();

    expect(published.map((e) => e.type)).toEqual([
      "agent.created",
      "agent.updated",
      "agent.updated",
      "agent.status_changed",
      "agent.deleted",
    ]);
    for (const event of published) {
      expect(isId("event", event.id)).toBe(true);
      expect(event.accountId).toBe(account.id);
      expect(event.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    expect(published[0]!.data).toEqual({
      id: agent.id,
      name: "Ada",
      bio: [],
      personality: {},
      knowledge: [],
      goals: [],
      clients: [],
      settings: { temperature: 1 },
      modelProvider: null,
      model: null,
      plugins: [],
      status: "active",
      statusReason: null,
      createdAt: agent.createdAt,
      updatedAt: agent.updatedAt,
      apiEndpoint: `${BASE}/v1/agents/${agent.id}/messages`,
    });
    expect(published[1]!.data).toMatchObject({ name: "Ada L.", status: "active" });
    expect(published[3]!.data).toMatchObject({ name: "Ada L.", status: "inactive" });
    expect(published[4]!.data).toEqual({ id: agent.id });
    expect(JSON.stringify(published)).not.toContain("sk-live");
    for (const event of published) expect(event.data).not.toHaveProperty("accountId");

    registry.relays.webhooks.kick();
    await registry.relays.webhooks.settle();
    expect(published).toHaveLength(5);
    await registry.close();
  });

  it("publishes again with the same ids until the webhooks service confirms; its outage holds up no purge", async () => {
    const attempts: string[][] = [];
    let up = false;
    const purged: string[] = [];
    const { registry, account } = await withWebhooks(
      await tempDir(),
      async (events) => {
        attempts.push(events.map((e) => e.id));
        if (!up) throw new Error("webhooks service down");
      },
      async (_accountId, agentId) => {
        purged.push(agentId);
      },
    );
    const agent = await registry.store.createAgent(account.id, agentFields());
    await registry.store.deleteAgent(account.id, agent.id);
    registry.relays.conversation.kick();
    registry.relays.webhooks.kick();
    await vi.waitFor(() => expect(purged).toEqual([agent.id]));
    await vi.waitFor(() => expect(attempts.length).toBeGreaterThanOrEqual(2));
    expect(await registry.store.unpublishedEvents("conversation", 10)).toEqual([]);
    expect(await registry.store.unpublishedEvents("webhooks", 10)).toHaveLength(2);

    up = true;
    await vi.waitFor(async () => expect(await registry.store.unpublishedEvents("webhooks", 10)).toEqual([]));
    expect(new Set(attempts.map((ids) => ids.join()))).toHaveProperty("size", 1);
    await registry.close();
  });

  it("leaves events in the outbox without a webhooks service, for the next registry that has one", async () => {
    const dataDir = await tempDir();
    const first = await withWebhooks(dataDir, undefined);
    const agent = await first.registry.store.createAgent(first.account.id, agentFields());
    first.registry.relays.webhooks.kick();
    await first.registry.relays.webhooks.settle();
    const waiting = await first.registry.store.unpublishedEvents("webhooks", 10);
    expect(waiting.map((e) => e.type)).toEqual(["agent.created"]);
    await first.registry.close();

    const published: PublicEvent[] = [];
    const second = await withWebhooks(dataDir, async (events) => {
      published.push(...events);
    });
    await vi.waitFor(() => expect(published.map((e) => e.id)).toEqual([waiting[0]!.id]));
    expect(published[0]!.data).toMatchObject({ id: agent.id });
    await second.registry.close();
  });

  it("splits a batch into calls of at most 4 MiB of data", async () => {
    const calls: number[] = [];
    const consumer = webhooksConsumer(async (events) => {
      calls.push(events.length);
    }, BASE);
    const big = "x".repeat(1024 * 1024);
    const events: OutboxEvent[] = Array.from({ length: 7 }, (_, i) => ({
      seq: i + 1,
      id: newId("event"),
      type: "agent.updated",
      accountId: "acct_1",
      agentId: `agt_${i}`,
      payload: { agent: { ...agentRecord(`agt_${i}`), personality: { big } } },
      createdAt: "2026-01-01T00:00:00.000Z",
    }));
    expect(await consumer(events)).toEqual({ delivered: 7 });
    expect(calls).toEqual([3, 3, 1]);
  });

  it("publishes nothing for a status change written before events carried the agent", () => {
    const legacy: OutboxEvent = {
      seq: 1,
      id: newId("event"),
      type: "agent.status_changed",
      accountId: "acct_1",
      agentId: "agt_1",
      payload: { accountId: "acct_1", agentId: "agt_1", from: "active", to: "error", statusReason: null },
      createdAt: "2026-01-01T00:00:00.000Z",
    };
    expect(webhookEvent(legacy, BASE)).toBeUndefined();
  });
});

function agentRecord(id: string): JsonObject {
  return {
    id,
    accountId: "acct_1",
    name: "n",
    bio: [],
    personality: {},
    knowledge: [],
    goals: [],
    clients: [],
    settings: {},
    modelProvider: null,
    model: null,
    plugins: [],
    status: "active",
    statusReason: null,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
  };
}
