import { describe, expect, it } from "vitest";
import { APIError, type Budget, NotFoundError } from "../src/index.js";
import { AGENT_ID } from "./helpers.js";
import { fail, localServer, ok } from "./server.js";

const BUDGET_ID = "bdg_01JCZ3S8Q5M2T7V9X0B4D6F8H1";
const budget: Budget = {
  id: BUDGET_ID,
  agentId: AGENT_ID,
  apiKeyId: null,
  unit: "usd",
  period: "month",
  limit: 25,
  spend: {
    spent: 5,
    remaining: 20,
    percent: 20,
    periodStart: "2026-11-01T00:00:00.000Z",
    resetsAt: "2026-12-01T00:00:00.000Z",
  },
  createdAt: "2026-11-20T09:30:00.000Z",
  updatedAt: "2026-11-20T09:30:00.000Z",
};

describe("budgets", () => {
  it("creates, lists, reads, updates and deletes budgets at /v1/budgets", async () => {
    const server = await localServer(
      ok(budget, 201),
      ok([budget]),
      ok(budget),
      ok({ ...budget, limit: 30 }),
      ok({ id: BUDGET_ID, deleted: true }),
    );
    const client = server.client();
    expect(
      await client.budgets.create({ unit: "usd", limit: 25, period: "month", agentId: AGENT_ID }),
    ).toEqual(budget);
    expect(await client.budgets.list()).toEqual([budget]);
    expect(await client.budgets.get(BUDGET_ID)).toEqual(budget);
    expect((await client.budgets.update(BUDGET_ID, { limit: 30 })).limit).toBe(30);
    expect(await client.budgets.delete(BUDGET_ID)).toEqual({ id: BUDGET_ID, deleted: true });
    expect(server.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      "POST /v1/budgets",
      "GET /v1/budgets",
      `GET /v1/budgets/${BUDGET_ID}`,
      `PATCH /v1/budgets/${BUDGET_ID}`,
      `DELETE /v1/budgets/${BUDGET_ID}`,
    ]);
    expect(server.requests[0]!.body).toEqual({ unit: "usd", limit: 25, period: "month", agentId: AGENT_ID });
    expect(server.requests[3]!.body).toEqual({ limit: 30 });
  });

  it("raises a 402 as an APIError with code BUDGET_EXCEEDED, not retried, and a missing budget as NotFoundError", async () => {
    const server = await localServer(fail(402, "BUDGET_EXCEEDED"), fail(404, "BUDGET_NOT_FOUND"));
    const client = server.client();
    const refused = await client.agents.messages.send(AGENT_ID, { text: "hi" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(APIError);
    expect(refused).toMatchObject({ status: 402, code: "BUDGET_EXCEEDED" });
    const missing = await client.budgets.get(BUDGET_ID).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(2);
  });
});
