import { once } from "node:events";
import http from "node:http";
import { ConversationService } from "@agentry/proto";
import type { DeployableProcess as ServiceProcess } from "@agentry/testing";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
        expect(
          service.alive,
          `${service.name} exited (${service.child.exitCode}): ${service.stderr.slice(-2000)}`,
        ).toBe(true);
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
    for (const [service, from] of [
      [t.registry, marks.registry],
      [t.conversation, marks.conversation],
    ] as const) {
      await expect
        .poll(() => messages(service, from), { timeout: 5_000 })
        .toContain("postgres available again");
    }
    for (const [i, gateway] of [a, b].entries()) expect(errorLines(gateway, gatewayMarks[i])).toEqual([]);
    // A line as each outage starts (a restart may flap once as connections fail one by one), whatever the load.
    for (const service of [t.registry, t.conversation]) {
      const from = service === t.registry ? marks.registry : marks.conversation;
      const lines = errorLines(service, from);
      expect(lines.length, JSON.stringify(lines.map((line) => line.msg))).toBeLessThanOrEqual(
        2 * recoveries.length,
      );
    }
    console.log(
      `postgres restarts: outcomes ${JSON.stringify(Object.fromEntries(outcomes))}, ` +
        `${createdIds.length} creates and ${replyIds.length} replies acknowledged, recovered in ${recoveries.join(", ")} ms`,
    );
  });
});

describe("Redis killed and restarted", () => {
  it("fails closed with a documented 503, reports redis down, and keeps exact limits once it is back", async () => {
    const [a, b] = t.gateways as [ServiceProcess, ServiceProcess];
    const marks = [a.lines.length, b.lines.length];
    const { key } = await t.tenant(HIGH);
    expect((await call(a, key, "GET", "/v1/agents")).status).toBe(200);

    await t.redis.stop();
    for (const gateway of [a, b]) {
      const during = await call(gateway, key, "GET", "/v1/agents");
      expect(during.status).toBe(503);
      expect((during.body.error as { code: string }).code).toBe("AGENT_UNAVAILABLE");
      expect(during.headers.get("retry-after")).toBe("1");
      const ready = await fetch(`${gateway.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: "ready", dependencies: { redis: "down" } });
    }

    await t.redis.start();
    const restarted = Date.now();
    for (const gateway of [a, b]) {
      while ((await call(gateway, key, "GET", "/v1/agents")).status !== 200) {
        expect(Date.now() - restarted, `${gateway.url} did not recover`).toBeLessThan(10_000);
        await sleep(50);
      }
    }
    // The restarted Redis is empty; the limits it keeps are exact across both gateways again.
    const limited = await t.tenant({ ...HIGH, requestsPerMinute: 20 });
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(i % 2 ? a : b, limited.key, "GET", "/v1/agents")),
    );
    expect(statuses.filter((res) => res.status === 200)).toHaveLength(20);
    expect(statuses.filter((res) => res.status === 429)).toHaveLength(10);

    for (const [i, gateway] of [a, b].entries()) {
      expect(gateway.alive).toBe(true);
      await expect
        .poll(() => messages(gateway, marks[i]), { timeout: 5_000 })
        .toContain("redis available again");
      const since = messages(gateway, marks[i]);
      expect(
        since.filter((msg) => String(msg).startsWith("redis unavailable")).length,
      ).toBeGreaterThanOrEqual(1);
      expect(errorLines(gateway, marks[i]).length).toBeLessThanOrEqual(2);
    }
  });
});

describe("the conversation service killed and restarted", () => {
  it("ends every open stream with an error event or a JSON 503, then serves again by itself", async () => {
    const [a, b] = t.gateways as [ServiceProcess, ServiceProcess];
    const { key } = await t.tenant(HIGH);
    const agentId = (
      (await call(a, key, "POST", "/v1/agents", { name: "streamer" })).body.data as { id: string }
    ).id;
    t.openai.reset();
    for (let i = 0; i < 6; i++) t.openai.reply("never finished", { delayMs: 30_000 });
    const streams = Array.from({ length: 6 }, (_, i) =>
      fetch(`${(i % 2 ? a : b).url}/v1/agents/${agentId}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ text: `open ${i}`, userId: `u${i}`, stream: true }),
      }).then(async (res) => ({
        status: res.status,
        type: res.headers.get("content-type"),
        text: await res.text(),
      })),
    );
    await t.openai.waitForRequests(6);

    const killed = Date.now();
    await t.conversation.stop("SIGKILL");
    const ended = await Promise.all(streams);
    expect(Date.now() - killed).toBeLessThan(5_000);
    for (const stream of ended) {
      if (stream.status === 200) {
        expect(stream.type).toMatch(/^text\/event-stream/);
        const events = stream.text.split("\n\n").filter((block) => block.includes("event:"));
        expect(events.at(-1)).toMatch(/event: error\ndata: \{"code":"AGENT_UNAVAILABLE"/);
      } else {
        expect(stream.status).toBe(503);
        expect(JSON.parse(stream.text).error.code).toBe("AGENT_UNAVAILABLE");
      }
    }
    const during = await call(a, key, "POST", `/v1/agents/${agentId}/messages`, { text: "anyone?" });
    expect(during.status).toBe(503);
    expect(during.headers.get("retry-after")).toBe("1");

    t.openai.reset();
    await t.restart("conversation");
    const restarted = Date.now();
    for (const gateway of [a, b]) {
      while (
        (await call(gateway, key, "POST", `/v1/agents/${agentId}/messages`, { text: "back?" })).status !== 200
      ) {
        expect(Date.now() - restarted, `${gateway.url} did not recover`).toBeLessThan(10_000);
        await sleep(50);
      }
    }
    for (const gateway of [a, b]) expect(gateway.alive).toBe(true);
    expect(t.registry.alive).toBe(true);
  });
});

describe("a gateway drained by SIGTERM", () => {
  it("finishes what is in flight, closes those connections after their response, and exits 0 at once", async () => {
    const gateway = await t.addGateway();
    const { key } = await t.tenant(HIGH);
    // The services were restarted by the test before: a new gateway may meet a 503 while it first reaches them.
    let created = await call(gateway, key, "POST", "/v1/agents", { name: "drained" });
    for (const started = Date.now(); created.status === 503 && Date.now() - started < 10_000; ) {
      await sleep(100);
      created = await call(gateway, key, "POST", "/v1/agents", { name: "drained" });
    }
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const agentId = (created.body.data as { id: string }).id;
    t.openai.reset();
    t.openai.reply("a slow answer", { delayMs: 1_500 });
    t.openai.reply("a slow stream of words", { chunkDelayMs: 300 });
    const keepAlive = new http.Agent({ keepAlive: true });
    const post = (body: object) =>
      new Promise<{
        status: number;
        headers: http.IncomingHttpHeaders;
        text: string;
        endedAt: number;
        closed: Promise<void>;
      }>((resolve, reject) => {
        const req = http.request(
          `${gateway.url}/v1/agents/${agentId}/messages`,
          {
            method: "POST",
            agent: keepAlive,
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          },
          (res) => {
            const closed = once(res.socket, "close").then(() => undefined);
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (chunk: string) => {
              text += chunk;
            });
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                headers: res.headers,
                text,
                endedAt: Date.now(),
                closed,
              }),
            );
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify(body));
      });
    // One after the other: the fake provider answers in the order the requests reach it.
    const plain = post({ text: "slow", userId: "drain-1" });
    await t.openai.waitForRequests(1);
    const stream = post({ text: "stream", userId: "drain-2", stream: true });
    await t.openai.waitForRequests(2);
    const exited = once(gateway.child, "exit").then(([code]) => ({
      code: code as number | null,
      at: Date.now(),
    }));
    gateway.child.kill("SIGTERM");

    const [answered, streamed] = await Promise.all([plain, stream]);
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.text).data.text).toBe("a slow answer");
    // Its headers had not left when the drain began: the response itself says the connection closes.
    expect(answered.headers.connection).toBe("close");
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain("event: message.completed");
    // Both connections are closed by the gateway once their response is done, not kept for another request.
    await Promise.all([answered.closed, streamed.closed]);
    const exit = await exited;
    expect(exit.code).toBe(0);
    expect(exit.at - Math.max(answered.endedAt, streamed.endedAt)).toBeLessThan(2_500);
    keepAlive.destroy();
  });
});
