import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { fromConnectError } from "@agentry/errors";
import { silentLogger } from "@agentry/logging";
import { AccountService, AgentService } from "@agentry/proto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildRegistry, type Registry } from "../src/registry.js";
import { registryRoutes } from "../src/rpc/routes.js";
import { buildServer, type RegistryServer } from "../src/server.js";
import type { RegistryStore } from "../src/store/types.js";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

let dataDir: string;
let registry: Registry;
let server: RegistryServer | undefined;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-server-"));
  registry = await buildRegistry({ dataDir, logger: silentLogger() });
});
afterEach(async () => {
  await server?.shutdown();
  server = undefined;
  await registry.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(routes = registry.routes): Promise<string> {
  server = buildServer({ routes, ready: registry.ready, logger: silentLogger(), shutdownGraceMs: 60_000 });
  const { port } = await server.listen(0, "127.0.0.1");
  return `http://127.0.0.1:${port}`;
}

/** A GET over HTTP/2 without TLS, on a connection of its own. */
async function get(baseUrl: string, path: string): Promise<number> {
  const session = http2.connect(baseUrl);
  try {
    const request = session.request({ ":path": path });
    const [headers] = (await once(request, "response")) as [http2.IncomingHttpHeaders];
    request.resume();
    await once(request, "end");
    return Number(headers[":status"]);
  } finally {
    session.close();
  }
}

describe("registry server", () => {
  it("serves the RPCs over HTTP/2 (Connect and gRPC)", async () => {
    const baseUrl = await start();
    const transport = createConnectTransport({ baseUrl, httpVersion: "2" });
    const accounts = createClient(AccountService, transport);
    const agents = createClient(AgentService, transport);

    const { account } = await accounts.createAccount({ name: "acme" });
    const { agent } = await agents.createAgent({ accountId: account!.id, spec: { name: "over the wire" } });
    const grpc = createClient(AgentService, createGrpcTransport({ baseUrl }));
    expect((await grpc.getAgent({ accountId: account!.id, id: agent!.id })).agent).toEqual(agent);

    try {
      await agents.getAgent({ accountId: account!.id, id: "agt_missing" });
      expect.unreachable();
    } catch (error) {
      expect(fromConnectError(error)).toMatchObject({
        code: "AGENT_NOT_FOUND",
        message: "Agent agt_missing does not exist.",
      });
    }
  });

  it("answers /healthz always and /readyz while the store answers", async () => {
    const baseUrl = await start();
    expect(await get(baseUrl, "/healthz")).toBe(200);
    expect(await get(baseUrl, "/readyz")).toBe(200);
    expect(await get(baseUrl, "/nothing-here")).toBe(404);
    await registry.close();
    expect(await get(baseUrl, "/readyz")).toBe(503);
    expect(await get(baseUrl, "/healthz")).toBe(200);
  });

  it("finishes calls in flight on shutdown, without waiting on idle connections", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const slow: RegistryStore = {
      ...registry.store,
      listAccounts: async () => {
        entered();
        await held;
        return registry.store.listAccounts();
      },
    };
    const baseUrl = await start(registryRoutes({ store: slow, logger: silentLogger(), changed: () => {} }));
    const accounts = createClient(AccountService, createConnectTransport({ baseUrl, httpVersion: "2" }));
    await accounts.createAccount({ name: "acme" });

    const call = accounts.listAccounts({});
    await inside;
    const stopped = server!.shutdown();
    let stoppedEarly = false;
    void stopped.then(() => {
      stoppedEarly = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stoppedEarly).toBe(false);

    release();
    expect((await call).accounts.map((a) => a.name)).toEqual(["acme"]);
    await stopped;
    expect(server!.server.listening).toBe(false);
  });
});

describe("registry process", () => {
  it("starts from the environment, serves, and exits 0 on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: PACKAGE_DIR,
      env: { ...process.env, REGISTRY_PORT: "0", DATA_DIR: dataDir, LOG_FORMAT: "json", LOG_LEVEL: "info" },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const lines: Record<string, unknown>[] = [];
    const listening = new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout }).on("line", (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        lines.push(entry);
        if (entry.msg === "listening") resolve(entry.port as number);
      });
      child.once("exit", (code) => reject(new Error(`registry exited with ${code}: ${stderr}`)));
    });
    const exited = once(child, "exit");
    try {
      const port = await listening;
      const baseUrl = `http://127.0.0.1:${port}`;
      const accounts = createClient(AccountService, createConnectTransport({ baseUrl, httpVersion: "2" }));
      await accounts.createAccount({ name: "acme" });
      expect(await get(baseUrl, "/readyz")).toBe(200);

      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining(["account created", "stopping", "stopped"]),
      );
      expect(lines.every((l) => l.service === "registry")).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("stops with one clear line when the environment is invalid", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: PACKAGE_DIR,
      env: { ...process.env, REGISTRY_PORT: "not-a-port", DATA_DIR: dataDir },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain("REGISTRY_PORT");
  });
});
