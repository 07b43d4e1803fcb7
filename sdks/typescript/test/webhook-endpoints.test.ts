import { describe, expect, it } from "vitest";
import { BadRequestError, PermissionDeniedError } from "../src/index.js";
import { cursorList, fail, hangUp, type LocalServer, localServer, ok, type ServerHandler } from "./server.js";

const WEBHOOK_ID = "whk_01JAAAAAAAAAAAAAAAAAAAAAAA";

const endpoint = {
  id: WEBHOOK_ID,
  url: "https://example.com/hooks",
  events: ["agent.created", "agent.deleted"],
  description: "",
  enabled: true,
  disabledReason: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};
const withSecret = { ...endpoint, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };

function delivery(n: number, attempt = 1) {
  return {
    id: `dlv_${String(n).padStart(2, "0")}`,
    eventId: "evt_01JAAAAAAAAAAAAAAAAAAAAAAA",
    eventType: "webhook.test",
    attempt,
    status: "pending",
    responseStatus: null,
    durationMs: null,
    error: null,
    createdAt: "2026-01-01T00:00:00.000Z",
    nextAttemptAt: "2026-01-01T00:00:00.000Z",
  };
}

describe("webhookEndpoints", () => {
  it("maps every operation to its route", async () => {
    const server = await localServer(
      ok(withSecret, 201),
      ok([endpoint]),
      ok(endpoint),
      ok({ ...endpoint, enabled: false }),
      ok({ ...withSecret, secret: "whsec_new" }),
      ok(delivery(1)),
      ok(delivery(2, 2)),
      ok({ id: WEBHOOK_ID, deleted: true }),
    );
    const hooks = server.client().webhookEndpoints;
    expect(
      await hooks.create({ url: endpoint.url, events: ["agent.created", "agent.deleted"], description: "" }),
    ).toEqual(withSecret);
    expect(await hooks.list()).toEqual([endpoint]);
    expect(await hooks.get(WEBHOOK_ID)).toEqual(endpoint);
    expect((await hooks.update(WEBHOOK_ID, { enabled: false })).enabled).toBe(false);
    expect((await hooks.rotateSecret(WEBHOOK_ID)).secret).toBe("whsec_new");
    expect(await hooks.sendTestEvent(WEBHOOK_ID)).toEqual(delivery(1));
    expect(await hooks.deliveries.redeliver(WEBHOOK_ID, "dlv_01")).toEqual(delivery(2, 2));
    expect(await hooks.delete(WEBHOOK_ID)).toEqual({ id: WEBHOOK_ID, deleted: true });
    expect(server.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      "POST /v1/webhooks",
      "GET /v1/webhooks",
      `GET /v1/webhooks/${WEBHOOK_ID}`,
      `PATCH /v1/webhooks/${WEBHOOK_ID}`,
      `POST /v1/webhooks/${WEBHOOK_ID}/rotate-secret`,
      `POST /v1/webhooks/${WEBHOOK_ID}/test`,
      `POST /v1/webhooks/${WEBHOOK_ID}/deliveries/dlv_01/redeliver`,
      `DELETE /v1/webhooks/${WEBHOOK_ID}`,
    ]);
    expect(server.requests[0]!.body).toEqual({
      url: endpoint.url,
      events: ["agent.created", "agent.deleted"],
      description: "",
    });
    expect(server.requests[3]!.body).toEqual({ enabled: false });
    expect(server.requests[4]!.body).toBeUndefined();
  });

  it("pages the delivery log by cursor, newest first, and gathers it with listAll", async () => {
    const server = await localServer(cursorList([1, 2, 3, 4, 5].map((n) => delivery(n))));
    const deliveries = server.client().webhookEndpoints.deliveries;
    const page = await deliveries.list(WEBHOOK_ID, { limit: 2 });
    expect(page.data.map((d) => d.id)).toEqual(["dlv_05", "dlv_04"]);
    expect(page.pagination).toEqual({ limit: 2, hasMore: true });
    const all = await deliveries.listAll(WEBHOOK_ID, { limit: 2, order: "asc" });
    expect(all.map((d) => d.id)).toEqual(["dlv_01", "dlv_02", "dlv_03", "dlv_04", "dlv_05"]);
    expect(server.requests.map((r) => `${r.url.pathname}${r.url.search}`)).toEqual([
      `/v1/webhooks/${WEBHOOK_ID}/deliveries?limit=2`,
      `/v1/webhooks/${WEBHOOK_ID}/deliveries?limit=2&order=asc`,
      `/v1/webhooks/${WEBHOOK_ID}/deliveries?limit=2&order=asc&after=dlv_02`,
      `/v1/webhooks/${WEBHOOK_ID}/deliveries?limit=2&order=asc&after=dlv_04`,
    ]);
  });

  it("calls that make something are retried like reads, each attempt under the call's one Idempotency-Key", async () => {
    const makers = [
      [
        "create",
        (s: LocalServer) => s.client().webhookEndpoints.create({ url: endpoint.url, events: ["*"] }),
      ],
      ["rotateSecret", (s: LocalServer) => s.client().webhookEndpoints.rotateSecret(WEBHOOK_ID)],
      ["sendTestEvent", (s: LocalServer) => s.client().webhookEndpoints.sendTestEvent(WEBHOOK_ID)],
      [
        "redeliver",
        (s: LocalServer) => s.client().webhookEndpoints.deliveries.redeliver(WEBHOOK_ID, "dlv_01"),
      ],
    ] as const;
    const outcomes: [string, ServerHandler][] = [
      ["500", fail(500, "INTERNAL_ERROR")],
      ["503", fail(503, "AGENT_UNAVAILABLE")],
      ["broken connection", hangUp],
      ["429", fail(429, "RATE_LIMIT_EXCEEDED", { headers: { "retry-after": "0" } })],
    ];
    for (const [call, make] of makers) {
      for (const [name, handler] of outcomes) {
        const server = await localServer(handler);
        await expect(make(server)).rejects.toBeInstanceOf(Error);
        expect(server.requests, `${call} after ${name}`).toHaveLength(3);
        const keys = new Set(server.requests.map((request) => request.headers["idempotency-key"]));
        expect(keys.size, `${call} after ${name}`).toBe(1);
        expect([...keys][0], `${call} after ${name}`).toMatch(/^[0-9a-f-]{36}$/);
      }
    }
    const rejected = await localServer(fail(422, "IDEMPOTENCY_KEY_REUSED"));
    const error = await rejected
      .client()
      .webhookEndpoints.rotateSecret(WEBHOOK_ID, { idempotencyKey: "rotate-1" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 422, code: "IDEMPOTENCY_KEY_REUSED" });
    expect(rejected.requests).toHaveLength(1);
    expect(rejected.requests[0]!.headers["idempotency-key"]).toBe("rotate-1");
  });

  it("reads, updates and deletes are retried on 5xx", async () => {
    const server = await localServer(
      fail(503, "AGENT_UNAVAILABLE"),
      ok(endpoint),
      fail(500, "INTERNAL_ERROR"),
      ok(endpoint),
      hangUp,
      ok({ id: WEBHOOK_ID, deleted: true }),
    );
    const hooks = server.client().webhookEndpoints;
    await hooks.get(WEBHOOK_ID);
    await hooks.update(WEBHOOK_ID, { description: "x" });
    await hooks.delete(WEBHOOK_ID);
    expect(server.requests.map((r) => r.method)).toEqual([
      "GET",
      "GET",
      "PATCH",
      "PATCH",
      "DELETE",
      "DELETE",
    ]);
  });

  it("reports a missing endpoint, a disabled one and a full account with their classes", async () => {
    const server = await localServer(
      fail(404, "WEBHOOK_NOT_FOUND"),
      fail(400, "INVALID_REQUEST", { details: [{ field: "enabled", issue: "is false" }] }),
      fail(403, "INSUFFICIENT_QUOTA"),
    );
    const hooks = server.client().webhookEndpoints;
    await expect(hooks.get(WEBHOOK_ID)).rejects.toMatchObject({ code: "WEBHOOK_NOT_FOUND" });
    await expect(hooks.sendTestEvent(WEBHOOK_ID)).rejects.toBeInstanceOf(BadRequestError);
    const full = await hooks.create({ url: endpoint.url, events: ["*"] }).catch((e: unknown) => e);
    expect(full).toBeInstanceOf(PermissionDeniedError);
    expect(full).toMatchObject({ status: 403, code: "INSUFFICIENT_QUOTA" });
    expect(server.requests).toHaveLength(3);
    await expect(hooks.get("")).rejects.toThrow(/webhookId must be a non-empty string/);
    await expect(hooks.deliveries.redeliver(WEBHOOK_ID, "")).rejects.toThrow(
      /deliveryId must be a non-empty/,
    );
    expect(server.requests).toHaveLength(3);
  });
});
