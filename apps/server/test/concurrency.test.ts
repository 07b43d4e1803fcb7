import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness } from "./harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe("agents quota under concurrency", () => {
  it("130 simultaneous creates against a quota of 100 leave exactly 100 agents", async () => {
    const tenant = await h.tenant({ maxAgents: 100 });
    const responses = await Promise.all(
      Array.from({ length: 130 }, (_, i) =>
        h.request<ErrorBody>("POST", "/v1/agents", { key: tenant.key, body: { name: `agent-${i}` } }),
      ),
    );
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(100);
    expect(statuses.filter((s) => s === 403)).toHaveLength(30);
    expect(
      responses
        .filter((res) => res.status === 403)
        .every((res) => res.body.error.code === "INSUFFICIENT_QUOTA"),
    ).toBe(true);
    const listed = await h.request<{ pagination: { total: number } }>("GET", "/v1/agents?limit=1", {
      key: tenant.key,
    });
    expect(listed.body.pagination.total).toBe(100);
  });
});
