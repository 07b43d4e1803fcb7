import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey } from "@agentry/core";
import { silentLogger } from "@agentry/logging";
import { openRegistryStore } from "@agentry/registry";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { openWebhookStore } from "@agentry/webhooks";
import { Receiver } from "@agentry/webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The all-in-one server as a process: its embedded webhooks worker on SIGTERM. */
let dataDir: string;
let receiver: Receiver;
let server: DeployableProcess | undefined;
let accountId: string;
let key: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-webhooks-sigterm-"));
  receiver = await Receiver.start();
  const store = await openRegistryStore({ dataDir });
  const account = await store.createAccount({ name: "hooks", tier: "standard", limitOverrides: {} });
  const generated = generateApiKey();
  await store.createApiKey({
    accountId: account.id,
    name: "test",
    scopes: ["webhooks:manage"],
    expiresAt: null,
    sha256: generated.sha256,
    prefix: generated.prefix,
  });
  await store.close();
  accountId = account.id;
  key = generated.secret;
});

afterAll(async () => {
  await server?.stop("SIGKILL");
  await receiver.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the all-in-one server's webhook deliveries on SIGTERM", () => {
  it("stop claiming, let the attempt in flight finish and be recorded, then the process exits 0", async () => {
    server = await startDeployable("apps/server", {
      DATA_DIR: dataDir,
      PORT: "0",
      ALLOW_PRIVATE_NETWORKS: "true",
      SHUTDOWN_TIMEOUT_MS: "5000",
    });
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    receiver.answer("slow", async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      return 200;
    });
    const created = await call("POST", "/v1/webhooks", { url: receiver.url("slow"), events: ["*"] });
    expect(created.status).toBe(201);
    const webhookId = ((await created.json()) as { data: { id: string } }).data.id;
    expect((await call("POST", `/v1/webhooks/${webhookId}/test`)).status).toBe(200);
    await expect.poll(() => receiver.at("slow").length, { timeout: 10_000 }).toBe(1);

    const stopped = Date.now();
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(5_000);
    expect(server.lines.map((line) => line.msg)).toContain("stopped");

    const store = await openWebhookStore({ dataDir, logger: silentLogger() });
    try {
      const page = await store.listDeliveries(accountId, webhookId, { limit: 10, order: "desc" });
      expect(page?.items.map((d) => [d.status, d.responseStatus])).toEqual([["succeeded", 200]]);
    } finally {
      await store.close();
    }
  });
});
