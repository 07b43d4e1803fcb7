import { join } from "node:path";
import { newId } from "@agentry/core";
import type { PublicEvent } from "@agentry/events";
import { silentLogger } from "@agentry/logging";
import { publishWith } from "@agentry/outbox";
import { WebhookService } from "@agentry/proto";
import { probeReadiness, remoteService } from "@agentry/rpc";
import { createClient } from "@connectrpc/connect";
import { auth, type Bench, log, median, percentile, serviceEnv } from "../bench.js";
import { cpuSecondsOf, freePort, ROOT, type Running, type Seed, seed, sleep } from "../harness.js";
import type { Target } from "../workers/latency.js";

/** Endpoints subscribed to agent.created in the account that has any. */
const ENDPOINTS = 5;

export interface Latencies {
  p50: number;
  p99: number;
}

export interface WebhooksResult {
  creates: number;
  /** Agent creates in an account without endpoints, and in one with five. */
  none: Latencies;
  hooks: Latencies;
  /** How long after the last create its deliveries had all arrived, in seconds. */
  drainedSeconds: number;
  throughput: {
    events: number;
    deliveries: number;
    /** From the first publish to the last delivery's arrival. */
    seconds: number;
    /** The webhooks service's CPU time per delivery, in microseconds. */
    cpuMicros: number;
  };
}

/** An agent create as a client sends it. */
const CREATE_BODY = JSON.stringify({
  name: "Created",
  bio: ["Made by the benchmark."],
  modelProvider: "openai",
  model: "bench-model",
});

interface ReceiverStats {
  count: number;
  firstAt: number | null;
  lastAt: number | null;
}

/**
 * What webhooks cost an agent create, and how fast the webhooks service delivers. Creates alternate, one at a
 * time, between two all-in-one gateways alike but for their tenant's endpoints: none in one, five subscribed to
 * agent.created in the other, pointed at a receiver on loopback that only counts; the second gateway's deliveries
 * happen while the creates go on, as they would. The delivery rate is that of a webhooks service on its own,
 * given events for an account with five endpoints through PublishEvents, as the other services' outboxes give them.
 */
export async function webhooks(bench: Bench, providerEnv: Record<string, string>): Promise<WebhooksResult> {
  const receiver = await bench.launchScript("receiver", "receiver.mjs", ["0"]);
  const stats = async () => (await (await fetch(`${receiver.url}/stats`)).json()) as ReceiverStats;

  const gateways: { url: string; tenant: Seed; process: Running }[] = [];
  for (const side of ["none", "hooks"]) {
    const dataDir = join(bench.dir, `webhooks-${side}`);
    const tenant = await seed(dataDir);
    const env = { ...serviceEnv(dataDir), ...providerEnv, ALLOW_PRIVATE_NETWORKS: "true" };
    const gateway = await bench.startGateway(`gateway-webhooks-${side}`, env, tenant);
    gateways.push({ ...gateway, tenant });
  }
  const [none, hooks] = gateways as [(typeof gateways)[0], (typeof gateways)[0]];
  for (let i = 0; i < ENDPOINTS; i++) {
    const response = await fetch(`${hooks.url}/v1/webhooks`, {
      method: "POST",
      headers: { ...auth(hooks.tenant), "content-type": "application/json" },
      body: JSON.stringify({ url: `${receiver.url}/endpoint/${i}`, events: ["agent.created"] }),
    });
    if (response.status !== 201)
      throw new Error(`creating an endpoint: ${response.status} ${await response.text()}`);
  }

  const creates = bench.settings.messages;
  const warmup = Math.ceil(creates / 10);
  const create = (gateway: (typeof gateways)[0]): Target => ({
    url: `${gateway.url}/v1/agents`,
    headers: auth(gateway.tenant),
    body: CREATE_BODY,
    mode: "json",
  });
  log(`${creates} agent creates with ${ENDPOINTS} endpoints and without, alternating ...`);
  const [withoutSamples, withSamples] = await bench.latency([create(none), create(hooks)], warmup, creates);
  const lastCreate = performance.timeOrigin + performance.now();
  const expected = (warmup + creates) * ENDPOINTS;
  const drained = await waitForDeliveries(stats, expected);
  await bench.stop(gateways.map((gateway) => gateway.process));

  const throughput = await deliveryRate(bench, receiver.url, stats);
  const summary = (values: number[]) => ({ p50: median(values), p99: percentile(values, 99) });
  return {
    creates,
    none: summary(withoutSamples!),
    hooks: summary(withSamples!),
    drainedSeconds: (drained.lastAt! - lastCreate) / 1000,
    throughput,
  };
}

/** Waits until the receiver has had `expected` deliveries; fails after a minute without a new one. */
async function waitForDeliveries(
  stats: () => Promise<ReceiverStats>,
  expected: number,
): Promise<ReceiverStats> {
  let seen = -1;
  let since = performance.now();
  for (;;) {
    const now = await stats();
    if (now.count >= expected) return now;
    if (now.count !== seen) {
      seen = now.count;
      since = performance.now();
    } else if (performance.now() - since > 60_000) {
      throw new Error(`the receiver got ${now.count} of ${expected} deliveries`);
    }
    await sleep(20);
  }
}

/** The webhooks service's own process, its data apart, allowed to deliver to loopback. */
async function deliveryRate(
  bench: Bench,
  receiverUrl: string,
  stats: () => Promise<ReceiverStats>,
): Promise<WebhooksResult["throughput"]> {
  const port = await freePort();
  const service = bench.launch(
    "webhooks-delivery",
    "node",
    [join(ROOT, "services", "webhooks", "dist", "main.mjs")],
    {
      ...serviceEnv(join(bench.dir, "webhooks-delivery")),
      WEBHOOKS_PORT: String(port),
      ALLOW_PRIVATE_NETWORKS: "true",
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; !(await probeReadiness(url)); tries++) {
    if (tries > 600) throw new Error("the webhooks service did not become ready");
    await sleep(50);
  }
  const client = createClient(
    WebhookService,
    remoteService({ url, name: "webhooks service", logger: silentLogger() }).transport,
  );
  const accountId = newId("account");
  for (let i = 0; i < ENDPOINTS; i++) {
    await client.createWebhook({
      accountId,
      spec: { url: `${receiverUrl}/endpoint/${i}`, events: ["agent.created"], description: "" },
    });
  }
  await fetch(`${receiverUrl}/reset`, { method: "POST" });

  const events = bench.settings.webhookEvents;
  log(`delivering ${events} events to ${ENDPOINTS} endpoints ...`);
  const publish = publishWith(client);
  const cpuBefore = await cpuSecondsOf(service.pid);
  const started = performance.timeOrigin + performance.now();
  for (let sent = 0; sent < events; ) {
    const batch: PublicEvent[] = [];
    for (; batch.length < 500 && sent < events; sent++) batch.push(agentCreated(accountId, sent));
    await publish(batch);
  }
  const done = await waitForDeliveries(stats, events * ENDPOINTS);
  const cpu = (await cpuSecondsOf(service.pid)) - cpuBefore;
  await service.stop();
  return {
    events,
    deliveries: done.count,
    seconds: (done.lastAt! - started) / 1000,
    cpuMicros: (cpu * 1e6) / done.count,
  };
}

/** An agent.created event with an agent as the REST API presents it. */
function agentCreated(accountId: string, i: number): PublicEvent {
  const createdAt = new Date().toISOString();
  const id = newId("agent");
  return {
    id: newId("event"),
    type: "agent.created",
    accountId,
    createdAt,
    data: {
      id,
      name: `Agent ${i}`,
      bio: ["Made by the benchmark."],
      personality: { tone: "brief" },
      knowledge: [],
      goals: [],
      clients: [],
      settings: { maxTokens: 64 },
      modelProvider: "openai",
      model: "bench-model",
      plugins: [],
      status: "active",
      apiEndpoint: `http://127.0.0.1/v1/agents/${id}`,
      createdAt,
      updatedAt: createdAt,
    },
  };
}
