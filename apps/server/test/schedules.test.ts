import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";
import { type Answer, expectError, MISSING, newAgent, type Page, query } from "./history-helpers.js";

interface ScheduleJson {
  id: string;
  agentId: string;
  cron: string;
  timezone: string;
  text: string;
  userId: string | null;
  roomId: string | null;
  enabled: boolean;
  nextFireAt: string | null;
  nextFireTimes: string[];
  skippedFires: number;
  lastFire: {
    scheduledAt: string;
    firedAt: string;
    messageId: string | null;
    status: string;
    error: { code: string; message: string } | null;
  } | null;
  createdAt: string;
  updatedAt: string;
}
type ScheduleAnswer = Answer<{ success: boolean; data: ScheduleJson }>;

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    SCHEDULE_SCAN_MS: "200",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
});

const base = (agentId: string) => `/v1/agents/${agentId}/schedules`;
const create = (agentId: string, body: unknown, key = tenant.key) =>
  h.request("POST", base(agentId), { key, body }) as Promise<ScheduleAnswer>;
const get = (agentId: string, id: string, key = tenant.key) =>
  h.request("GET", `${base(agentId)}/${id}`, { key }) as Promise<ScheduleAnswer>;
const patch = (agentId: string, id: string, body: unknown, key = tenant.key) =>
  h.request("PATCH", `${base(agentId)}/${id}`, { key, body }) as Promise<ScheduleAnswer>;
const remove = (agentId: string, id: string, key = tenant.key) =>
  h.request("DELETE", `${base(agentId)}/${id}`, { key }) as Promise<
    Answer<{ success: boolean; data: { id: string; deleted: true } }>
  >;
const list = (agentId: string, params: Record<string, string> = {}, key = tenant.key) =>
  h.request("GET", `${base(agentId)}${query(params)}`, { key }) as Promise<Answer<Page<ScheduleJson>>>;

async function until<T>(what: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("/v1/agents/{agentId}/schedules", () => {
  it("creates, reads, lists, updates and deletes a schedule", async () => {
    const agentId = await newAgent(h, tenant.key);
    const created = await create(agentId, {
      cron: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      text: "Post the morning summary.",
      userId: "ops",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const schedule = created.body.data;
    expect(schedule).toEqual({
      id: expect.stringMatching(/^sch_[0-9A-HJKMNP-TV-Z]{26}$/),
      agentId,
      cron: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      text: "Post the morning summary.",
      userId: "ops",
      roomId: null,
      enabled: true,
      nextFireAt: schedule.nextFireTimes[0],
      nextFireTimes: expect.any(Array),
      skippedFires: 0,
      lastFire: null,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    expect(schedule.nextFireTimes).toHaveLength(5);
    for (const at of schedule.nextFireTimes) {
      const time = new Date(at);
      expect([7, 8]).toContain(time.getUTCHours());
      expect([1, 2, 3, 4, 5]).toContain(time.getUTCDay());
    }

    expect((await get(agentId, schedule.id)).body.data).toEqual(schedule);
    const second = (
      await create(agentId, { cron: "*/10 * * * *", timezone: "UTC", text: "poll", enabled: false })
    ).body.data;
    expect(second.nextFireAt).toBeNull();
    expect(second.nextFireTimes).toEqual([]);
    const page = await list(agentId, { limit: "1" });
    expect(page.status).toBe(200);
    expect(page.body.data.map((s) => s.id)).toEqual([second.id]);
    expect(page.body.pagination).toEqual({ limit: 1, hasMore: true });
    const next = await list(agentId, { limit: "1", before: second.id });
    expect(next.body.data.map((s) => s.id)).toEqual([schedule.id]);
    expect(next.body.pagination.hasMore).toBe(false);

    const changed = await patch(agentId, schedule.id, {
      enabled: false,
      userId: null,
      text: "Evening summary.",
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data).toMatchObject({
      enabled: false,
      userId: null,
      text: "Evening summary.",
      nextFireAt: null,
    });
    const again = await patch(agentId, schedule.id, { enabled: true, cron: "30 18 * * *", timezone: "UTC" });
    expect(again.body.data.nextFireAt).toMatch(/T18:30:00\.000Z$/);

    const deleted = await remove(agentId, schedule.id);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: schedule.id, deleted: true });
    expectError(await get(agentId, schedule.id), 404, "SCHEDULE_NOT_FOUND");
    expectError(await remove(agentId, schedule.id), 404, "SCHEDULE_NOT_FOUND");
    expectError(await patch(agentId, schedule.id, { text: "x" }), 404, "SCHEDULE_NOT_FOUND");
    expectError(await get(agentId, "sch_nope"), 404, "SCHEDULE_NOT_FOUND");
  });

  it("answers a bad expression, time zone or body with 400 naming the field and what is valid", async () => {
    const agentId = await newAgent(h, tenant.key);
    const cron = await create(agentId, { cron: "61 * * * *", timezone: "UTC", text: "x" });
    expectError(cron, 400, "INVALID_REQUEST", "cron");
    expect(cron.body.error.message).toContain('"0 9 * * 1-5"');
    const zone = await create(agentId, { cron: "0 9 * * *", timezone: "Europe/Atlantis", text: "x" });
    expectError(zone, 400, "INVALID_REQUEST", "timezone");
    expect(zone.body.error.message).toContain("IANA");
    expectError(
      await create(agentId, { cron: "0 9 * * *", timezone: "UTC" }),
      400,
      "INVALID_REQUEST",
      "text",
    );
    expectError(
      await create(agentId, { cron: "0 9 * * *", timezone: "UTC", text: "x", every: "day" }),
      400,
      "INVALID_REQUEST",
    );
    expectError(
      await list(agentId, { before: "sch_01JAAAAAAAAAAAAAAAAAAAAAAA" }),
      400,
      "INVALID_REQUEST",
      "before",
    );
    const { id } = (await create(agentId, { cron: "0 9 * * *", timezone: "UTC", text: "x" })).body.data;
    expectError(await patch(agentId, id, { cron: "soon" }), 400, "INVALID_REQUEST", "cron");
  });

  it("takes agents:write, and answers another account's agent or schedule as missing", async () => {
    const agentId = await newAgent(h, tenant.key);
    const { id } = (await create(agentId, { cron: "0 9 * * *", timezone: "UTC", text: "x" })).body.data;
    const reader = await tenant.keyWith(["agents:read", "messages:send"]);
    expectError(await list(agentId, {}, reader.key), 403, "FORBIDDEN");
    expectError(await get(agentId, id, reader.key), 403, "FORBIDDEN");
    expectError(
      await create(agentId, { cron: "0 9 * * *", timezone: "UTC", text: "x" }, reader.key),
      403,
      "FORBIDDEN",
    );
    expectError(await remove(agentId, id, reader.key), 403, "FORBIDDEN");
    const writer = await tenant.keyWith(["agents:write"]);
    expect((await get(agentId, id, writer.key)).status).toBe(200);
    const noKey = await h.request("GET", base(agentId), { key: null });
    expect(noKey.status).toBe(401);
    const other = await h.tenant();
    expectError(await list(agentId, {}, other.key), 404, "AGENT_NOT_FOUND");
    expectError(await get(agentId, id, other.key), 404, "AGENT_NOT_FOUND");
    const otherAgent = await newAgent(h, other.key);
    expectError(await get(otherAgent, id, other.key), 404, "SCHEDULE_NOT_FOUND");
    expectError(await get(MISSING.agent, id), 404, "AGENT_NOT_FOUND");
  });

  it("fires as a background message with context.schedule, shows its outcome, and goes with its agent", async () => {
    const agentId = await newAgent(h, tenant.key);
    const { id } = (
      await create(agentId, {
        cron: "* * * * * *",
        timezone: "UTC",
        text: "Report the time.",
        userId: "cron",
      })
    ).body.data;
    const fired = await until(async () => {
      const read = (await get(agentId, id)).body.data;
      return read.lastFire?.status === "completed" ? read : undefined;
    });
    await patch(agentId, id, { enabled: false });
    const messageId = fired.lastFire!.messageId!;
    const message = await h.request<{ data: { status: string; text: string; userId: string } }>(
      "GET",
      `/v1/agents/${agentId}/messages/${messageId}`,
      { key: tenant.key },
    );
    expect(message.body.data).toMatchObject({
      status: "completed",
      text: "Echo: Report the time.",
      userId: "cron",
    });
    // The fire read is the last one: an every-second schedule may have fired before it, each with its own time.
    const context = JSON.stringify(
      JSON.stringify({ schedule: { id, firedAt: fired.lastFire!.scheduledAt } }),
    );
    expect(openai.requests.some((r) => JSON.stringify(r.body).includes(context.slice(1, -1)))).toBe(true);

    const deleted = await h.request("DELETE", `/v1/agents/${agentId}`, { key: tenant.key });
    expect(deleted.status).toBe(200);
    const gone = await h.request("GET", `${base(agentId)}/${id}`, { key: tenant.key });
    expect(gone.status).toBe(404);
  }, 30_000);
});
