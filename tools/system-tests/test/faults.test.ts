import { ConversationService } from "@agentry/proto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceProcess } from "../src/process.js";
import { call, sleep, startTopology, type Topology } from "../src/topology.js";

/**
 * Infrastructure faults as production meets them, injected into real processes: Postgres restarted under load
 * (as a managed database does in maintenance), Redis killed, the services killed, a gateway drained. No service
 * may exit; callers get only documented answers; recovery needs no restart; nothing acknowledged is lost.
 */
let t: Topology;

beforeAll(async () => {
  t = await startTopology({ gateways: 2 });
});
afterAll(async () => {
  await t?.close();
});

const HIGH = {
  requestsPerMinute: 1_000_000,
  createPerMinute: 1_000_000,
  getPerMinute: 1_000_000,
  listPerMinute: 1_000_000,
  messagesPerMinute: 1_000_000,
  concurrentMessages: 1_000,
  maxAgents: 1_000_000,
};

/** Error-level lines a process wrote since `from` (an index into its lines). */
const errorLines = (service: ServiceProcess, from = 0) =>
  service.lines.slice(from).filter((line) => Number(line.level) >= 50);

const messages = (service: ServiceProcess, from = 0) => service.lines.slice(from).map((line) => line.msg);

describe("Postgres restarted under load", () => {
  it("keeps every service up, answers only documented 503s, recovers by itself and loses nothing", async () => {
    const { key, accountId } = await t.tenant(HIGH);
    const [a, b] = t.gateways as [ServiceProcess, ServiceProcess];
    const target = await call(a, key, "POST", "/v1/agents", { name: "talker" });
    expect(target.status).toBe(201);
    const agentId = (target.body.data as { id: string }).id;
    const marks = { registry: t.registry.lines.length, conversation: t.conversation.lines.length };
    const gatewayMarks = [a.lines.length, b.lines.length];

    const createdIds: string[] = [];
    const replyIds: string[] = [];
    const outcomes = new Map<string, number>();
    const undocumented: unknown[] = [];
    const note = (status: number, body: Record<string, unknown>, headers: Headers) => {
      outcomes.set(String(status), (outcomes.get(String(status)) ?? 0) + 1);
      if (status === 503) {
        const error = body.error as { code?: string } | undefined;
        if (error?.code !== "AGENT_UNAVAILABLE" || !headers.get("retry-after")) undocumented.push(body);
      } else if (status !== 200 && status !== 201) undocumented.push({ status, body });
    };
    let stop = false;
    const creators = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const res = await call(w % 2 ? a : b, key, "POST", "/v1/agents", { name: `load-${w}-${i}` });
        note(res.status, res.body, res.headers);
        if (res.status === 201) createdIds.push((res.body.data as { id: string }).id);
        else await sleep(20);
      }
    });
    const talkers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const res = await call(w % 2 ? a : b, key, "POST", `/v1/agents/${agentId}/messages`, {
          text: `message ${w}-${i}`,
          userId: `user-${w}`,
        });
        note(res.status, res.body, res.headers);
        if (res.status === 200) replyIds.push((res.body.data as { id: string }).id);
        else await sleep(20);
      }
    });
    const up = () => {
      for (const service of [t.registry, t.conversation, a, b])
        expect(service.alive, `${service.name} exited (${service.child.exitCode})`).toBe(true);
    };
    const settle = async (ms: number) => {
      const count = createdIds.length;
      await sleep(ms);
      up();
      expect(createdIds.length, "creates kept succeeding").toBeGreaterThan(count);
    };

    const recoveries: number[] = [];
    try {
      await settle(500);
      for (let round = 0; round < 3; round++) {
        await t.postgres.restart("fast");
        const restarted = Date.now();
        const [created, replied] = [createdIds.length, replyIds.length];
        while (
          (createdIds.length === created || replyIds.length === replied) &&
          Date.now() - restarted < 15_000
        )
          await sleep(25);
        recoveries.push(Date.now() - restarted);
        up();
        await settle(300);
      }
    } finally {
      stop = true;
      await Promise.all([...creators, ...talkers]);
    }

    up();
    expect(undocumented).toEqual([]);
    // Each round the service answered again within seconds, by itself.
    for (const ms of recoveries) expect(ms).toBeLessThan(10_000);

    // Nothing acknowledged is lost: every created agent is there, every answered message is in its history.
    const missing: string[] = [];
    for (const id of createdIds)
      if ((await call(a, key, "GET", `/v1/agents/${id}`)).status !== 200) missing.push(id);
    expect(missing).toEqual([]);
    const conversations = createClient(
      ConversationService,
      createConnectTransport({ baseUrl: t.conversation.url, httpVersion: "2" }),
    );
    const stored = new Set<string>();
    for (let w = 0; w < 4; w++) {
      let pageToken = "";
      do {
        const page = await conversations.listTurns({
          accountId,
          agentId,
          userId: `user-${w}`,
          pageSize: 100,
          pageToken,
        });
        for (const turn of page.turns) stored.add(turn.id);
        pageToken = page.nextPageToken;
      } while (pageToken);
    }
    expect(replyIds.filter((id) => !stored.has(id))).toEqual([]);

    // The outage is logged as it starts and ends, not once per refused request.
    expect(messages(t.registry, marks.registry)).toEqual(
      expect.arrayContaining(["postgres available again"]),
    );
    expect(messages(t.conversation, marks.conversation)).toEqual(
      expect.arrayContaining(["postgres available again"]),
    );
    for (const [i, gateway] of [a, b].entries()) expect(errorLines(gateway, gatewayMarks[i])).toEqual([]);
    // A line as each outage starts (a restart may flap once as connections fail one by one), whatever the load.
    for (const service of [t.registry, t.conversation]) {
      const from = service === t.registry ? marks.registry : marks.conversation;
      expect(errorLines(service, from).length).toBeLessThanOrEqual(2 * recoveries.length);
    }
    console.log(
      `postgres restarts: outcomes ${JSON.stringify(Object.fromEntries(outcomes))}, ` +
        `${createdIds.length} creates and ${replyIds.length} replies acknowledged, recovered in ${recoveries.join(", ")} ms`,
    );
  });
});
