import { Receiver, verify } from "@agentry/webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, PUBLIC_BASE_URL, sleep, startTopology, type Topology } from "../src/topology.js";

/**
 * Webhooks across the scaled-out system: changes made through two gateways are written to the registry's outbox,
 * messages sent through them to the conversation service's, each relayed to the webhooks service (its own
 * process, on the tests' Postgres), and POSTed to a receiver on loopback that verifies every delivery with the
 * `standardwebhooks` package.
 */
let t: Topology;
let receiver: Receiver;

beforeAll(async () => {
  [t, receiver] = await Promise.all([startTopology({ gateways: 2 }), Receiver.start()]);
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const HIGH = {
  requestsPerMinute: 1_000_000,
  createPerMinute: 1_000_000,
  getPerMinute: 1_000_000,
  listPerMinute: 1_000_000,
  updatePerMinute: 1_000_000,
  deletePerMinute: 1_000_000,
};

interface Event {
  id: string;
  type: string;
  createdAt: string;
  data: { id: string; [field: string]: unknown };
}

let paths = 0;
/** An endpoint of the account at a path of its own on the receiver; `events()` verifies what it received. */
async function subscribe(key: string, types: string[] = ["*"]) {
  const path = `system-${++paths}`;
  const created = await call(t.gateways[0]!, key, "POST", "/v1/webhooks", {
    url: receiver.url(path),
    events: types,
  });
  expect(created.status).toBe(201);
  const secret = (created.body.data as { secret: string }).secret;
  return {
    path,
    events: () => receiver.at(path).map((received) => verify(received, secret) as Event),
  };
}

describe("agent events through two gateways", () => {
  it("arrive once each, signed, in the order of the changes, with the agent as the API shows it", async () => {
    const [a, b] = t.gateways as [(typeof t.gateways)[0], (typeof t.gateways)[0]];
    const { key } = await t.tenant(HIGH);
    const endpoint = await subscribe(key);

    const created = await call(a!, key, "POST", "/v1/agents", {
      name: "Ada",
      settings: { secrets: { K: "sk-x" } },
    });
    expect(created.status).toBe(201);
    const agent = created.body.data as { id: string; settings: Record<string, unknown> };
    expect((await call(b!, key, "PATCH", `/v1/agents/${agent.id}`, { name: "Ada L." })).status).toBe(200);
    expect((await call(a!, key, "PATCH", `/v1/agents/${agent.id}`, { status: "inactive" })).status).toBe(200);
    expect((await call(b!, key, "DELETE", `/v1/agents/${agent.id}`)).status).toBe(200);

    await expect.poll(() => endpoint.events().length, { timeout: 20_000 }).toBe(5);
    // Nothing more comes: each event once.
    await sleep(2_000);
    const events = endpoint.events();
    expect(events.map((e) => e.type)).toEqual([
      "agent.created",
      "agent.updated",
      "agent.updated",
      "agent.status_changed",
      "agent.deleted",
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(5);
    expect(events[0]!.data).toEqual({ ...agent, settings: {} });
    expect(events[0]!.data.apiEndpoint).toBe(`${PUBLIC_BASE_URL}/v1/agents/${agent.id}/messages`);
    expect(events[1]!.data).toMatchObject({ name: "Ada L.", status: "active" });
    expect(events[3]!.data).toMatchObject({ name: "Ada L.", status: "inactive" });
    expect(events[4]!.data).toEqual({ id: agent.id });
    expect(JSON.stringify(events)).not.toContain("sk-x");
    expect(receiver.at(endpoint.path).map((r) => r.headers["webhook-id"])).toEqual(events.map((e) => e.id));
  });
});

describe("message events through the gateways", () => {
  it("message.completed carries the reply each send answered, and message.failed the error, signed", async () => {
    const [a, b] = t.gateways as [(typeof t.gateways)[0], (typeof t.gateways)[0]];
    const { key } = await t.tenant({ ...HIGH, messagesPerMinute: 1_000_000 });
    const completed = await subscribe(key, ["message.completed"]);
    const failed = await subscribe(key, ["message.failed"]);
    const created = await call(a!, key, "POST", "/v1/agents", { name: "Mia" });
    const agentId = (created.body.data as { id: string }).id;

    t.openai.reply("Hello from the system.");
    const sent = await call(b!, key, "POST", `/v1/agents/${agentId}/messages`, { text: "Hi", userId: "u1" });
    expect(sent.status).toBe(200);
    t.openai.failWith(401);
    const refused = await call(a!, key, "POST", `/v1/agents/${agentId}/messages`, { text: "Hi again" });
    expect(refused.status).toBe(502);

    await expect.poll(() => completed.events().length + failed.events().length, { timeout: 20_000 }).toBe(2);
    await sleep(1_000);
    const [done] = completed.events();
    const [failure] = failed.events();
    expect(completed.events()).toHaveLength(1);
    expect(done).toMatchObject({ type: "message.completed", data: sent.body.data as object });
    expect(done!.data).toEqual(sent.body.data);
    const error = refused.body.error as { code: string; message: string };
    expect(failed.events()).toHaveLength(1);
    expect(failure).toMatchObject({ type: "message.failed" });
    expect(failure!.data).toEqual({
      agentId,
      messageId: expect.stringMatching(/^msg_/),
      code: "MODEL_ERROR",
      message: error.message,
    });
    expect(error.code).toBe("MODEL_ERROR");
  });
});

describe("the webhooks service killed (SIGKILL) while events wait", () => {
  it("delivers every event at least once after it is back: those it had taken, and those left in the outbox", async () => {
    const gateways = t.gateways;
    const { key } = await t.tenant(HIGH);
    const endpoint = await subscribe(key);
    // Slow answers, so that deliveries are in flight when the process dies.
    receiver.answer(endpoint.path, async () => {
      await sleep(1_000);
      return 200;
    });

    const agents: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await call(gateways[i % 2]!, key, "POST", "/v1/agents", { name: `kept-${i}` });
      expect(res.status).toBe(201);
      agents.push((res.body.data as { id: string }).id);
    }
    await expect.poll(() => receiver.at(endpoint.path).length, { timeout: 15_000 }).toBeGreaterThan(0);
    await t.webhooks.stop("SIGKILL");
    const registryMark = t.registry.lines.length;

    // While it is down, changes go on; their events wait in the registry's outbox.
    for (const [i, id] of agents.slice(0, 3).entries()) {
      expect((await call(gateways[i % 2]!, key, "DELETE", `/v1/agents/${id}`)).status).toBe(200);
    }
    await expect
      .poll(() => t.registry.lines.slice(registryMark).map((line) => line.msg), { timeout: 10_000 })
      .toContain("outbox delivery failed; it is retried until it succeeds");

    await t.start("webhooks");
    const expected = [
      ...agents.map((id) => `agent.created ${id}`),
      ...agents.slice(0, 3).map((id) => `agent.deleted ${id}`),
    ];
    const arrived = () => new Set(endpoint.events().map((e) => `${e.type} ${e.data.id}`));
    // A delivery the killed process had taken is attempted again once its lease (15 s) has run out.
    await expect
      .poll(() => expected.filter((e) => !arrived().has(e)), { timeout: 60_000, interval: 500 })
      .toEqual([]);

    // At least once: a repeat carries the webhook-id of the event it repeats, and every body verifies.
    const events = endpoint.events();
    const byId = new Map<string, string>();
    for (const event of events) {
      const seen = byId.get(event.id);
      expect(seen === undefined || seen === `${event.type} ${event.data.id}`).toBe(true);
      byId.set(event.id, `${event.type} ${event.data.id}`);
    }
    expect(byId.size).toBe(expected.length);
    expect(t.registry.lines.slice(registryMark).map((line) => line.msg)).toContain("outbox delivery resumed");
    for (const service of [t.registry, t.webhooks, ...gateways]) expect(service.alive).toBe(true);
  });
});
