import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import type { Limits } from "@agentry/core";
import { freePort, startTestRedis, type TestRedis } from "@agentry/limits/testing";
import { AccountService, Tier } from "@agentry/proto";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { startTestPostgres, type TestPostgresServer } from "@agentry/testing-pg";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";

/**
 * The scaled-out system on loopback, every part its own process: a Postgres server and a Redis server that the
 * tests may restart or kill, a fake OpenAI, the conversation service, the webhooks service, the registry and
 * some gateways. Webhook endpoints may be on loopback (ALLOW_PRIVATE_NETWORKS=true), and failed deliveries are
 * retried within seconds.
 */
export interface Topology {
  postgres: TestPostgresServer;
  redis: TestRedis;
  openai: FakeProviderServer<OpenAIChatBody>;
  conversation: ServiceProcess;
  webhooks: ServiceProcess;
  registry: ServiceProcess;
  gateways: ServiceProcess[];
  /** Kills a service and starts it again on the same port, with the same configuration. */
  restart(service: "conversation" | "registry" | "webhooks"): Promise<ServiceProcess>;
  /** Starts a service killed with `stop` again on its port, with its configuration. */
  start(service: "conversation" | "registry" | "webhooks"): Promise<ServiceProcess>;
  /** Starts one more gateway. */
  addGateway(env?: Record<string, string>): Promise<ServiceProcess>;
  /** An account with the given limit overrides (enterprise tier) and a full-access key for it. */
  tenant(limits?: Partial<Limits>): Promise<{ accountId: string; key: string }>;
  close(): Promise<void>;
}

/** What every gateway and the registry are told callers reach the API at; events' `apiEndpoint` uses it. */
export const PUBLIC_BASE_URL = "https://agentry.system.test";

export async function startTopology(options: { gateways?: number } = {}): Promise<Topology> {
  const dataDir = await mkdtemp(join(tmpdir(), "agentry-system-"));
  const [postgres, redis, openai, registryPort, conversationPort, webhooksPort] = await Promise.all([
    startTestPostgres(),
    startTestRedis(),
    startFakeOpenAI(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const processes: ServiceProcess[] = [];
  const track = (service: ServiceProcess) => {
    processes.push(service);
    return service;
  };
  const conversationUrl = `http://127.0.0.1:${conversationPort}`;
  const webhooksUrl = `http://127.0.0.1:${webhooksPort}`;
  const env = {
    conversation: {
      DATABASE_URL: postgres.url,
      DATA_DIR: dataDir,
      CONVERSATION_PORT: String(conversationPort),
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: "sk-test",
      DEFAULT_MODEL_PROVIDER: "openai",
      // Message events go to the webhooks service.
      WEBHOOKS_URL: webhooksUrl,
      SHUTDOWN_TIMEOUT_MS: "2000",
    },
    webhooks: {
      DATABASE_URL: postgres.url,
      DATA_DIR: dataDir,
      WEBHOOKS_PORT: String(webhooksPort),
      ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_RETRY_SCHEDULE: "500ms,1s,2s,4s",
      // The shortest lease there is: what a killed worker had claimed is attempted again after it.
      WEBHOOK_LEASE_MS: "15000",
      SHUTDOWN_TIMEOUT_MS: "2000",
    },
    registry: {
      DATABASE_URL: postgres.url,
      DATA_DIR: dataDir,
      REGISTRY_PORT: String(registryPort),
      SECRETS_KEY: Buffer.alloc(32, 1).toString("base64"),
      CONVERSATION_URL: conversationUrl,
      WEBHOOKS_URL: webhooksUrl,
      PUBLIC_BASE_URL: PUBLIC_BASE_URL,
      SHUTDOWN_TIMEOUT_MS: "2000",
    },
  };
  const topology: Topology = {
    postgres,
    redis,
    openai,
    conversation: track(await startDeployable("services/conversation", env.conversation)),
    webhooks: track(await startDeployable("services/webhooks", env.webhooks)),
    registry: undefined as unknown as ServiceProcess,
    gateways: [],
    async restart(name) {
      await topology[name].stop("SIGKILL");
      return topology.start(name);
    },
    async start(name) {
      topology[name] = track(await startDeployable(`services/${name}`, env[name]));
      return topology[name];
    },
    async addGateway(extra = {}) {
      const gateway = track(
        await startDeployable("services/gateway", {
          PORT: "0",
          DATA_DIR: dataDir,
          REGISTRY_URL: topology.registry.url,
          CONVERSATION_URL: conversationUrl,
          WEBHOOKS_URL: webhooksUrl,
          PUBLIC_BASE_URL: PUBLIC_BASE_URL,
          REDIS_URL: redis.url,
          SHUTDOWN_TIMEOUT_MS: "10000",
          ...extra,
        }),
      );
      topology.gateways.push(gateway);
      return gateway;
    },
    async tenant(limits = {}) {
      const accounts = createClient(
        AccountService,
        createConnectTransport({ baseUrl: topology.registry.url, httpVersion: "2" }),
      );
      const { account } = await accounts.createAccount({
        name: `tenant-${Math.random().toString(36).slice(2)}`,
        tier: Tier.ENTERPRISE,
        limitOverrides: limits,
      });
      const { secret } = await accounts.createApiKey({ accountId: account!.id, name: "system-test" });
      return { accountId: account!.id, key: secret };
    },
    async close() {
      for (const service of processes) await service.stop("SIGKILL");
      await openai.close();
      await redis.stop();
      await postgres.destroy();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  try {
    topology.registry = track(await startDeployable("services/registry", env.registry));
    for (let i = 0; i < (options.gateways ?? 2); i++) await topology.addGateway();
    return topology;
  } catch (error) {
    await topology.close();
    throw error;
  }
}

/** A REST call with the key, JSON in and out. */
export async function call(
  gateway: ServiceProcess,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: res.headers,
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
