import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId } from "@agentry/core";
import type { PublicEvent } from "@agentry/events";
import { type Agent, AgentStatus, HistoryOrder, TurnRole } from "@agentry/proto";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentDirectory } from "../src/index.js";
import { openPostgresConversationStore } from "../src/store/postgres.js";
import { openSqliteConversationStore } from "../src/store/sqlite.js";
import type { ConversationStore, ScheduleRecord } from "../src/store/types.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

/**
 * The agents the registry would answer with at fire time, after `delayMs` (a registry call's time: it widens the
 * window between a process reading a due schedule and claiming its fire, where another process may read it too).
 */
function directory(agents: Agent[], delayMs = 0): AgentDirectory {
  const known = new Map(agents.map((a) => [a.id, a]));
  return {
    async getAgent(accountId, agentId) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const found = known.get(agentId);
      return found && found.accountId === accountId ? found : null;
    },
  };
}

/** The `context.schedule.firedAt` of each model request the fakes of these services received. */
function firesSeen(...services: Harness[]): string[] {
  const seen: string[] = [];
  for (const h of services) {
    for (const request of h.openai.requests) {
      const text = JSON.stringify(request.body);
      const match = /\\"schedule\\":\{\\"id\\":\\"(sch_[0-9A-Z]+)\\",\\"firedAt\\":\\"([^"\\]+)\\"/.exec(
        text,
      );
      if (match) seen.push(match[2]!);
    }
  }
  return seen.sort();
}

async function until<T>(what: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("schedule RPCs", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it("creates, reads, lists by cursor, updates and deletes a schedule", async () => {
    const a = agent();
    const { schedule } = await h.client.createSchedule({
      accountId: ACCOUNT,
      agentId: a.id,
      cron: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      text: "Morning summary, please.",
      userId: "ops",
      enabled: true,
    });
    expect(schedule!.id).toMatch(/^sch_[0-9A-Z]{26}$/);
    expect(schedule!.nextFireTimes).toHaveLength(5);
    const times = schedule!.nextFireTimes.map((t) => timestampDate(t));
    for (const time of times) {
      // 09:00 in Berlin: 08:00 UTC in winter, 07:00 in summer; a weekday.
      expect(time.getUTCMinutes()).toBe(0);
      expect([7, 8]).toContain(time.getUTCHours());
      expect([1, 2, 3, 4, 5]).toContain(time.getUTCDay());
      expect(time.getTime()).toBeGreaterThan(Date.now());
    }
    expect(times.map((t) => t.getTime())).toEqual([...times.map((t) => t.getTime())].sort((x, y) => x - y));
    expect(schedule!.lastFire).toBeUndefined();
    expect(schedule!.skippedFires).toBe(0n);

    const got = await h.client.getSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule!.id });
    expect(got.schedule).toEqual(schedule);

    const ids = [schedule!.id];
    for (let i = 0; i < 2; i += 1) {
      const more = await h.client.createSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        cron: "*/15 * * * *",
        timezone: "UTC",
        text: `check ${i}`,
        enabled: i === 0,
      });
      ids.push(more.schedule!.id);
    }
    const first = await h.client.listSchedules({ accountId: ACCOUNT, agentId: a.id, page: { limit: 2 } });
    expect(first.schedules.map((s) => s.id)).toEqual([ids[2], ids[1]]);
    expect(first.hasMore).toBe(true);
    const second = await h.client.listSchedules({
      accountId: ACCOUNT,
      agentId: a.id,
      page: { limit: 2, before: ids[1]! },
    });
    expect(second.schedules.map((s) => s.id)).toEqual([ids[0]]);
    expect(second.hasMore).toBe(false);
    const asc = await h.client.listSchedules({
      accountId: ACCOUNT,
      agentId: a.id,
      page: { order: HistoryOrder.ASC },
    });
    expect(asc.schedules.map((s) => s.id)).toEqual(ids);
    expect(asc.schedules[2]!.nextFireTimes).toEqual([]);
    const foreign = await failure(
      h.client.listSchedules({ accountId: ACCOUNT, agentId: agent().id, page: { before: ids[0]! } }),
    );
    expect(foreign.code).toBe("INVALID_REQUEST");

    const off = await h.client.updateSchedule({
      accountId: ACCOUNT,
      agentId: a.id,
      scheduleId: schedule!.id,
      enabled: false,
      clearUserId: true,
      text: "Evening summary.",
    });
    expect(off.schedule!.enabled).toBe(false);
    expect(off.schedule!.nextFireTimes).toEqual([]);
    expect(off.schedule!.userId).toBeUndefined();
    expect(off.schedule!.text).toBe("Evening summary.");
    expect(off.schedule!.cron).toBe("0 9 * * 1-5");
    const on = await h.client.updateSchedule({
      accountId: ACCOUNT,
      agentId: a.id,
      scheduleId: schedule!.id,
      enabled: true,
      cron: "30 18 * * *",
      timezone: "America/New_York",
    });
    const next = timestampDate(on.schedule!.nextFireTimes[0]!);
    expect(next.getUTCMinutes()).toBe(30);
    expect([22, 23]).toContain(next.getUTCHours());

    await h.client.deleteSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule!.id });
    const gone = await failure(
      h.client.getSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule!.id }),
    );
    expect(gone.code).toBe("SCHEDULE_NOT_FOUND");
    const again = await failure(
      h.client.deleteSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule!.id }),
    );
    expect(again.code).toBe("SCHEDULE_NOT_FOUND");
    const patchGone = await failure(
      h.client.updateSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule!.id, text: "x" }),
    );
    expect(patchGone.code).toBe("SCHEDULE_NOT_FOUND");
    // Another agent's schedule is none of this one's.
    const other = await failure(
      h.client.getSchedule({ accountId: ACCOUNT, agentId: agent().id, scheduleId: ids[1]! }),
    );
    expect(other.code).toBe("SCHEDULE_NOT_FOUND");
  });

  it("refuses a bad expression or an unknown time zone, naming the field and what a valid value is", async () => {
    const a = agent();
    const base = { accountId: ACCOUNT, agentId: a.id, text: "hi", enabled: true };
    for (const cron of ["61 * * * *", "every day", "* * *", ""]) {
      const bad = await failure(h.client.createSchedule({ ...base, cron, timezone: "UTC" }));
      expect(bad.code).toBe("INVALID_REQUEST");
      expect(bad.details).toEqual([{ field: "cron", issue: expect.stringContaining("0 9 * * 1-5") }]);
    }
    const zone = await failure(
      h.client.createSchedule({ ...base, cron: "* * * * *", timezone: "Mars/Olympus" }),
    );
    expect(zone.code).toBe("INVALID_REQUEST");
    expect(zone.details).toEqual([{ field: "timezone", issue: expect.stringContaining("Europe/Berlin") }]);
    const text = await failure(
      h.client.createSchedule({ ...base, cron: "* * * * *", timezone: "UTC", text: " " }),
    );
    expect(text.details?.[0]?.field).toBe("text");
    const { schedule } = await h.client.createSchedule({ ...base, cron: "* * * * *", timezone: "UTC" });
    const patch = await failure(
      h.client.updateSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        scheduleId: schedule!.id,
        timezone: "Nowhere",
      }),
    );
    expect(patch.details?.[0]?.field).toBe("timezone");
    const kept = await h.client.getSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule!.id });
    expect(kept.schedule!.timezone).toBe("UTC");
  });

  it("deleting the agent removes its schedules", async () => {
    const a = agent();
    const { schedule } = await h.client.createSchedule({
      accountId: ACCOUNT,
      agentId: a.id,
      cron: "* * * * *",
      timezone: "UTC",
      text: "tick",
      enabled: true,
    });
    await h.client.purgeAgent({ accountId: ACCOUNT, agentId: a.id });
    const gone = await failure(
      h.client.getSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule!.id }),
    );
    expect(gone.code).toBe("SCHEDULE_NOT_FOUND");
    const list = await h.client.listSchedules({ accountId: ACCOUNT, agentId: a.id });
    expect(list.schedules).toEqual([]);
    expect(
      await h.conversation.store.schedules.dueSchedules(new Date(Date.now() + 3_600_000).toISOString(), 100),
    ).not.toContainEqual(expect.objectContaining({ id: schedule!.id }));
  });
});

/** Two conversation services on one store: each fire runs once, whichever claims it. */
function firesOnceAcrossProcesses(
  kind: string,
  open: () => Promise<{ stores: [ConversationStore, ConversationStore]; done(): Promise<void> }>,
) {
  it(`${kind}: a schedule on two services fires once per tick, three ticks running`, async () => {
    const a = agent();
    const agents = directory([a], 100);
    const { stores, done } = await open();
    const [one, two] = await Promise.all(
      stores.map((store) => startHarness({ store, agents, scheduleScanMs: 150 })),
    );
    try {
      const { schedule } = await one!.client.createSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        cron: "* * * * * *",
        timezone: "UTC",
        text: "tick",
        userId: "cron",
        enabled: true,
      });
      // Three ticks fired (each a second apart), then no more.
      await until(() => (firesSeen(one!, two!).length >= 3 ? true : undefined));
      await one!.client.updateSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        scheduleId: schedule!.id,
        enabled: false,
      });
      await new Promise((resolve) => setTimeout(resolve, 400));
      const seen = firesSeen(one!, two!);
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect(new Set(seen).size).toBe(seen.length);
      // One fire per second: every second from the first to the last either ran once or, when a scan came more
      // than a tick late (a loaded machine), was skipped and counted; none ran twice.
      const seconds = seen.map((at) => Date.parse(at) / 1000);
      for (const s of seconds) expect(Number.isInteger(s)).toBe(true);
      // Each fire's message completes once: one reply per fire stored.
      const replies = await until(async () => {
        const { messages } = await one!.client.listMessages({
          accountId: ACCOUNT,
          agentId: a.id,
          userId: "cron",
          page: { limit: 100 },
        });
        const assistant = messages.filter((m) => m.role === TurnRole.ASSISTANT);
        return assistant.length === seen.length ? assistant : undefined;
      });
      expect(replies).toHaveLength(seen.length);
      const read = await two!.client.getSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        scheduleId: schedule!.id,
      });
      expect(read.schedule!.lastFire!.status).toBe("completed");
      expect(timestampDate(read.schedule!.lastFire!.scheduledTime!).toISOString()).toBe(seen.at(-1));
      const span = seconds.at(-1)! - seconds[0]! + 1;
      const firstSkips = await one!.client.getSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        scheduleId: schedule!.id,
      });
      expect(seen.length + Number(firstSkips.schedule!.skippedFires)).toBeGreaterThanOrEqual(span);
      expect(seen.length).toBeLessThanOrEqual(span);
    } finally {
      await Promise.all([one!.close(), two!.close()]);
      await done();
    }
  }, 30_000);
}

describe("schedules firing", () => {
  firesOnceAcrossProcesses("sqlite", async () => {
    const dir = mkdtempSync(join(tmpdir(), "schedules-"));
    return {
      stores: [openSqliteConversationStore({ dataDir: dir }), openSqliteConversationStore({ dataDir: dir })],
      async done() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  describe("on postgres", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await openTestDatabase();
    }, 60_000);
    afterAll(() => db?.close());
    firesOnceAcrossProcesses("postgres", async () => {
      const schema = `schedules_${Date.now()}`;
      const first = await openPostgresConversationStore({ connectionString: db.url, schema });
      const second = await openPostgresConversationStore({ connectionString: db.url, schema });
      return { stores: [first, second], async done() {} };
    });
  });

  it("a disabled schedule never fires", async () => {
    const a = agent();
    const h = await startHarness({ agents: directory([a]), scheduleScanMs: 100 });
    try {
      const { schedule } = await h.client.createSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        cron: "* * * * * *",
        timezone: "UTC",
        text: "tick",
        enabled: false,
      });
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(h.openai.requests).toHaveLength(0);
      const read = await h.client.getSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        scheduleId: schedule!.id,
      });
      expect(read.schedule!.lastFire).toBeUndefined();
      expect(read.schedule!.nextFireTimes).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it("an inactive agent's fire sends nothing and says so", async () => {
    const a = agent();
    a.status = AgentStatus.INACTIVE;
    const h = await startHarness({ agents: directory([a]), scheduleScanMs: 100 });
    try {
      const { schedule } = await h.client.createSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        cron: "* * * * * *",
        timezone: "UTC",
        text: "tick",
        enabled: true,
      });
      const fire = await until(async () => {
        const read = await h.client.getSchedule({
          accountId: ACCOUNT,
          agentId: a.id,
          scheduleId: schedule!.id,
        });
        return read.schedule!.lastFire;
      });
      expect(fire.status).toBe("skipped");
      expect(fire.errorCode).toBe("AGENT_INACTIVE");
      expect(fire.messageId).toBeUndefined();
      expect(h.openai.requests).toHaveLength(0);
    } finally {
      await h.close();
    }
  });
});

describe("fires missed while every service was down", () => {
  /** A daily schedule whose fire time was `lateMs` ago, stored while no service ran. */
  function missed(agentId: string, lateMs: number): ScheduleRecord {
    const due = new Date(Date.now() - lateMs);
    due.setUTCSeconds(0, 0);
    const created = new Date(due.getTime() - 86_400_000).toISOString();
    return {
      id: newId("schedule"),
      accountId: ACCOUNT,
      agentId,
      cron: `${due.getUTCMinutes()} ${due.getUTCHours()} * * *`,
      timezone: "UTC",
      text: "daily report",
      userId: "cron",
      roomId: null,
      enabled: true,
      nextFireAt: due.toISOString(),
      skippedFires: 0,
      lastFire: null,
      createdAt: created,
      updatedAt: created,
    };
  }

  it("runs once at start a fire less than an hour late, skips and counts one later than that", async () => {
    const dir = mkdtempSync(join(tmpdir(), "schedules-missed-"));
    const a = agent();
    const recent = missed(a.id, 30 * 60_000);
    const old = missed(a.id, 2 * 60 * 60_000);
    const offline = openSqliteConversationStore({ dataDir: dir });
    await offline.schedules.createSchedule(recent);
    await offline.schedules.createSchedule(old);
    await offline.close();

    const published: PublicEvent[] = [];
    const h = await startHarness({
      dataDir: dir,
      agents: directory([a]),
      scheduleScanMs: 100,
      publish: async (events) => {
        published.push(...events);
      },
    });
    try {
      const fired = await until(async () => {
        const read = await h.client.getSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: recent.id });
        return read.schedule!.lastFire?.status === "completed" ? read.schedule! : undefined;
      });
      expect(timestampDate(fired.lastFire!.scheduledTime!).toISOString()).toBe(recent.nextFireAt);
      expect(fired.skippedFires).toBe(0n);
      // Tomorrow's fire is the next.
      expect(timestampDate(fired.nextFireTimes[0]!).getTime()).toBe(
        Date.parse(recent.nextFireAt!) + 86_400_000,
      );
      const messageId = fired.lastFire!.messageId!;
      const message = await h.client.getMessage({ accountId: ACCOUNT, agentId: a.id, messageId });
      expect(message.background?.reply?.text).toBe("Echo: daily report");
      // Its result reaches webhooks as any background message's.
      await until(async () => {
        h.conversation.relay!.kick();
        await h.conversation.relay!.settle();
        return published.some((e) => e.type === "message.completed" && e.data.id === messageId)
          ? true
          : undefined;
      });

      const skipped = await h.client.getSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: old.id });
      expect(skipped.schedule!.lastFire).toBeUndefined();
      expect(skipped.schedule!.skippedFires).toBe(1n);
      expect(timestampDate(skipped.schedule!.nextFireTimes[0]!).getTime()).toBe(
        Date.parse(old.nextFireAt!) + 86_400_000,
      );
      // Only the recent one reached the model, once, however many scans ran meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(firesSeen(h)).toEqual([recent.nextFireAt]);
    } finally {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a fire whose claimer stopped before sending its message", () => {
  /** A schedule whose fire `lateMs` ago was claimed by a process that stopped before it sent it; its ids. */
  async function claimedAndLeft(store: ConversationStore, agentId: string, lateMs: number) {
    const due = new Date(Date.now() - lateMs).toISOString();
    const created = new Date(Date.now() - 86_400_000).toISOString();
    const schedule = await store.schedules.createSchedule({
      id: newId("schedule"),
      accountId: ACCOUNT,
      agentId,
      cron: "0 0 1 1 *",
      timezone: "UTC",
      text: "yearly report",
      userId: "cron",
      roomId: null,
      enabled: true,
      nextFireAt: due,
      skippedFires: 0,
      lastFire: null,
      createdAt: created,
      updatedAt: created,
    });
    const ids = { message: newId("message"), reply: newId("message") };
    const claimed = await store.schedules.claimFire({
      scheduleId: schedule.id,
      scheduledAt: due,
      nextFireAt: "2099-01-01T00:00:00.000Z",
      skipped: 0,
      fire: {
        scheduledAt: due,
        firedAt: due,
        messageId: ids.reply,
        userMessageId: ids.message,
        // Its claimer's time to start it ran out a moment ago.
        startBy: new Date(Date.now() - 1).toISOString(),
        error: null,
      },
    });
    expect(claimed).toBe(true);
    return { schedule, ids, due };
  }

  it("is sent once by one of two services sharing the store, under the ids its claim recorded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "schedules-unstarted-"));
    const a = agent();
    const offline = openSqliteConversationStore({ dataDir: dir });
    const { schedule, ids, due } = await claimedAndLeft(offline, a.id, 5_000);
    await offline.close();
    const published: PublicEvent[] = [];
    const [one, two] = await Promise.all(
      [0, 1].map(() =>
        startHarness({
          store: openSqliteConversationStore({ dataDir: dir }),
          agents: directory([a], 50),
          scheduleScanMs: 100,
          publish: async (events) => {
            published.push(...events);
          },
        }),
      ),
    );
    try {
      const fired = await until(async () => {
        const read = await one!.client.getSchedule({
          accountId: ACCOUNT,
          agentId: a.id,
          scheduleId: schedule.id,
        });
        return read.schedule!.lastFire?.status === "completed" ? read.schedule!.lastFire : undefined;
      });
      expect(fired.messageId).toBe(ids.reply);
      // Read from the other service, from the store.
      const message = await until(async () => {
        const read = await two!.client.getMessage({
          accountId: ACCOUNT,
          agentId: a.id,
          messageId: ids.reply,
        });
        return read.background?.reply ? read : undefined;
      });
      expect(message.background?.reply?.text).toBe("Echo: yearly report");
      // Several scans of both services later: it reached the model once, and was stored once.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(firesSeen(one!, two!)).toEqual([due]);
      const { messages } = await one!.client.listMessages({
        accountId: ACCOUNT,
        agentId: a.id,
        userId: "cron",
        page: { limit: 10, order: HistoryOrder.ASC },
      });
      expect(messages.map((m) => m.id)).toEqual([ids.message, ids.reply]);
      expect(
        await one!.conversation.store.schedules.unstartedFires(
          new Date(Date.now() + 3_600_000).toISOString(),
          10,
        ),
      ).toEqual([]);
      await until(async () => {
        for (const h of [one!, two!]) {
          h.conversation.relay!.kick();
          await h.conversation.relay!.settle();
        }
        return published.some((e) => e.type === "message.completed" && e.data.id === ids.reply)
          ? true
          : undefined;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(published.filter((e) => e.type === "message.completed" && e.data.id === ids.reply)).toHaveLength(
        1,
      );
    } finally {
      await Promise.all([one!.close(), two!.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it("is not sent again when its claimer had sent it; is not sent, and says why, when an hour late", async () => {
    const a = agent();
    const h = await startHarness({ agents: directory([a]), scheduleScanMs: 100 });
    try {
      const store = h.conversation.store;
      // The claimer recorded its message, then stopped before noting it sent: the message's run exists, held by a
      // process that is generating it.
      const sent = await claimedAndLeft(store, a.id, 5_000);
      const now = Date.now();
      await store.startRun({
        id: sent.ids.reply,
        accountId: ACCOUNT,
        agentId: a.id,
        userId: "cron",
        roomId: null,
        background: true,
        logged: true,
        idempotencyKey: null,
        status: "pending",
        errorCode: null,
        errorMessage: null,
        result: null,
        createdAt: new Date(now).toISOString(),
        deadlineAt: new Date(now + 600_000).toISOString(),
        endedAt: null,
        expiresAt: null,
        keptUntil: null,
        lease: { holder: "another process", expiresAt: new Date(now + 600_000).toISOString() },
      });
      const late = await claimedAndLeft(store, a.id, 61 * 60_000);
      await until(async () =>
        (await store.schedules.unstartedFires(new Date(Date.now() + 3_600_000).toISOString(), 10)).length ===
        0
          ? true
          : undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Neither fire reached the model: one was its claimer's to generate, the other too late.
      expect(h.openai.requests).toHaveLength(0);
      const pending = await h.client.getSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        scheduleId: sent.schedule.id,
      });
      expect(pending.schedule!.lastFire).toMatchObject({ messageId: sent.ids.reply, status: "pending" });
      const skipped = await h.client.getSchedule({
        accountId: ACCOUNT,
        agentId: a.id,
        scheduleId: late.schedule.id,
      });
      expect(skipped.schedule!.lastFire).toMatchObject({ messageId: late.ids.reply, status: "failed" });
      expect(skipped.schedule!.lastFire!.errorCode).toBe("AGENT_UNAVAILABLE");
      expect(skipped.schedule!.lastFire!.errorMessage).toContain("1 h");
    } finally {
      await h.close();
    }
  }, 30_000);
});

/**
 * A store whose first `joinConversation` waits until `release()`: its process stalls between claiming a fire and
 * taking the message's place in line, as a process paused past its lease would. `left` resolves once it has left
 * the line after that.
 */
function stalledOnce(store: ConversationStore) {
  let release!: () => void;
  let reached!: () => void;
  let leftLine!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const stalled = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const left = new Promise<void>((resolve) => {
    leftLine = resolve;
  });
  let first = true;
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === "joinConversation") {
        return async (...args: Parameters<ConversationStore["joinConversation"]>) => {
          if (first) {
            first = false;
            reached();
            await gate;
          }
          return target.joinConversation(...args);
        };
      }
      if (prop === "leaveConversation") {
        return async (...args: Parameters<ConversationStore["leaveConversation"]>) => {
          await target.leaveConversation(...args);
          leftLine();
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, stalled, release, left };
}

function claimerStalledPastItsTime(
  kind: string,
  open: () => Promise<{ stores: [ConversationStore, ConversationStore]; done(): Promise<void> }>,
) {
  const slowReply = Array.from({ length: 30 }, (_, i) => `w${i} `);
  it.each(["another process", "its own next scan"])(
    `${kind}: a claimer back from a stall leaves the conversation's line to the sender of its fire (%s)`,
    async (by) => {
      const a = agent();
      const { stores, done } = await open();
      const now = Date.now();
      const schedule = await stores[1].schedules.createSchedule({
        id: newId("schedule"),
        accountId: ACCOUNT,
        agentId: a.id,
        cron: "0 0 1 1 *",
        timezone: "UTC",
        text: "yearly report",
        userId: "cron",
        roomId: null,
        enabled: true,
        nextFireAt: new Date(now - 1_000).toISOString(),
        skippedFires: 0,
        lastFire: null,
        createdAt: new Date(now - 86_400_000).toISOString(),
        updatedAt: new Date(now - 86_400_000).toISOString(),
      });
      // Long enough that no place or lease expires on a loaded machine; the fire is taken over once it has.
      const runLeases = { leaseMs: 2_000, renewMs: 100, scanMs: 100 };
      const stall = stalledOnce(stores[0]);
      const byItself = by === "its own next scan";
      // Its scan at start stalls; without scans of its own after it, the fire is taken over by the other process.
      const claimer = await startHarness({
        store: stall.store,
        agents: directory([a]),
        scheduleScanMs: byItself ? 100 : 600_000,
        runLeases,
      });
      let taker: Harness | undefined;
      try {
        // The claimer claimed the fire and stalls before its message takes its place in line.
        await stall.stalled;
        const { lastFire } = (
          await claimer.client.getSchedule({ accountId: ACCOUNT, agentId: a.id, scheduleId: schedule.id })
        ).schedule!;
        const reply = lastFire!.messageId!;
        if (!byItself) {
          taker = await startHarness({
            store: stores[1],
            agents: directory([a]),
            scheduleScanMs: 100,
            runLeases,
          });
        }
        const sender = taker ?? claimer;
        // Its time to start it past, the fire is sent again under its ids: a reply that takes a while.
        sender.openai.answer({ chunks: slowReply, chunkDelayMs: 100 });
        await until(() => (sender.openai.requests.length === 1 ? true : undefined));
        expect(await stores[1].getRun(ACCOUNT, a.id, reply)).toMatchObject({ status: "pending" });

        // Back, the claimer finds the message recorded by the sender, does not send it, and leaves the line.
        stall.release();
        await stall.left;
        // The next message of the conversation, on the claimer, waits for the fire's reply to end: its place in
        // line is still the sender's.
        claimer.openai.reply("next");
        const next = await claimer.client.startMessage({
          accountId: ACCOUNT,
          agent: a,
          text: "and now?",
          userId: "cron",
        });
        const asked = byItself ? 2 : 1;
        await until(() => (claimer.openai.requests.length === asked ? true : undefined));
        const fire = await claimer.client.getMessage({ accountId: ACCOUNT, agentId: a.id, messageId: reply });
        expect(fire.background?.reply?.text).toBe(slowReply.join(""));
        expect(JSON.stringify(claimer.openai.requests[asked - 1]!.body)).toContain("w29");
        await until(async () => {
          const read = await claimer.client.getMessage({
            accountId: ACCOUNT,
            agentId: a.id,
            messageId: next.messageId,
          });
          return read.background?.reply ? true : undefined;
        });
        // The fire reached a model once.
        expect(firesSeen(claimer, ...(taker ? [taker] : []))).toHaveLength(1);
      } finally {
        stall.release();
        await Promise.all([claimer.close(), taker?.close()]);
        await done();
      }
    },
    30_000,
  );
}

describe("a fire whose claimer stalled past its time to start it", () => {
  claimerStalledPastItsTime("sqlite", async () => {
    const dir = mkdtempSync(join(tmpdir(), "schedules-stalled-"));
    return {
      stores: [openSqliteConversationStore({ dataDir: dir }), openSqliteConversationStore({ dataDir: dir })],
      async done() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  describe("on postgres", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await openTestDatabase();
    }, 60_000);
    afterAll(() => db?.close());
    claimerStalledPastItsTime("postgres", async () => {
      const schema = `schedules_stalled_${Date.now()}`;
      const first = await openPostgresConversationStore({ connectionString: db.url, schema });
      const second = await openPostgresConversationStore({ connectionString: db.url, schema });
      return { stores: [first, second], async done() {} };
    });
  });
});
