import { describe, expect, it } from "vitest";
import type { AgentRun } from "../src/index.js";
import { AGENT_ID, clientWith, json, mockFetch } from "./helpers.js";

function run(id: string, status: AgentRun["status"]): AgentRun {
  return {
    id,
    messageId: id,
    status,
    background: true,
    userId: null,
    roomId: null,
    createdAt: "2026-11-20T09:30:00.000Z",
    endedAt: null,
    error: null,
    takeovers: 0,
  };
}

describe("an agent's runs", () => {
  it("lists them by status, page after page before the last id", async () => {
    const [a, b, c] = [
      "msg_01JCCCCCCCCCCCCCCCCCCCCCCC",
      "msg_01JBBBBBBBBBBBBBBBBBBBBBBB",
      "msg_01JAAAAAAAAAAAAAAAAAAAAAAA",
    ];
    const { fetch, requests } = mockFetch(
      () =>
        json(200, {
          success: true,
          data: [run(a, "pending"), run(b, "pending")],
          pagination: { limit: 2, hasMore: true },
        }),
      () => json(200, { success: true, data: [run(c, "pending")], pagination: { limit: 2, hasMore: false } }),
    );
    const listed: string[] = [];
    for await (const found of clientWith(fetch).agents.runs.list(AGENT_ID, { status: "pending", limit: 2 })) {
      listed.push(found.messageId);
    }
    expect(listed).toEqual([a, b, c]);
    expect(requests[0]!.method).toBe("GET");
    expect(requests[0]!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/runs`);
    expect(requests[0]!.url.searchParams.get("status")).toBe("pending");
    expect(requests[1]!.url.searchParams.get("before")).toBe(b);
  });

  it("cancels them all with one POST, with an Idempotency-Key, and answers how many", async () => {
    const { fetch, requests } = mockFetch(() => json(200, { success: true, data: { cancelled: 3 } }));
    expect(await clientWith(fetch).agents.runs.cancel(AGENT_ID)).toEqual({ cancelled: 3 });
    expect(requests[0]!.method).toBe("POST");
    expect(requests[0]!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/runs/cancel`);
    expect(requests[0]!.headers.get("idempotency-key")).toMatch(/.+/);
  });
});
