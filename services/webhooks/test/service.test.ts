import { newId } from "@agentry/core";
import { DeliveryOrder, DeliveryStatus } from "@agentry/proto";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryLog, type Harness, refusal, startWebhooks } from "./harness.js";

/** The RPCs and their refusals; deliveries are not made here (the worker is off). */
describe("WebhookService", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startWebhooks({ worker: false });
  });
  afterAll(() => h.close());

  const spec = (overrides: Record<string, unknown> = {}) => ({
    url: "https://hooks.example.com/in",
    events: ["*"],
    ...overrides,
  });

  it("creates an endpoint, returning its whsec_ secret of 24+ random bytes once", async () => {
    const accountId = newId("account");
    const { webhook, secret } = await h.client.createWebhook({
      accountId,
      spec: spec({ url: "http://127.0.0.1:9/x", events: ["agent.created"], description: "ci" }),
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24);
    expect(webhook).toMatchObject({
      id: expect.stringMatching(/^whk_/),
      url: "http://127.0.0.1:9/x",
      events: ["agent.created"],
      description: "ci",
      enabled: true,
    });
    expect(webhook?.disabledReason).toBeUndefined();
    const { webhook: read } = await h.client.getWebhook({ accountId, id: webhook!.id });
    expect(read).toEqual(webhook);
    const listed = (await h.client.listWebhooks({ accountId })).webhooks;
    expect(
      JSON.stringify(listed, (_key, value) => (typeof value === "bigint" ? String(value) : value)),
    ).not.toContain("whsec_");
    // Created disabled when asked.
    const off = await h.client.createWebhook({ accountId, spec: spec({ enabled: false }) });
    expect(off.webhook?.enabled).toBe(false);
  });

  it("refuses unknown event names, naming each", async () => {
    const error = await refusal(
      h.client.createWebhook({
        accountId: newId("account"),
        spec: spec({ events: ["agent.created", "agent.exploded", "agent.created", "webhook.test"] }),
      }),
    );
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.details?.map((d) => d.field)).toEqual(["events[1]", "events[2]", "events[3]"]);
    for (const events of [[], ["*", "agent.created"]]) {
      const refused = await refusal(
        h.client.createWebhook({ accountId: newId("account"), spec: spec({ events }) }),
      );
      expect(refused.details).toEqual([{ field: "events", issue: expect.any(String) }]);
    }
  });

  it("refuses a bad URL and a description too long, with details naming the field", async () => {
    for (const url of ["", "not a url", "ftp://example.com/", "https://user:pw@example.com/"]) {
      const error = await refusal(
        h.client.createWebhook({ accountId: newId("account"), spec: spec({ url }) }),
      );
      expect(error.code).toBe("INVALID_REQUEST");
      expect(error.details).toEqual([{ field: "url", issue: expect.any(String) }]);
    }
    const long = await refusal(
      h.client.createWebhook({ accountId: newId("account"), spec: spec({ description: "x".repeat(1001) }) }),
    );
    expect(long.details).toEqual([{ field: "description", issue: "must be at most 1000 characters" }]);
  });

  it("allows 20 endpoints per account; the 21st is INSUFFICIENT_QUOTA", async () => {
    const accountId = newId("account");
    const results = await Promise.allSettled(
      Array.from({ length: 23 }, () => h.client.createWebhook({ accountId, spec: spec() })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(20);
    expect((await refusal(h.client.createWebhook({ accountId, spec: spec() }))).code).toBe(
      "INSUFFICIENT_QUOTA",
    );
    expect((await h.client.listWebhooks({ accountId })).webhooks).toHaveLength(20);
  });

  it("updates the fields its mask names, each checked as on create", async () => {
    const accountId = newId("account");
    const { webhook } = await h.client.createWebhook({ accountId, spec: spec({ description: "keep" }) });
    const id = webhook!.id;
    const { webhook: updated } = await h.client.updateWebhook({
      accountId,
      id,
      spec: { url: "https://new.example.com/", events: ["message.completed"], enabled: false },
      updateMask: { paths: ["url", "events", "enabled"] },
    });
    expect(updated).toMatchObject({
      url: "https://new.example.com/",
      events: ["message.completed"],
      description: "keep",
      enabled: false,
    });
    const bad = await refusal(
      h.client.updateWebhook({
        accountId,
        id,
        spec: { events: ["nope"] },
        updateMask: { paths: ["events", "enabled", "secret"] },
      }),
    );
    expect(bad.details?.map((d) => d.field)).toEqual(["events[0]", "enabled", "update_mask"]);
    const url = await refusal(
      h.client.updateWebhook({ accountId, id, spec: { url: "ftp://x/" }, updateMask: { paths: ["url"] } }),
    );
    expect(url.details?.map((d) => d.field)).toEqual(["url"]);
    expect(
      (await refusal(h.client.updateWebhook({ accountId: newId("account"), id, updateMask: { paths: [] } })))
        .code,
    ).toBe("WEBHOOK_NOT_FOUND");
  });

  it("answers WEBHOOK_NOT_FOUND for another account's endpoint on every call", async () => {
    const owner = newId("account");
    const other = newId("account");
    const { webhook } = await h.client.createWebhook({ accountId: owner, spec: spec() });
    const id = webhook!.id;
    const calls = [
      () => h.client.getWebhook({ accountId: other, id }),
      () => h.client.deleteWebhook({ accountId: other, id }),
      () => h.client.rotateWebhookSecret({ accountId: other, id }),
      () => h.client.sendTestEvent({ accountId: other, id }),
      () => h.client.listDeliveries({ accountId: other, webhookId: id }),
      () => h.client.redeliverDelivery({ accountId: other, webhookId: id, deliveryId: newId("delivery") }),
    ];
    for (const call of calls) expect((await refusal(call())).code).toBe("WEBHOOK_NOT_FOUND");
    await h.client.deleteWebhook({ accountId: owner, id });
    expect((await refusal(h.client.getWebhook({ accountId: owner, id }))).code).toBe("WEBHOOK_NOT_FOUND");
  });

  it("schedules a test event and a redelivery, listed newest first and paged by cursor", async () => {
    const accountId = newId("account");
    const { webhook } = await h.client.createWebhook({
      accountId,
      spec: spec({ events: ["agent.deleted"] }),
    });
    const webhookId = webhook!.id;
    const test = await h.client.sendTestEvent({ accountId, id: webhookId });
    expect(test.eventId).toMatch(/^evt_/);
    expect(test.delivery).toMatchObject({
      webhookId,
      eventId: test.eventId,
      eventType: "webhook.test",
      attempt: 1,
      status: DeliveryStatus.PENDING,
    });
    const again = await h.client.redeliverDelivery({ accountId, webhookId, deliveryId: test.delivery!.id });
    expect(again.delivery).toMatchObject({
      eventId: test.eventId,
      attempt: 2,
      status: DeliveryStatus.PENDING,
    });
    expect(again.delivery?.id).not.toBe(test.delivery?.id);
    const log = await deliveryLog(h.client, accountId, webhookId);
    expect(log.map((d) => d.id)).toEqual([again.delivery!.id, test.delivery!.id]);
    const page = await h.client.listDeliveries({ accountId, webhookId, limit: 1 });
    expect(page.hasMore).toBe(true);
    const next = await h.client.listDeliveries({
      accountId,
      webhookId,
      limit: 1,
      before: page.deliveries[0]!.id,
    });
    expect(next.deliveries.map((d) => d.id)).toEqual([test.delivery!.id]);
    expect(next.hasMore).toBe(false);
    const ascending = await h.client.listDeliveries({ accountId, webhookId, order: DeliveryOrder.ASC });
    expect(ascending.deliveries.map((d) => d.id)).toEqual([test.delivery!.id, again.delivery!.id]);
    for (const [query, field] of [
      [{ limit: 101 }, "limit"],
      [{ before: "dlv_x" }, "before"],
      [{ before: newId("delivery") }, "before"],
      [{ after: newId("delivery") }, "after"],
    ] as const) {
      const error = await refusal(h.client.listDeliveries({ accountId, webhookId, ...query }));
      expect(error.details?.[0]?.field).toBe(field);
    }
    expect(
      (await refusal(h.client.redeliverDelivery({ accountId, webhookId, deliveryId: newId("delivery") })))
        .code,
    ).toBe("DELIVERY_NOT_FOUND");
  });

  it("refuses tests and redeliveries to a disabled endpoint", async () => {
    const accountId = newId("account");
    const { webhook } = await h.client.createWebhook({ accountId, spec: spec({ enabled: false }) });
    const error = await refusal(h.client.sendTestEvent({ accountId, id: webhook!.id }));
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.details?.[0]?.field).toBe("enabled");
  });

  it("publishes idempotently by event id, and refuses malformed events naming each", async () => {
    const accountId = newId("account");
    await h.client.createWebhook({ accountId, spec: spec() });
    await h.client.createWebhook({ accountId, spec: spec({ events: ["agent.created"] }) });
    const event = {
      id: newId("event"),
      type: "agent.created",
      accountId,
      createTime: timestampNow(),
      data: {},
    };
    expect(await h.client.publishEvents({ events: [event, event] })).toMatchObject({
      accepted: 1,
      deliveries: 2,
    });
    expect(await h.client.publishEvents({ events: [event] })).toMatchObject({ accepted: 0, deliveries: 0 });
    const error = await refusal(
      h.client.publishEvents({
        events: [
          { ...event, id: "evt_nope" },
          { ...event, id: newId("event"), type: "webhook.test" },
          { ...event, id: newId("event"), accountId: "", createTime: undefined },
        ],
      }),
    );
    expect(error.details?.map((d) => d.field)).toEqual([
      "events[0].id",
      "events[1].type",
      "events[2].account_id",
      "events[2].create_time",
    ]);
  });
});
