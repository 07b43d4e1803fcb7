import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey } from "@agentry/core";
import { openRegistryStore } from "@agentry/registry";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { Receiver, verify } from "@agentry/webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/*
 * An agent create answers once its transaction (the agent and its agent.created outbox row) has committed; the
 * fan-out to the webhook endpoints comes after the answer. The all-in-one server killed right after the answers,
 * before or while it hands the events on, must still deliver each event to each endpoint once it is back.
 */

const ENDPOINTS = 5;
const CREATES = 20;

let dataDir: string;
let key: string;
let receiver: Receiver;
let server: DeployableProcess | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-webhooks-crash-"));
  receiver = await Receiver.start();
  const store = await openRegistryStore({ dataDir });
  const account = await store.createAccount({
    name: "crash",
    tier: "enterprise",
    limitOverrides: { requestsPerMinute: 100_000, createPerMinute: 100_000 },
  });
  const generated = generateApiKey();
  await store.createApiKey({
    accountId: account.id,
    name: "test",
    scopes: ["agents:write", "webhooks:manage"],
    expiresAt: null,
    sha256: generated.sha256,
    prefix: generated.prefix,
  });
  await store.close();
  key = generated.secret;
});

afterAll(async () => {
  await server?.stop("SIGKILL");
  await receiver.close();
  await rm(dataDir, { recursive: true, force: true });
});

const start = () =>
  startDeployable("apps/server", { DATA_DIR: dataDir, PORT: "0", ALLOW_PRIVATE_NETWORKS: "true" });

async function post(path: string, body: unknown): Promise<{ status: number; data: Record<string, string> }> {
  const res = await fetch(`${server!.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, data: ((await res.json()) as { data: Record<string, string> }).data };
}

describe("webhook fan-out after a create's answer", () => {
  it("delivers every acknowledged create's agent.created to every endpoint after a SIGKILL right after the answers", async () => {
    server = await start();
    const secrets = new Map<string, string>();
    for (let i = 0; i < ENDPOINTS; i++) {
      const made = await post("/v1/webhooks", { url: receiver.url(`e${i}`), events: ["agent.created"] });
      expect(made.status).toBe(201);
      secrets.set(`e${i}`, made.data.secret!);
    }

    const created = await Promise.all(
      Array.from({ length: CREATES }, (_, i) => post("/v1/agents", { name: `crash ${i}` })),
    );
    expect(created.map((answer) => answer.status)).toEqual(Array(CREATES).fill(201));
    // Killed within the answers' own moment: the relay and the deliveries have at most begun.
    await server.stop("SIGKILL");
    const beforeRestart = receiver.received.length;
    expect(beforeRestart).toBeLessThan(CREATES * ENDPOINTS);

    server = await start();
    const ids = created.map((answer) => answer.data.id!).sort();
    const deadline = Date.now() + 60_000;
    const agentIdsAt = (path: string) => [
      ...new Set(
        receiver
          .at(path)
          .map((received) => verify(received, secrets.get(path)!) as { data: { id: string } })
          .map((event) => event.data.id),
      ),
    ];
    const complete = () => [...secrets.keys()].every((path) => agentIdsAt(path).length === CREATES);
    while (!complete() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    for (const path of secrets.keys()) expect(agentIdsAt(path).sort()).toEqual(ids);
  }, 180_000);
});
