import { type Task, TaskState } from "@a2a-js/sdk";
import { ServerCallContext } from "@a2a-js/sdk/server";
import { startTestRedis, type TestRedis } from "@agentry/limits/testing";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisTaskStore } from "./a2a-tasks.js";

let redis: TestRedis;
const stores: RedisTaskStore[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await redis?.stop();
});

function store(): RedisTaskStore {
  const made = new RedisTaskStore({
    url: redis.url,
    keyPrefix: `test:${crypto.randomUUID()}:`,
    ttlMs: 60_000,
  });
  stores.push(made);
  return made;
}

const owner = (userName: string) => new ServerCallContext({ user: { userName, isAuthenticated: true } });

const task = (id: string, state: TaskState): Task => ({
  id,
  contextId: "ctx",
  status: { state, timestamp: new Date().toISOString(), message: undefined },
  artifacts: [],
  history: [],
  metadata: {},
});

/** Waits (up to 2 s) until the check holds, for what another connection delivers. */
async function eventually(check: () => boolean): Promise<void> {
  for (const started = Date.now(); !check() && Date.now() - started < 2_000; )
    await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("RedisTaskStore", () => {
  it("keeps tasks per owner, with the TTL, and never changes one that has ended", async () => {
    const tasks = store();
    const ada = owner("acct_1/agt_1");
    await tasks.save(task("t1", TaskState.TASK_STATE_WORKING), ada);
    expect((await tasks.load("t1", ada))?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(await tasks.load("t1", owner("acct_2/agt_1"))).toBeUndefined();
    expect(await tasks.load("t1", owner("acct_1/agt_2"))).toBeUndefined();

    await tasks.save(task("t1", TaskState.TASK_STATE_COMPLETED), ada);
    await tasks.save(task("t1", TaskState.TASK_STATE_CANCELED), ada);
    expect((await tasks.load("t1", ada))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const keys = await client.keys("test:*task:acct_1/agt_1:t1");
      expect(keys).toHaveLength(1);
      const ttl = await client.pTTL(keys[0]!);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await client.close();
    }
  });

  it("announces a cancel to every store on the Redis, and a cancelled task stays cancelled", async () => {
    const prefix = `test:${crypto.randomUUID()}:`;
    const here = new RedisTaskStore({ url: redis.url, keyPrefix: prefix });
    const there = new RedisTaskStore({ url: redis.url, keyPrefix: prefix });
    stores.push(here, there);
    const heard: string[] = [];
    here.onCancel((who, id) => heard.push(`${who} ${id}`));
    const ada = owner("acct_1/agt_1");
    // The subscription is made in the background: cancels of throwaway tasks are sent until one is heard.
    for (let i = 0; heard.length === 0 && i < 100; i++) {
      await there.save(task(`warm-${i}`, TaskState.TASK_STATE_CANCELED), ada);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(heard.length).toBeGreaterThan(0);

    await there.save(task("t2", TaskState.TASK_STATE_WORKING), ada);
    await there.save(task("t2", TaskState.TASK_STATE_CANCELED), ada);
    await eventually(() => heard.includes("acct_1/agt_1 t2"));
    expect(heard).toContain("acct_1/agt_1 t2");
    // The gateway still running it cannot write it back to working or completed.
    await here.save(task("t2", TaskState.TASK_STATE_COMPLETED), ada);
    expect((await there.load("t2", ada))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const listed = (await here.list({ ...listAll, status: TaskState.TASK_STATE_CANCELED }, ada)).tasks;
    expect(listed.map((each) => each.id)).toContain("t2");
    expect((await here.list(listAll, owner("acct_2/agt_1"))).tasks).toEqual([]);
  });
});

const listAll = {
  tenant: "",
  contextId: "",
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: "",
  statusTimestampAfter: undefined,
};
