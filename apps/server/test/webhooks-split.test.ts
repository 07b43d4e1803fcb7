import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { Receiver, verify } from "@agentry/webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness } from "./harness.js";

/** The server with the webhooks service in a process of its own (WEBHOOKS_URL), called over HTTP/2. */
let dataDir: string;
let webhooks: DeployableProcess;
let receiver: Receiver;
let h: Harness;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-webhooks-split-"));
  receiver = await Receiver.start();
  webhooks = await startDeployable("services/webhooks", {
    DATA_DIR: dataDir,
    WEBHOOKS_PORT: "0",
    ALLOW_PRIVATE_NETWORKS: "true",
  });
  h = await startHarness({ WEBHOOKS_URL: webhooks.url, RPC_TIMEOUT_MS: "2000" });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await webhooks?.stop("SIGKILL");
  await receiver?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("webhooks with the webhooks service in another process", () => {
  it("manages endpoints through it, and the embedded registry's events reach them", async () => {
    const tenant = await h.tenant();
    const created = await h.request<{ data: { id: string; secret: string } }>("POST", "/v1/webhooks", {
      key: tenant.key,
      body: { url: receiver.url("split"), events: ["agent.created"] },
    });
    expect(created.status).toBe(201);
    const agent = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Remote" },
    });
    await expect.poll(() => receiver.at("split").length, { timeout: 15_000 }).toBe(1);
    expect(verify(receiver.at("split")[0]!, created.body.data.secret)).toMatchObject({
      type: "agent.created",
      data: { id: agent.body.data.id, name: "Remote" },
    });
    expect((await h.request("GET", "/readyz")).body).toMatchObject({ dependencies: { webhooks: "up" } });
  });

  it("answers the webhook routes 503 while it is down, and everything else as usual", async () => {
    const tenant = await h.tenant();
    await webhooks.stop("SIGKILL");
    const refused = await h.request<ErrorBody>("GET", "/v1/webhooks", { key: tenant.key });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("AGENT_UNAVAILABLE");
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((await h.request("POST", "/v1/agents", { key: tenant.key, body: { name: "Still" } })).status).toBe(
      201,
    );
    const ready = await h.request("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: "ready", dependencies: { webhooks: "down", registry: "up" } });
  });
});
