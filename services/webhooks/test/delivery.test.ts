import { readFileSync } from "node:fs";
import { join } from "node:path";
import { newId } from "@agentry/core";
import { DeliveryStatus } from "@agentry/proto";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WEBHOOKS_DB_FILE } from "../src/store/sqlite.js";
import { Receiver, verify } from "../src/testing/receiver.js";
import {
  deliveryLog,
  eventually,
  type Harness,
  publish,
  refusal,
  startWebhooks,
  TEST_SCHEDULE_MS,
  testLookup,
} from "./harness.js";

/**
 * Deliveries to a real HTTP receiver on loopback (ALLOW_PRIVATE_NETWORKS), each one verified with the
 * `standardwebhooks` package.
 */
describe("delivery", () => {
  let receiver: Receiver;
  let h: Harness;
  beforeAll(async () => {
    receiver = await Receiver.start();
    h = await startWebhooks();
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
  });

  const create = async (accountId: string, path: string, events: string[] = ["*"], enabled = true) => {
    const { webhook, secret } = await h.client.createWebhook({
      accountId,
      spec: { url: receiver.url(path), events, enabled },
    });
    return { id: webhook!.id, secret, path };
  };

  it("delivers every event once to each enabled endpoint subscribed to it, signed, and to no other", async () => {
    const accountId = newId("account");
    const all = await create(accountId, "fan/all");
    const agents = await create(accountId, "fan/agents", ["agent.created", "agent.deleted"]);
    const messages = await create(accountId, "fan/messages", ["message.completed"]);
    const disabled = await create(accountId, "fan/disabled", ["*"], false);
    const stranger = await create(newId("account"), "fan/stranger");
    const types = ["agent.created", "agent.updated", "agent.deleted", "message.completed", "message.failed"];
    const ids = await publish(h.client, accountId, ...types, ...types);
    const expected = new Map([
      [all, ids],
      [agents, ids.filter((_, i) => ["agent.created", "agent.deleted"].includes(types[i % types.length]!))],
      [messages, ids.filter((_, i) => types[i % types.length] === "message.completed")],
    ]);
    await eventually(() => {
      for (const [endpoint, events] of expected)
        expect(receiver.at(endpoint.path)).toHaveLength(events.length);
    });
    await h.webhooks.worker.idle();
    for (const [endpoint, events] of expected) {
      const received = receiver.at(endpoint.path);
      expect(new Set(received.map((r) => r.headers["webhook-id"]))).toEqual(new Set(events));
      for (const request of received) {
        const event = verify(request, endpoint.secret);
        expect(Object.keys(event)).toEqual(["id", "type", "createdAt", "data"]);
        expect(event.id).toBe(request.headers["webhook-id"]);
        expect(event.type).toBe(types[ids.indexOf(event.id) % types.length]);
        expect(request.headers["content-type"]).toBe("application/json");
        expect(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);
        // Another endpoint's secret does not verify it.
        expect(() => verify(request, stranger.secret)).toThrow();
      }
      const log = await deliveryLog(h.client, accountId, endpoint.id);
      expect(log.map((d) => d.status)).toEqual(events.map(() => DeliveryStatus.SUCCEEDED));
      expect(log.every((d) => d.responseStatus === 200 && d.durationMs !== undefined)).toBe(true);
    }
    expect(receiver.at(disabled.path)).toEqual([]);
    expect(receiver.at(stranger.path)).toEqual([]);
    // Publishing the same events again (a relay delivering twice) sends nothing more.
    await h.client.publishEvents({
      events: ids.map((id, i) => ({
        id,
        type: types[i % types.length]!,
        accountId,
        createTime: { seconds: 1n, nanos: 0 },
        data: {},
      })),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await h.webhooks.worker.idle();
    expect(receiver.at(all.path)).toHaveLength(ids.length);
  });

  it("retries a receiver that fails 3 times on the growing schedule: 4 attempts, one webhook-id", async () => {
    const accountId = newId("account");
    const endpoint = await create(accountId, "flaky");
    receiver.answer("flaky", (_request, before) => (before < 3 ? 503 : 200));
    const [id] = await publish(h.client, accountId, "agent.updated");
    await eventually(() => expect(receiver.at("flaky")).toHaveLength(4));
    const attempts = receiver.at("flaky");
    for (const request of attempts) {
      expect(request.headers["webhook-id"]).toBe(id);
      expect(verify(request, endpoint.secret).id).toBe(id);
    }
    const gaps = attempts.slice(1).map((r, i) => r.at - attempts[i]!.at);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(TEST_SCHEDULE_MS[i]! * 0.8 - 5);
    });
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
    expect(gaps[2]!).toBeGreaterThan(gaps[1]!);
    await eventually(async () => {
      const log = await deliveryLog(h.client, accountId, endpoint.id);
      expect(log.map((d) => [d.attempt, d.status, d.responseStatus])).toEqual([
        [4, DeliveryStatus.SUCCEEDED, 200],
        [3, DeliveryStatus.FAILED, 503],
        [2, DeliveryStatus.FAILED, 503],
        [1, DeliveryStatus.FAILED, 503],
      ]);
      expect(new Set(log.map((d) => d.id)).size).toBe(4);
      expect(log[1]?.nextAttemptTime).toBeDefined();
      expect(log[1]?.error).toBe("the endpoint answered HTTP 503");
    });
  });

  it("disables an endpoint that answers 410, with a reason, and sends it nothing more", async () => {
    const accountId = newId("account");
    const endpoint = await create(accountId, "gone");
    receiver.answer("gone", 410);
    await publish(h.client, accountId, "agent.created");
    await eventually(async () => {
      const { webhook } = await h.client.getWebhook({ accountId, id: endpoint.id });
      expect(webhook?.enabled).toBe(false);
      expect(webhook?.disabledReason).toBe("The endpoint answered 410 Gone.");
    });
    await publish(h.client, accountId, "agent.created", "agent.updated");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.at("gone")).toHaveLength(1);
    const log = await deliveryLog(h.client, accountId, endpoint.id);
    expect(log.map((d) => [d.status, d.responseStatus])).toEqual([[DeliveryStatus.FAILED, 410]]);
  });

  it("redelivers a delivery: a new attempt and id, the same event and webhook-id", async () => {
    const accountId = newId("account");
    const endpoint = await create(accountId, "redeliver");
    const [id] = await publish(h.client, accountId, "message.completed");
    await eventually(() => expect(receiver.at("redeliver")).toHaveLength(1));
    const [first] = await eventually(async () => {
      const log = await deliveryLog(h.client, accountId, endpoint.id);
      expect(log[0]?.status).toBe(DeliveryStatus.SUCCEEDED);
      return log;
    });
    const { delivery } = await h.client.redeliverDelivery({
      accountId,
      webhookId: endpoint.id,
      deliveryId: first!.id,
    });
    expect(delivery?.id).not.toBe(first!.id);
    await eventually(() => expect(receiver.at("redeliver")).toHaveLength(2));
    const [a, b] = receiver.at("redeliver");
    expect(b!.headers["webhook-id"]).toBe(id);
    expect(verify(b!, endpoint.secret)).toEqual(verify(a!, endpoint.secret));
    await eventually(async () => {
      const log = await deliveryLog(h.client, accountId, endpoint.id);
      expect(log.map((d) => [d.id, d.attempt, d.status, d.eventId])).toEqual([
        [delivery!.id, 2, DeliveryStatus.SUCCEEDED, id],
        [first!.id, 1, DeliveryStatus.SUCCEEDED, id],
      ]);
    });
  });

  it("sends a test event to its endpoint alone, whatever that subscribes to", async () => {
    const accountId = newId("account");
    const endpoint = await create(accountId, "test-event", ["message.failed"]);
    const bystander = await create(accountId, "test-bystander");
    const { eventId } = await h.client.sendTestEvent({ accountId, id: endpoint.id });
    await eventually(() => expect(receiver.at("test-event")).toHaveLength(1));
    const event = verify(receiver.at("test-event")[0]!, endpoint.secret);
    expect(event).toMatchObject({ id: eventId, type: "webhook.test", data: { webhookId: endpoint.id } });
    await h.webhooks.worker.idle();
    expect(receiver.at(bystander.path)).toEqual([]);
  });

  it("signs with both secrets after a rotation, so either verifies", async () => {
    const accountId = newId("account");
    const endpoint = await create(accountId, "rotation");
    const { secret: next } = await h.client.rotateWebhookSecret({ accountId, id: endpoint.id });
    expect(next).not.toBe(endpoint.secret);
    await publish(h.client, accountId, "agent.created");
    await eventually(() => expect(receiver.at("rotation")).toHaveLength(1));
    const [request] = receiver.at("rotation");
    expect(request!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verify(request!, next).type).toBe("agent.created");
    expect(verify(request!, endpoint.secret).type).toBe("agent.created");
  });
});

describe("outbound safety", () => {
  let receiver: Receiver;
  afterEach(async () => {
    await receiver?.close();
  });

  it("refuses, by default, a URL whose host resolves to loopback, at creation", async () => {
    const h = await startWebhooks({
      allowPrivateNetworks: false,
      lookup: testLookup(new Map([["hooks.test", "127.0.0.1"]])),
    });
    try {
      for (const url of [
        "https://hooks.test/in",
        "https://localhost/in",
        "https://127.0.0.1/",
        "http://a.example.com/",
      ]) {
        const error = await refusal(
          h.client.createWebhook({ accountId: newId("account"), spec: { url, events: ["*"] } }),
        );
        expect(error.code).toBe("INVALID_REQUEST");
        expect(error.details).toEqual([{ field: "url", issue: expect.any(String) }]);
      }
    } finally {
      await h.close();
    }
  });

  it("refuses at delivery a host that resolved to a public address at creation and to loopback now", async () => {
    receiver = await Receiver.start();
    const port = new URL(receiver.origin).port;
    const names = new Map([["rebind.test", "93.184.215.14"]]);
    const h = await startWebhooks({ allowPrivateNetworks: false, lookup: testLookup(names) });
    try {
      const accountId = newId("account");
      const { webhook } = await h.client.createWebhook({
        accountId,
        spec: { url: `https://rebind.test:${port}/rebind`, events: ["*"] },
      });
      names.set("rebind.test", "127.0.0.1");
      await publish(h.client, accountId, "agent.created");
      const [entry] = await eventually(async () => {
        const log = await deliveryLog(h.client, accountId, webhook!.id);
        expect(log.length).toBeGreaterThanOrEqual(2);
        return log.slice(-1);
      });
      expect(entry?.status).toBe(DeliveryStatus.FAILED);
      expect(entry?.error).toMatch(/^refused: .*resolves to a private, loopback or reserved address/);
      expect(entry?.responseStatus).toBeUndefined();
      expect(receiver.received).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe("secrets at rest", () => {
  it("keeps secrets encrypted with WEBHOOK_SECRETS_KEY, and still signs with them", async () => {
    const receiver = await Receiver.start();
    const h = await startWebhooks({ secretsKey: Buffer.alloc(32, 7).toString("base64") });
    try {
      const accountId = newId("account");
      const { webhook, secret } = await h.client.createWebhook({
        accountId,
        spec: { url: receiver.url("sealed"), events: ["*"] },
      });
      const db = new Database(join(h.dataDir, WEBHOOKS_DB_FILE), { readonly: true });
      const stored = db
        .prepare<[string], string>("SELECT secret FROM endpoints WHERE id = ?")
        .pluck()
        .get(webhook!.id);
      db.close();
      expect(stored).toMatch(/^v1\./);
      expect(stored).not.toContain(secret.slice(6));
      expect(readFileSync(join(h.dataDir, WEBHOOKS_DB_FILE)).includes(secret.slice(6))).toBe(false);
      await publish(h.client, accountId, "agent.created");
      await eventually(() => expect(receiver.at("sealed")).toHaveLength(1));
      expect(verify(receiver.at("sealed")[0]!, secret).type).toBe("agent.created");
    } finally {
      await h.close();
      await receiver.close();
    }
  });
});
