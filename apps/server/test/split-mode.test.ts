import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

let dataDir: string;
let registry: ServiceProcess;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-split-"));
  registry = await startDeployable("services/registry", {
    DATA_DIR: dataDir,
    REGISTRY_PORT: "0",
    SECRETS_KEY: Buffer.alloc(32, 1).toString("base64"),
    LOG_LEVEL: "debug",
  });
  h = await startHarness({ REGISTRY_URL: registry.url, RPC_TIMEOUT_MS: "2000" });
  tenant = await h.tenant();
});

afterAll(async () => {
  await h?.close();
  await registry?.stop("SIGKILL");
  await rm(dataDir, { recursive: true, force: true });
});

describe("gateway and registry in separate processes", () => {
  it("serves the agent routes over HTTP/2 to the registry", async () => {
    const created = await h.request<{ data: { id: string; name: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Remote" },
      headers: { "x-request-id": "split-create-1" },
    });
    expect(created.status).toBe(201);
    const read = await h.request<{ data: { name: string } }>("GET", `/v1/agents/${created.body.data.id}`, {
      key: tenant.key,
    });
    expect(read.body.data.name).toBe("Remote");
    const missing = await h.request<ErrorBody>("GET", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", {
      key: tenant.key,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("AGENT_NOT_FOUND");
  });

  it("carries the request id into the registry's logs", async () => {
    await h.request("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Traced" },
      headers: { "x-request-id": "split-trace-2" },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(registry.lines.some((line) => line.requestId === "split-trace-2")).toBe(true);
  });

  it("keeps the quota error code across the process boundary", async () => {
    const small = await h.tenant({ maxAgents: 1 });
    expect((await h.request("POST", "/v1/agents", { key: small.key, body: { name: "a" } })).status).toBe(201);
    const refused = await h.request<ErrorBody>("POST", "/v1/agents", { key: small.key, body: { name: "b" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("INSUFFICIENT_QUOTA");
  });

  it("answers 503 AGENT_UNAVAILABLE and reports the registry down while it is", async () => {
    expect((await h.request("GET", "/readyz")).body).toMatchObject({ dependencies: { registry: "up" } });
    // Authenticate once while the registry is up so the key is cached; then stop the registry.
    expect((await h.request("GET", "/v1/agents", { key: tenant.key })).status).toBe(200);
    await registry.stop("SIGKILL");
    const res = await h.request<ErrorBody>("GET", "/v1/agents", { key: tenant.key });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("AGENT_UNAVAILABLE");
    expect(res.body.error.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    const ready = await h.request("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: "ready", dependencies: { registry: "down" } });
  });
});
