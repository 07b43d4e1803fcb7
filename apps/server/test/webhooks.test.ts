import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isId } from "@agentry/core";
import { Receiver, verify } from "@agentry/webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

interface WebhookJson {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
  secret?: string;
}

interface DeliveryJson {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: "pending" | "succeeded" | "failed";
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
}

type Answer<T> = { success: boolean; data: T; pagination?: { limit: number; hasMore: boolean } } & ErrorBody;

const MISSING_WEBHOOK = "whk_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_DELIVERY = "dlv_01JAAAAAAAAAAAAAAAAAAAAAAA";

let h: Harness;
let receiver: Receiver;
let tenant: Tenant;
let paths = 0;

beforeAll(async () => {
  receiver = await Receiver.start();
  h = await startHarness({ ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "300ms,900ms" });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const call = <T>(method: string, path: string, options: { key?: string | null; body?: unknown } = {}) =>
  h.request<Answer<T>>(method, path, { key: tenant.key, ...options });

/** A new endpoint of the tenant (or `key`'s account) at a path of its own on the receiver. */
async function newEndpoint(body: Record<string, unknown> = {}, key = tenant.key) {
  const path = `hook-${++paths}`;
  const res = await call<WebhookJson>("POST", "/v1/webhooks", {
    key,
    body: { url: receiver.url(path), events: ["*"], ...body },
  });
  expect(res.status).toBe(201);
  return { path, webhook: res.body.data, secret: res.body.data.secret! };
}

const deliveriesOf = (id: string, query = "") =>
  call<DeliveryJson[]>("GET", `/v1/webhooks/${id}/deliveries${query}`);

describe("webhook endpoints: happy path", () => {
  it("creates an endpoint and shows its secret once", async () => {
    const res = await call<WebhookJson>("POST", "/v1/webhooks", {
      body: { url: receiver.url("created"), events: ["agent.created", "agent.deleted"], description: "ops" },
    });
    expect(res.status).toBe(201);
    const { secret, ...webhook } = res.body.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(isId("webhook", webhook.id)).toBe(true);
    expect(webhook).toEqual({
      id: webhook.id,
      url: receiver.url("created"),
      events: ["agent.created", "agent.deleted"],
      description: "ops",
      enabled: true,
      disabledReason: null,
      createdAt: expect.any(String),
      updatedAt: webhook.createdAt,
    });
    const got = await call<WebhookJson>("GET", `/v1/webhooks/${webhook.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(webhook);
    const listed = await call<WebhookJson[]>("GET", "/v1/webhooks");
    expect(listed.body.data.find((w) => w.id === webhook.id)).toEqual(webhook);
    expect(JSON.stringify([got.body, listed.body])).not.toContain(secret!);
  });

  it("lists the account's endpoints newest first", async () => {
    const other = await h.tenant();
    const first = await newEndpoint({}, other.key);
    const second = await newEndpoint({ enabled: false }, other.key);
    const listed = await h.request<Answer<WebhookJson[]>>("GET", "/v1/webhooks", { key: other.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((w) => w.id)).toEqual([second.webhook.id, first.webhook.id]);
    expect(listed.body.data[0]!.enabled).toBe(false);
  });

  it("updates only the fields sent, and disabling then enabling an endpoint", async () => {
    const { webhook } = await newEndpoint({ description: "before" });
    const events = await call<WebhookJson>("PATCH", `/v1/webhooks/${webhook.id}`, {
      body: { events: ["agent.updated"] },
    });
    expect(events.status).toBe(200);
    expect(events.body.data).toMatchObject({
      events: ["agent.updated"],
      description: "before",
      enabled: true,
    });
    const off = await call<WebhookJson>("PATCH", `/v1/webhooks/${webhook.id}`, {
      body: { enabled: false, description: "" },
    });
    expect(off.body.data).toMatchObject({ enabled: false, description: "", url: webhook.url });
    const moved = await call<WebhookJson>("PATCH", `/v1/webhooks/${webhook.id}`, {
      body: { enabled: true, url: receiver.url("moved") },
    });
    expect(moved.body.data).toMatchObject({
      enabled: true,
      url: receiver.url("moved"),
      disabledReason: null,
    });
    expect((await call<WebhookJson>("PATCH", `/v1/webhooks/${webhook.id}`, { body: {} })).status).toBe(200);
  });

  it("keeps endpoint secrets sealed at rest under a key generated into DATA_DIR, and still signs with them", async () => {
    const { path, webhook, secret } = await newEndpoint({ events: ["agent.deleted"] });
    const keyFile = join(h.dataDir, "webhook-secrets.key");
    expect(Buffer.from(readFileSync(keyFile, "utf8").trim(), "base64")).toHaveLength(32);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    for (const file of readdirSync(h.dataDir).filter((name) => name.startsWith("webhooks.db"))) {
      expect(readFileSync(join(h.dataDir, file)).includes(Buffer.from(secret)), file).toBe(false);
    }
    await call("POST", `/v1/webhooks/${webhook.id}/test`);
    await expect.poll(() => receiver.at(path).length, { timeout: 10_000 }).toBe(1);
    expect(verify(receiver.at(path)[0]!, secret).type).toBe("webhook.test");
  });

  it("deletes an endpoint, after which it is gone", async () => {
    const { webhook } = await newEndpoint();
    const res = await call<{ id: string; deleted: boolean }>("DELETE", `/v1/webhooks/${webhook.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { id: webhook.id, deleted: true } });
    expect((await call("GET", `/v1/webhooks/${webhook.id}`)).body.error.code).toBe("WEBHOOK_NOT_FOUND");
    expect((await call("DELETE", `/v1/webhooks/${webhook.id}`)).status).toBe(404);
  });

  it("sends a signed test event, logs the attempt, and redelivers it with the same webhook-id", async () => {
    const { path, webhook, secret } = await newEndpoint({ events: ["agent.deleted"] });
    const sent = await call<DeliveryJson>("POST", `/v1/webhooks/${webhook.id}/test`);
    expect(sent.status).toBe(200);
    expect(sent.body.data).toMatchObject({
      eventType: "webhook.test",
      attempt: 1,
      status: "pending",
      responseStatus: null,
      durationMs: null,
      error: null,
    });
    expect(isId("delivery", sent.body.data.id)).toBe(true);
    expect(isId("event", sent.body.data.eventId)).toBe(true);

    await expect.poll(() => receiver.at(path).length, { timeout: 10_000 }).toBe(1);
    const event = verify(receiver.at(path)[0]!, secret);
    expect(event).toMatchObject({
      id: sent.body.data.eventId,
      type: "webhook.test",
      data: { webhookId: webhook.id },
    });
    expect(receiver.at(path)[0]!.headers["webhook-id"]).toBe(sent.body.data.eventId);

    await expect
      .poll(async () => (await deliveriesOf(webhook.id)).body.data[0]?.status, { timeout: 10_000 })
      .toBe("succeeded");
    const [logged] = (await deliveriesOf(webhook.id)).body.data;
    expect(logged).toEqual({
      ...sent.body.data,
      status: "succeeded",
      responseStatus: 200,
      durationMs: expect.any(Number),
      nextAttemptAt: null,
    });

    const again = await call<DeliveryJson>(
      "POST",
      `/v1/webhooks/${webhook.id}/deliveries/${logged!.id}/redeliver`,
    );
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ eventId: logged!.eventId, attempt: 2, status: "pending" });
    expect(again.body.data.id).not.toBe(logged!.id);
    await expect.poll(() => receiver.at(path).length, { timeout: 10_000 }).toBe(2);
    expect(receiver.at(path)[1]!.headers["webhook-id"]).toBe(logged!.eventId);
    expect(verify(receiver.at(path)[1]!, secret).id).toBe(logged!.eventId);
  });

  it("pages the delivery log by cursor, either way", async () => {
    const { path, webhook } = await newEndpoint();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++)
      sent.push((await call<DeliveryJson>("POST", `/v1/webhooks/${webhook.id}/test`)).body.data.id);
    await expect.poll(() => receiver.at(path).length, { timeout: 10_000 }).toBe(5);

    const first = await deliveriesOf(webhook.id, "?limit=2");
    expect(first.body.pagination).toEqual({ limit: 2, hasMore: true });
    expect(first.body.data.map((d) => d.id)).toEqual([sent[4], sent[3]]);
    const second = await deliveriesOf(webhook.id, `?limit=2&before=${sent[3]}`);
    expect(second.body.data.map((d) => d.id)).toEqual([sent[2], sent[1]]);
    const last = await deliveriesOf(webhook.id, `?limit=2&before=${sent[1]}`);
    expect(last.body).toMatchObject({ pagination: { limit: 2, hasMore: false } });
    expect(last.body.data.map((d) => d.id)).toEqual([sent[0]]);
    const oldest = await deliveriesOf(webhook.id, `?order=asc&limit=3&after=${sent[0]}`);
    expect(oldest.body.data.map((d) => d.id)).toEqual([sent[1], sent[2], sent[3]]);
    expect((await deliveriesOf(webhook.id)).body.pagination).toEqual({ limit: 20, hasMore: false });
  });

  it("rotates the secret: shown once, and both secrets sign deliveries for a while", async () => {
    const { path, webhook, secret } = await newEndpoint();
    const rotated = await call<WebhookJson>("POST", `/v1/webhooks/${webhook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const { secret: next, ...after } = rotated.body.data;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect(after.id).toBe(webhook.id);
    expect(JSON.stringify((await call("GET", `/v1/webhooks/${webhook.id}`)).body)).not.toContain(next!);

    await call("POST", `/v1/webhooks/${webhook.id}/test`);
    await expect.poll(() => receiver.at(path).length, { timeout: 10_000 }).toBe(1);
    const delivery = receiver.at(path)[0]!;
    expect(delivery.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verify(delivery, next!).type).toBe("webhook.test");
    expect(verify(delivery, secret).type).toBe("webhook.test");
  });
});

describe("webhook endpoints: errors", () => {
  it("refuses bodies the contract refuses, naming each field", async () => {
    const refused = async (body: unknown, field: string) => {
      const res = await call("POST", "/v1/webhooks", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("INVALID_REQUEST");
      expect(res.body.error.details?.map((d) => d.field)).toContain(field);
    };
    const url = receiver.url("refused");
    await refused({ url }, "events");
    await refused({ events: ["*"] }, "url");
    await refused({ url, events: [] }, "events");
    await refused({ url, events: ["*", "agent.created"] }, "events");
    await refused({ url, events: ["agent.created", "agent.created"] }, "events");
    await refused({ url, events: ["agent.exploded"] }, "events[0]");
    await refused({ url, events: ["webhook.test"] }, "events[0]");
    await refused({ url: "ftp://example.com/x", events: ["*"] }, "url");
    await refused({ url: `https://example.com/${"x".repeat(2048)}`, events: ["*"] }, "url");
    await refused({ url, events: ["*"], description: "d".repeat(1001) }, "description");
    await refused({ url, events: ["*"], enabled: "yes" }, "enabled");
    await refused({ url, events: ["*"], secret: "whsec_mine" }, "secret");
    await refused({ url: "http://exa mple.com/", events: ["*"] }, "url");
    expect((await call("PATCH", `/v1/webhooks/${MISSING_WEBHOOK}`, { body: { events: [] } })).status).toBe(
      400,
    );
  });

  it("refuses http and private addresses unless the deployment allows them", async () => {
    const strict = await startHarness();
    try {
      const owner = await strict.tenant();
      for (const url of [
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://[::1]/hook",
        "https://169.254.169.254/latest",
        "https://user:pass@example.com/hook",
      ]) {
        const res = await strict.request<ErrorBody>("POST", "/v1/webhooks", {
          key: owner.key,
          body: { url, events: ["*"] },
        });
        expect(res.status, url).toBe(400);
        expect(res.body.error.details).toEqual([{ field: "url", issue: expect.any(String) }]);
      }
    } finally {
      await strict.close();
    }
  });

  it("answers 404 WEBHOOK_NOT_FOUND and DELIVERY_NOT_FOUND for what does not exist", async () => {
    const { webhook } = await newEndpoint();
    for (const id of [MISSING_WEBHOOK, "whk_nope", "agt_01JAAAAAAAAAAAAAAAAAAAAAAA"]) {
      for (const [method, suffix] of [
        ["GET", ""],
        ["PATCH", ""],
        ["DELETE", ""],
        ["POST", "/rotate-secret"],
        ["POST", "/test"],
        ["GET", "/deliveries"],
        ["POST", `/deliveries/${MISSING_DELIVERY}/redeliver`],
      ] as const) {
        const res = await call(method, `/v1/webhooks/${id}${suffix}`, method === "PATCH" ? { body: {} } : {});
        expect(res.status, `${method} ${id}${suffix}`).toBe(404);
        expect(res.body.error.code).toBe("WEBHOOK_NOT_FOUND");
      }
    }
    for (const deliveryId of [MISSING_DELIVERY, "dlv_nope"]) {
      const res = await call("POST", `/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/redeliver`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("DELIVERY_NOT_FOUND");
    }
  });

  it("refuses delivery-log queries outside the contract", async () => {
    const { webhook } = await newEndpoint();
    for (const query of [
      "?limit=0",
      "?limit=101",
      "?limit=x",
      "?order=newest",
      `?before=${MISSING_DELIVERY}`,
      "?after=msg_01JAAAAAAAAAAAAAAAAAAAAAAA",
      `?before=${MISSING_DELIVERY}&after=${MISSING_DELIVERY}`,
      "?page=2",
    ]) {
      const res = await deliveriesOf(webhook.id, query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe("INVALID_REQUEST");
    }
  });

  it("sends nothing to a disabled endpoint: tests and redeliveries are refused", async () => {
    const { webhook } = await newEndpoint();
    const sent = (await call<DeliveryJson>("POST", `/v1/webhooks/${webhook.id}/test`)).body.data;
    await call("PATCH", `/v1/webhooks/${webhook.id}`, { body: { enabled: false } });
    for (const path of ["test", `deliveries/${sent.id}/redeliver`]) {
      const res = await call("POST", `/v1/webhooks/${webhook.id}/${path}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: "enabled", issue: expect.any(String) }]);
    }
  });

  it("refuses the 21st endpoint of an account with 403 INSUFFICIENT_QUOTA", async () => {
    const owner = await h.tenant();
    for (let i = 0; i < 20; i++) await newEndpoint({}, owner.key);
    const res = await h.request<ErrorBody>("POST", "/v1/webhooks", {
      key: owner.key,
      body: { url: receiver.url("one-too-many"), events: ["*"] },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("INSUFFICIENT_QUOTA");
  });

  it("answers 413 and 415 to bodies it cannot take", async () => {
    const big = await h.request("POST", "/v1/webhooks", {
      key: tenant.key,
      rawBody: JSON.stringify({
        url: receiver.url("big"),
        events: ["*"],
        description: "x".repeat(1024 * 1024),
      }),
      headers: { "content-type": "application/json" },
    });
    expect(big.status).toBe(413);
    const form = await h.request("POST", "/v1/webhooks", {
      key: tenant.key,
      rawBody: "url=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(415);
  });

  it("spends from the create bucket for creates, tests and redeliveries", async () => {
    const limited = await h.tenant({ limits: { createPerMinute: 2 } });
    const { webhook } = await newEndpoint({}, limited.key);
    const test = await h.request("POST", `/v1/webhooks/${webhook.id}/test`, { key: limited.key });
    expect(test.status).toBe(200);
    const refused = await h.request<ErrorBody>("POST", "/v1/webhooks", {
      key: limited.key,
      body: { url: receiver.url("x"), events: ["*"] },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await h.request("GET", "/v1/webhooks", { key: limited.key })).status).toBe(200);
  });
});

describe("webhook endpoints: security", () => {
  const routes = (id: string, deliveryId = MISSING_DELIVERY) =>
    [
      ["POST", "/v1/webhooks"],
      ["GET", "/v1/webhooks"],
      ["GET", `/v1/webhooks/${id}`],
      ["PATCH", `/v1/webhooks/${id}`],
      ["DELETE", `/v1/webhooks/${id}`],
      ["POST", `/v1/webhooks/${id}/rotate-secret`],
      ["POST", `/v1/webhooks/${id}/test`],
      ["GET", `/v1/webhooks/${id}/deliveries`],
      ["POST", `/v1/webhooks/${id}/deliveries/${deliveryId}/redeliver`],
    ] as const;

  const bodyFor = (method: string) =>
    method === "POST" || method === "PATCH" ? { body: { url: receiver.url("x"), events: ["*"] } } : {};

  it("answers 401 without a key, or with one that is not a key", async () => {
    const { webhook } = await newEndpoint();
    for (const [method, path] of routes(webhook.id)) {
      for (const key of [null, "agentry_sk_nope"]) {
        const res = await call(method, path, { key, ...bodyFor(method) });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.body.error.code).toBe("UNAUTHORIZED");
      }
    }
  });

  it("answers 403 FORBIDDEN to a key without webhooks:manage, and changes nothing", async () => {
    const { webhook } = await newEndpoint();
    const { key } = await tenant.keyWith(["agents:read", "agents:write", "agents:delete", "keys:manage"]);
    for (const [method, path] of routes(webhook.id)) {
      const res = await call(method, path, { key, ...bodyFor(method) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("FORBIDDEN");
    }
    expect((await call("GET", `/v1/webhooks/${webhook.id}`)).status).toBe(200);
    const { key: only } = await tenant.keyWith(["webhooks:manage"]);
    expect((await call("GET", `/v1/webhooks/${webhook.id}`, { key: only })).status).toBe(200);
  });

  it("treats another account's endpoint and deliveries exactly like missing ones", async () => {
    const { path, webhook, secret } = await newEndpoint();
    const sent = (await call<DeliveryJson>("POST", `/v1/webhooks/${webhook.id}/test`)).body.data;
    await expect.poll(() => receiver.at(path).length, { timeout: 10_000 }).toBe(1);
    const stranger = await h.tenant();
    for (const [method, route] of routes(webhook.id, sent.id).slice(2)) {
      const res = await h.request<ErrorBody>(method, route, {
        key: stranger.key,
        ...(method === "PATCH" ? { body: { enabled: false } } : {}),
      });
      expect(res.status, `${method} ${route}`).toBe(404);
      expect(res.body.error).toMatchObject({
        code: "WEBHOOK_NOT_FOUND",
        message: `Webhook endpoint ${webhook.id} does not exist.`,
      });
    }
    const theirs = await h.request<Answer<WebhookJson[]>>("GET", "/v1/webhooks", { key: stranger.key });
    expect(theirs.body.data).toEqual([]);
    // Nothing the stranger tried reached the endpoint or changed it.
    const mine = await call<WebhookJson>("GET", `/v1/webhooks/${webhook.id}`);
    expect(mine.body.data).toMatchObject({ enabled: true, updatedAt: webhook.updatedAt });
    expect(receiver.at(path)).toHaveLength(1);
    expect(verify(receiver.at(path)[0]!, secret).id).toBe(sent.eventId);
  });
});
