import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey } from "@agentry/core";
import { openRegistryStore } from "@agentry/registry";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let dataDir: string;
let key: string;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-durability-"));
  const store = await openRegistryStore({ dataDir });
  const account = await store.createAccount({
    name: "durable",
    tier: "enterprise",
    limitOverrides: {
      maxAgents: 100_000,
      requestsPerMinute: 1_000_000,
      createPerMinute: 1_000_000,
      getPerMinute: 1_000_000,
    },
  });
  const generated = generateApiKey();
  await store.createApiKey({
    accountId: account.id,
    name: "test",
    scopes: ["agents:read", "agents:write"],
    expiresAt: null,
    sha256: generated.sha256,
    prefix: generated.prefix,
  });
  await store.close();
  key = generated.secret;
});

afterAll(async () => {
  await service?.stop("SIGKILL");
  await rm(dataDir, { recursive: true, force: true });
});

describe("durability", () => {
  it("keeps every agent whose create was answered 201 when the process is killed with SIGKILL", async () => {
    service = await startDeployable("apps/server", { DATA_DIR: dataDir, PORT: "0" });
    const acknowledged: string[] = [];
    let killed = false;
    const worker = async (w: number) => {
      for (let i = 0; !killed; i++) {
        try {
          const res = await fetch(`${service!.url}/v1/agents`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ name: `w${w}-${i}` }),
          });
          if (res.status === 201) acknowledged.push(((await res.json()) as { data: { id: string } }).data.id);
        } catch {
          return; // the process is gone
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 20));
    await service.stop("SIGKILL");
    killed = true;
    await Promise.all(workers);
    expect(acknowledged.length).toBeGreaterThanOrEqual(200);

    const db = new Database(join(dataDir, "registry.db"));
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();

    service = await startDeployable("apps/server", { DATA_DIR: dataDir, PORT: "0" });
    const missing: string[] = [];
    for (const id of acknowledged) {
      const res = await fetch(`${service.url}/v1/agents/${id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      if (res.status !== 200) missing.push(id);
    }
    expect(missing).toEqual([]);
  });

  it("exits 0 on SIGTERM after finishing in-flight requests", async () => {
    await service?.stop("SIGKILL");
    service = await startDeployable("apps/server", { DATA_DIR: dataDir, PORT: "0" });
    const inFlight = Array.from({ length: 20 }, (_, i) =>
      fetch(`${service!.url}/v1/agents`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `term-${i}` }),
      }).then(
        (res) => res.status,
        () => "connection closed before the request was sent",
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    const code = await service.stop("SIGTERM");
    const outcomes = await Promise.all(inFlight);
    expect(code).toBe(0);
    // Every request the server read was answered in full; none was cut or failed.
    const answered = outcomes.filter((outcome) => typeof outcome === "number");
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.every((status) => status === 201)).toBe(true);
    expect(service.lines.some((line) => line.msg === "stopped")).toBe(true);
  });
});
