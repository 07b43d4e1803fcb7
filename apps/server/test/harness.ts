import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LimitName, Scope } from "@agentry/core";
import { listen, type RunningServer } from "@agentry/gateway";
import { type Logger, silentLogger } from "@agentry/logging";
import { Tier } from "@agentry/proto";
import { composeServer, type Server } from "../src/compose.js";
import { loadServerConfig } from "../src/config.js";

export const PUBLIC_BASE_URL = "https://agents.example.test";

export interface TestResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** The error envelope's shape, for assertions. */
export interface ErrorBody {
  success: false;
  error: { code: string; message: string; details?: { field: string; issue: string }[]; requestId: string };
}

export interface Harness {
  url: string;
  dataDir: string;
  gateway: Server;
  /**
   * A new account (unique name) and a key with the given scopes (all when omitted). Without a tier it is an
   * enterprise account whose rate limits are too high to matter, so tests of other things never hit them;
   * `limits` overrides any of them (enterprise only).
   */
  tenant(options?: {
    scopes?: Scope[];
    tier?: Tier;
    maxAgents?: number;
    limits?: Partial<Record<LimitName, number>>;
  }): Promise<Tenant>;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

export interface Tenant {
  accountId: string;
  key: string;
  keyId: string;
  /** Another key of the same account with other scopes. */
  keyWith(scopes: Scope[]): Promise<{ key: string; keyId: string }>;
}

let counter = 0;

/** Rate and concurrency limits high enough that tests about other things never reach them. */
const UNLIMITED = {
  requestsPerMinute: 1_000_000,
  createPerMinute: 1_000_000,
  listPerMinute: 1_000_000,
  getPerMinute: 1_000_000,
  updatePerMinute: 1_000_000,
  deletePerMinute: 1_000_000,
  messagesPerMinute: 1_000_000,
  concurrentMessages: 1_000,
};

/** Starts the all-in-one server on port 0 over a fresh SQLite data directory. */
export async function startHarness(
  env: Record<string, string> = {},
  logger: Logger = silentLogger(),
  installed: Parameters<typeof composeServer>[2] = {},
): Promise<Harness> {
  const dataDir = await mkdtemp(join(tmpdir(), "agentry-gateway-"));
  const config = loadServerConfig({
    DATA_DIR: dataDir,
    PORT: "0",
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL,
    LOG_LEVEL: "silent",
    ...env,
  });
  const gateway = await composeServer(config, logger, installed);
  const running: RunningServer = await listen(gateway.app, 0, "127.0.0.1");
  const accounts = gateway.context.accounts;

  const newKey = async (accountId: string, scopes: Scope[]) => {
    const created = await accounts.createApiKey({ accountId, name: "test", scopes });
    return { key: created.secret, keyId: created.apiKey!.id };
  };

  return {
    url: running.url,
    dataDir,
    gateway,
    async tenant(options = {}) {
      counter += 1;
      const tier = options.tier ?? Tier.ENTERPRISE;
      const limitOverrides =
        tier === Tier.ENTERPRISE
          ? {
              ...(options.tier === undefined ? UNLIMITED : {}),
              ...(options.maxAgents !== undefined ? { maxAgents: options.maxAgents } : {}),
              ...options.limits,
            }
          : {};
      const { account } = await accounts.createAccount({
        name: `tenant-${process.pid}-${counter}-${Date.now()}`,
        tier,
        limitOverrides,
      });
      const { key, keyId } = await newKey(account!.id, options.scopes ?? []);
      return { accountId: account!.id, key, keyId, keyWith: (scopes) => newKey(account!.id, scopes) };
    },
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      let body: string | undefined;
      if (options.rawBody !== undefined) body = options.rawBody;
      else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      const response = await fetch(`${running.url}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      const text = await response.text();
      // An NDJSON export is answered as its text: its lines are JSON, the whole is not.
      const ndjson = (response.headers.get("content-type") ?? "").includes("application/x-ndjson");
      return {
        status: response.status,
        headers: response.headers,
        body: text ? (ndjson ? text : JSON.parse(text)) : {},
      };
    },
    async close() {
      await running.close(1000);
      await gateway.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
