import { describe, expect, it } from "vitest";
import { clientWith, json, mockFetch } from "./helpers.js";

function event(n: number) {
  return {
    id: `aud_01JCZ3S8Q5M2T7V9X0B4D6F8H${n}`,
    at: "2026-11-20T09:30:00.000Z",
    actor: { type: "key", id: "key_01JCZ3S8Q5M2T7V9X0B4D6F8H1" },
    action: "agent.update",
    target: { type: "agent", id: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1" },
    ip: "203.0.113.7",
    requestId: "req_1",
    changes: { name: { from: "Ada", to: "Grace" } },
  };
}

describe("client.auditEvents", () => {
  it("lists a page with its filters, and iterates every page by cursor", async () => {
    const { fetch, requests } = mockFetch(
      () => json(200, { success: true, data: [event(3), event(2)], pagination: { limit: 2, hasMore: true } }),
      () => json(200, { success: true, data: [event(1)], pagination: { limit: 2, hasMore: false } }),
    );
    const client = clientWith(fetch);
    const seen: string[] = [];
    for await (const e of client.auditEvents.list({
      limit: 2,
      action: "agent.update",
      since: "2026-11-01T00:00:00Z",
    })) {
      seen.push(e.id);
    }
    expect(seen).toEqual([event(3).id, event(2).id, event(1).id]);
    expect(requests[0]!.url.pathname).toBe("/v1/audit-events");
    expect(Object.fromEntries(requests[0]!.url.searchParams)).toEqual({
      limit: "2",
      action: "agent.update",
      since: "2026-11-01T00:00:00Z",
    });
    expect(requests[1]!.url.searchParams.get("before")).toBe(event(2).id);
  });

  it("exports the events as they arrive, one per NDJSON line", async () => {
    const body = `${JSON.stringify(event(1))}\n${JSON.stringify(event(2))}\n`;
    const { fetch, requests } = mockFetch(
      () => new Response(body, { status: 200, headers: { "content-type": "application/x-ndjson" } }),
    );
    const events = [];
    for await (const e of clientWith(fetch).auditEvents.export({ actorType: "key" })) events.push(e);
    expect(events).toEqual([event(1), event(2)]);
    expect(requests[0]!.url.pathname).toBe("/v1/audit-events/export");
    expect(requests[0]!.url.searchParams.get("actorType")).toBe("key");
  });
});
