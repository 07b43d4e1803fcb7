import { describe, expect, it } from "vitest";
import { BadRequestError, NotFoundError, type Schedule } from "../src/index.js";
import { AGENT_ID, apiError, clientWith, json, mockFetch } from "./helpers.js";

const SCHEDULE_ID = "sch_01JCZ3S8Q5M2T7V9X0B4D6F8H1";

function schedule(overrides: Partial<Schedule> = {}): Schedule {
  return {
    id: SCHEDULE_ID,
    agentId: AGENT_ID,
    cron: "0 9 * * 1-5",
    timezone: "Europe/Berlin",
    text: "Morning summary.",
    userId: null,
    roomId: null,
    enabled: true,
    nextFireAt: "2026-11-30T08:00:00.000Z",
    nextFireTimes: ["2026-11-30T08:00:00.000Z"],
    skippedFires: 0,
    lastFire: null,
    createdAt: "2026-11-29T09:30:00.000Z",
    updatedAt: "2026-11-29T09:30:00.000Z",
    ...overrides,
  };
}

describe("an agent's schedules", () => {
  it("creates, reads, updates and deletes one at its own path", async () => {
    const { fetch, requests } = mockFetch(
      () => json(201, { success: true, data: schedule() }),
      () => json(200, { success: true, data: schedule() }),
      () =>
        json(200, { success: true, data: schedule({ enabled: false, nextFireAt: null, nextFireTimes: [] }) }),
      () => json(200, { success: true, data: { id: SCHEDULE_ID, deleted: true } }),
    );
    const schedules = clientWith(fetch).agents.schedules;
    const created = await schedules.create(AGENT_ID, {
      cron: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      text: "Morning summary.",
    });
    expect(created.nextFireAt).toBe("2026-11-30T08:00:00.000Z");
    expect((await schedules.get(AGENT_ID, SCHEDULE_ID)).id).toBe(SCHEDULE_ID);
    expect((await schedules.update(AGENT_ID, SCHEDULE_ID, { enabled: false, userId: null })).enabled).toBe(
      false,
    );
    expect(await schedules.delete(AGENT_ID, SCHEDULE_ID)).toEqual({ id: SCHEDULE_ID, deleted: true });
    expect(requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      `POST /v1/agents/${AGENT_ID}/schedules`,
      `GET /v1/agents/${AGENT_ID}/schedules/${SCHEDULE_ID}`,
      `PATCH /v1/agents/${AGENT_ID}/schedules/${SCHEDULE_ID}`,
      `DELETE /v1/agents/${AGENT_ID}/schedules/${SCHEDULE_ID}`,
    ]);
    expect(requests[0]!.body).toEqual({
      cron: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      text: "Morning summary.",
    });
    expect(requests[2]!.body).toEqual({ enabled: false, userId: null });
  });

  it("lists them page after page before the last id", async () => {
    const other = "sch_01JAAAAAAAAAAAAAAAAAAAAAAA";
    const { fetch, requests } = mockFetch(
      () => json(200, { success: true, data: [schedule()], pagination: { limit: 1, hasMore: true } }),
      () =>
        json(200, {
          success: true,
          data: [schedule({ id: other })],
          pagination: { limit: 1, hasMore: false },
        }),
    );
    const ids: string[] = [];
    for await (const found of clientWith(fetch).agents.schedules.list(AGENT_ID, { limit: 1 }))
      ids.push(found.id);
    expect(ids).toEqual([SCHEDULE_ID, other]);
    expect(requests[1]!.url.searchParams.get("before")).toBe(SCHEDULE_ID);
  });

  it("throws the error classes of a bad time zone and an unknown schedule", async () => {
    const { fetch } = mockFetch(
      () =>
        apiError(400, "INVALID_REQUEST", {
          details: [{ field: "timezone", issue: 'must be an IANA time zone name, e.g. "Europe/Berlin"' }],
        }),
      () => apiError(404, "SCHEDULE_NOT_FOUND"),
    );
    const schedules = clientWith(fetch).agents.schedules;
    const bad = await schedules
      .create(AGENT_ID, { cron: "* * * * *", timezone: "Nowhere", text: "x" })
      .catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(BadRequestError);
    const missing = await schedules.get(AGENT_ID, SCHEDULE_ID).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).code).toBe("SCHEDULE_NOT_FOUND");
  });
});
