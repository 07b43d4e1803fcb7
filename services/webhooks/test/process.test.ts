import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId } from "@agentry/core";
import { type Delivery, DeliveryStatus, WebhookService } from "@agentry/proto";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { INTERRUPTED_ERROR } from "../src/domain/schedule.js";
import { WEBHOOKS_DB_FILE } from "../src/store/sqlite.js";
import { Receiver, verify } from "../src/testing/receiver.js";
import { deliveryLog, eventually, publish } from "./harness.js";

/** The shortest lease the service accepts: an attempt killed mid-way is taken up again this long after. */
const LEASE_MS = 15_000;

/**
 * The service as its own process (src/main.ts), killed and restarted as an operator's platform would: what it
 * promises across crashes is only true of a real process.
 */
describe("the webhooks process", () => {
  let receiver: Receiver;
  let dataDir: string;
  const running: DeployableProcess[] = [];

  const start = async (env: Record<string, string> = {}) => {
    const service = await startDeployable("services/webhooks", {
      WEBHOOKS_PORT: "0",
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_LEASE_MS: String(LEASE_MS),
      WEBHOOK_RETRY_SCHEDULE: "1s,2s,4s",
      ...env,
    });
    running.push(service);
    return service;
  };
  const clientOf = (service: DeployableProcess): Client<typeof WebhookService> =>
    createClient(WebhookService, createConnectTransport({ baseUrl: service.url, httpVersion: "2" }));

  beforeAll(async () => {
    receiver = await Receiver.start();
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "agentry-webhooks-process-"));
  });
  afterEach(async () => {
    for (const service of running.splice(0)) await service.stop("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * The log after recovery: for each event, attempts 1..n, all settled, the last one (alone) succeeded, and
   * every earlier one failed (here: interrupted).
   */
  const expectConsistent = (log: Delivery[], events: string[]) => {
    expect(new Set(log.map((d) => d.eventId))).toEqual(new Set(events));
    for (const event of events) {
      const attempts = log.filter((d) => d.eventId === event).sort((a, b) => a.attempt - b.attempt);
      expect(attempts.map((d) => d.attempt)).toEqual(attempts.map((_, i) => i + 1));
      expect(attempts.at(-1)?.status).toBe(DeliveryStatus.SUCCEEDED);
      for (const earlier of attempts.slice(0, -1)) {
        expect(earlier.status).toBe(DeliveryStatus.FAILED);
        expect(earlier.error).toBe(INTERRUPTED_ERROR);
      }
    }
  };

  it("reports its database in readiness", async () => {
    const service = await start();
    const body = await new Promise<string>((resolve, reject) => {
      const session = http2.connect(service.url);
      session.on("error", reject);
      const request = session.request({ ":path": "/readyz" });
      let text = "";
      request.on("data", (chunk) => {
        text += chunk;
      });
      request.on("end", () => {
        session.close();
        resolve(text);
      });
    });
    expect(JSON.parse(body)).toEqual({ status: "ready", dependencies: { database: "up" } });
  });

  it("delivers again, with the same webhook-id, an event whose answer came just before the process was killed", async () => {
    let service = await start();
    let client = clientOf(service);
    const accountId = newId("account");
    const { webhook, secret } = await client.createWebhook({
      accountId,
      spec: { url: receiver.url("killed-after-answer"), events: ["*"] },
    });
    // The receiver takes the database's write lock before it answers the first request, so the service cannot
    // record the outcome; it is killed while it waits, and the lock let go.
    const lock = new Database(join(dataDir, WEBHOOKS_DB_FILE));
    let killed: Promise<unknown> | undefined;
    receiver.answer("killed-after-answer", (_request, before) => {
      if (before === 0) {
        lock.exec("BEGIN IMMEDIATE");
        const victim = service;
        killed = new Promise((resolve) => setTimeout(resolve, 300))
          .then(() => victim.stop("SIGKILL"))
          .finally(() => lock.exec("ROLLBACK"));
      }
      return 200;
    });
    const events = await publish(client, accountId, "agent.created", "agent.updated", "agent.deleted");
    await eventually(() => expect(killed).toBeDefined());
    await killed;
    lock.close();
    const answered = receiver.at("killed-after-answer").length;
    expect(answered).toBeGreaterThanOrEqual(1);

    service = await start();
    client = clientOf(service);
    await eventually(async () => {
      const log = await deliveryLog(client, accountId, webhook!.id);
      expect(log.filter((d) => d.status === DeliveryStatus.SUCCEEDED)).toHaveLength(events.length);
      expect(log.filter((d) => d.status === DeliveryStatus.PENDING)).toEqual([]);
    }, LEASE_MS + 30_000);
    const received = receiver.at("killed-after-answer");
    for (const request of received) expect(events).toContain(verify(request, secret).id);
    // Every event at least once; those answered before the kill, whose outcomes were lost (the worker made
    // the rest of its run while the first outcome waited), twice, each with one webhook-id.
    const ids = received.map((r) => r.headers["webhook-id"]);
    expect(new Set(ids)).toEqual(new Set(events));
    const repeated = ids.slice(0, answered);
    for (const id of repeated) expect(ids.filter((other) => other === id)).toHaveLength(2);
    expect(ids).toHaveLength(events.length + answered);
    const log = await deliveryLog(client, accountId, webhook!.id);
    expectConsistent(log, events);
    // Every attempt of the run was started when the process died: those made and those not yet.
    const interrupted = log.filter((d) => d.error === INTERRUPTED_ERROR).length;
    expect(interrupted).toBeGreaterThanOrEqual(answered);
    expect(interrupted).toBeLessThanOrEqual(events.length);
  });

  it("delivers, after a restart, an attempt the process was killed in before the receiver got it", async () => {
    let service = await start();
    let client = clientOf(service);
    const accountId = newId("account");
    const { webhook, secret } = await client.createWebhook({
      accountId,
      spec: { url: receiver.url("killed-before-sending"), events: ["*"] },
    });
    // The first connection of the service to the receiver: the service is killed before a byte is read.
    let killed: Promise<unknown> | undefined;
    receiver.dropConnection = () => {
      if (killed) return false;
      killed = service.stop("SIGKILL");
      return true;
    };
    try {
      // The service may be killed before it answers: the delivery is claimed as soon as the event is stored.
      const event = newId("event");
      const publishing = client
        .publishEvents({
          events: [{ id: event, type: "message.completed", accountId, createTime: timestampNow(), data: {} }],
        })
        .catch(() => undefined);
      await eventually(() => expect(killed).toBeDefined());
      await publishing;
      await killed;
      expect(receiver.at("killed-before-sending")).toEqual([]);

      service = await start();
      client = clientOf(service);
      await eventually(() => expect(receiver.at("killed-before-sending")).toHaveLength(1), LEASE_MS + 30_000);
      const [request] = receiver.at("killed-before-sending");
      expect(verify(request!, secret).id).toBe(event);
      await eventually(async () => {
        expectConsistent(await deliveryLog(client, accountId, webhook!.id), [event]);
      });
    } finally {
      receiver.dropConnection = undefined;
    }
  });

  it("finishes and records the attempt in flight on SIGTERM, then exits 0", async () => {
    const service = await start();
    const client = clientOf(service);
    const accountId = newId("account");
    const { webhook } = await client.createWebhook({
      accountId,
      spec: { url: receiver.url("slow"), events: ["*"] },
    });
    let stopping: Promise<number | null> | undefined;
    receiver.answer("slow", async () => {
      stopping = service.stop("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return 200;
    });
    const [event] = await publish(client, accountId, "agent.created");
    await eventually(() => expect(stopping).toBeDefined());
    expect(await stopping).toBe(0);
    const db = new Database(join(dataDir, WEBHOOKS_DB_FILE), { readonly: true });
    try {
      const rows = db
        .prepare<[string], { event_id: string; status: string; response_status: number }>(
          "SELECT event_id, status, response_status FROM deliveries WHERE endpoint_id = ?",
        )
        .all(webhook!.id);
      expect(rows).toEqual([{ event_id: event, status: "succeeded", response_status: 200 }]);
    } finally {
      db.close();
    }
  });
});

describe("two worker processes on one Postgres database", () => {
  let db: TestDatabase;
  let receiver: Receiver;
  const running: DeployableProcess[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
    receiver = await Receiver.start();
  }, 60_000);
  afterAll(async () => {
    for (const service of running.splice(0)) await service.stop("SIGKILL");
    await receiver?.close();
    await db?.close();
  });

  it("deliver each event exactly once to each endpoint, one worker at a time per endpoint", async () => {
    const url = await db.createDatabase();
    const env = {
      WEBHOOKS_PORT: "0",
      DATA_DIR: "unused",
      DATABASE_URL: url,
      ALLOW_PRIVATE_NETWORKS: "true",
      // Two endpoints at a time each: with four endpoints, both workers take part.
      WEBHOOK_CONCURRENCY: "2",
    };
    const services = await Promise.all([
      startDeployable("services/webhooks", env),
      startDeployable("services/webhooks", env),
    ]);
    running.push(...services);
    const clients = services.map((service) =>
      createClient(WebhookService, createConnectTransport({ baseUrl: service.url, httpVersion: "2" })),
    );
    const accountId = newId("account");
    const endpoints = await Promise.all(
      ["pg/a", "pg/b", "pg/c", "pg/d"].map(async (path, i) => {
        // Slow enough that the two endpoints one process holds keep it busy for seconds: the other process
        // claims the other two at its next poll.
        receiver.answer(path, async () => {
          await new Promise((resolve) => setTimeout(resolve, 40));
          return 200;
        });
        const { webhook, secret } = await clients[i % 2]!.createWebhook({
          accountId,
          spec: { url: receiver.url(path), events: ["*"] },
        });
        return { path, id: webhook!.id, secret };
      }),
    );
    const events: string[] = [];
    for (let batch = 0; batch < 6; batch++) {
      events.push(
        ...(await publish(
          clients[batch % 2]!,
          accountId,
          ...Array.from({ length: 10 }, () => "agent.updated"),
        )),
      );
    }
    await eventually(() => {
      for (const endpoint of endpoints) expect(receiver.at(endpoint.path)).toHaveLength(events.length);
    }, 60_000);
    // Settled for a moment longer: nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const endpoint of endpoints) {
      const received = receiver.at(endpoint.path);
      expect(received).toHaveLength(events.length);
      expect(new Set(received.map((r) => verify(r, endpoint.secret).id))).toEqual(new Set(events));
      expect(receiver.maxInFlight.get(endpoint.path)).toBe(1);
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ status: string; attempt: number; n: number }>(
        "SELECT status, attempt, count(*)::int AS n FROM webhooks.deliveries GROUP BY status, attempt",
      );
      expect(rows).toEqual([{ status: "succeeded", attempt: 1, n: events.length * endpoints.length }]);
      const workers = await client.query<{ n: number }>(
        "SELECT count(DISTINCT worker)::int AS n FROM webhooks.deliveries",
      );
      expect(workers.rows[0]?.n).toBe(2);
    } finally {
      await client.end();
    }
    const log = await deliveryLog(clients[0]!, accountId, endpoints[0]!.id);
    expect(log).toHaveLength(events.length);
  });
});
