import { randomBytes } from "node:crypto";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { openTestDatabase, type TestDatabase } from "@agentry/testing-pg";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * What the platform connectors' end-to-end tests share: the whole all-in-one server, the fake OpenAI server as the
 * agents' model, a local fake of the platform, and agents given their bot's secrets through the public API.
 */

export interface ConnectorServer<Fake> {
  openai: FakeProviderServer<OpenAIChatBody>;
  fake: Fake;
  h: Harness;
  tenant: Tenant;
  /** The server's environment: the model, the platform's address and quick connector timings. */
  env: Record<string, string>;
}

/**
 * Starts the fake model, the platform's fake (`startFake`) and a server on both before the file's tests, resets the
 * model's script before each, and closes all after. The returned object is filled in by then.
 */
export function connectorServer<Fake extends { close(): Promise<void> }>(
  startFake: () => Promise<Fake>,
  platformEnv: (fake: Fake) => Record<string, string>,
): ConnectorServer<Fake> {
  const server = {} as ConnectorServer<Fake>;
  beforeAll(async () => {
    server.openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
    server.fake = await startFake();
    server.env = {
      ...modelEnv(server.openai),
      CONNECTORS_SYNC_INTERVAL_MS: "250",
      ...platformEnv(server.fake),
    };
    server.h = await startHarness(server.env);
    server.tenant = await server.h.tenant();
  });
  afterAll(async () => {
    await server.h?.close();
    await server.fake?.close();
    await server.openai?.close();
  });
  beforeEach(() => server.openai.reset());
  return server;
}

/** The server's model: the fake OpenAI server. */
export function modelEnv(openai: FakeProviderServer<OpenAIChatBody>): Record<string, string> {
  return {
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
  };
}

/** Reads `read` until `done` holds, failing after `ms`. */
export async function until<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  ms = 8_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Lets `ms` pass, for what must not happen. */
export const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates an agent with `clients` and sets `secrets` on it; its id. */
export async function platformAgent(
  on: Harness,
  tenant: Tenant,
  agent: { name: string; clients: unknown[] },
  secrets: Record<string, string>,
): Promise<string> {
  const created = await on.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: agent,
  });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  for (const [name, value] of Object.entries(secrets)) await putSecret(on, tenant, id, name, value);
  return id;
}

export async function putSecret(
  on: Harness,
  tenant: Tenant,
  id: string,
  name: string,
  value: string,
): Promise<void> {
  const put = await on.request("PUT", `/v1/agents/${id}/secrets/${name}`, {
    key: tenant.key,
    body: { value },
  });
  expect(put.status).toBe(200);
}

export interface AgentState {
  status: string;
  statusReason: { code: string } | null;
}

export async function agentState(on: Harness, tenant: Tenant, id: string): Promise<AgentState> {
  return (await on.request<{ data: AgentState }>("GET", `/v1/agents/${id}`, { key: tenant.key })).body.data;
}

export interface ClientState {
  type: string;
  state: string;
  lastError: { code: string } | null;
}

/** `GET /v1/agents/{agentId}/clients`. */
export async function clientStates(on: Harness, tenant: Tenant, id: string): Promise<ClientState[]> {
  return (await on.request<{ data: ClientState[] }>("GET", `/v1/agents/${id}/clients`, { key: tenant.key }))
    .body.data;
}

export interface ConnectorReplicas<Fake> {
  openai: FakeProviderServer<OpenAIChatBody>;
  fake: Fake;
  /** Starts two servers on one new Postgres database with the same sealed secrets, as two replicas would run. */
  start(): Promise<[Harness, Harness]>;
  /** Stops one of them (the other is closed after the file's tests). */
  stop(server: Harness): Promise<void>;
}

/** The fake model and the platform's fake for two servers sharing Postgres; all closed after the file's tests. */
export function connectorReplicas<Fake extends { close(): Promise<void> }>(
  startFake: () => Promise<Fake>,
  platformEnv: (fake: Fake) => Record<string, string>,
): ConnectorReplicas<Fake> {
  let db: TestDatabase | undefined;
  const running = new Set<Harness>();
  const replicas = {
    async start() {
      if (!db) throw new Error("the database is not open yet");
      const env = {
        ...modelEnv(replicas.openai),
        ...platformEnv(replicas.fake),
        CONNECTORS_SYNC_INTERVAL_MS: "250",
        CONNECTORS_LEASE_MS: "3000",
        DATABASE_URL: await db.createDatabase(),
        // Both registries open the same sealed secrets.
        SECRETS_KEY: randomBytes(32).toString("base64"),
      };
      const pair: [Harness, Harness] = [await startHarness(env), await startHarness(env)];
      for (const server of pair) running.add(server);
      return pair;
    },
    async stop(server: Harness) {
      running.delete(server);
      await server.close();
    },
  } as ConnectorReplicas<Fake>;
  beforeAll(async () => {
    replicas.openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
    replicas.fake = await startFake();
    db = await openTestDatabase();
  }, 60_000);
  afterAll(async () => {
    for (const server of running) await server.close();
    await db?.close();
    await replicas.fake?.close();
    await replicas.openai?.close();
  });
  return replicas;
}
