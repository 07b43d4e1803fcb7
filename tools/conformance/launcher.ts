import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type FakeAnswer,
  type FakeProviderServer,
  type OpenAIChatBody,
  startFakeAnthropic,
  startFakeOpenAI,
} from "@agentry/conversation/testing";
import { SCOPES, type Scope } from "@agentry/core";
import { silentLogger } from "@agentry/logging";
import { type Limits, Tier } from "@agentry/proto";
import { composeServer, loadServerConfig, type Server } from "@agentry/server";

/** Where the scenario file is, for runners that take the launcher's word for it. */
export const SCENARIO_PATH = fileURLToPath(new URL("./scenario.json", import.meta.url));

/** The API keys the scenario uses, by the names its clients refer to. */
export type KeyName = "full" | "readOnly" | "revoked" | "pager" | "limited" | "quota";

/** The one JSON line the launcher prints: everything a runner needs to reach the service and its controls. */
export interface LauncherInfo {
  /** The REST API's base URL, ending in `/v1`. */
  baseURL: string;
  /** Test controls (request counts, scripted provider answers); see README.md. */
  controlURL: string;
  /** A webhook endpoint URL that takes every delivery (204): the sink under `controlURL`. */
  webhookURL: string;
  /** Plaintext API keys by name. */
  keys: Record<KeyName, string>;
  /** Account ids by name. */
  accounts: Record<"main" | "pager" | "limited" | "quota", string>;
  /** The limits the scenario relies on, as configured. */
  limits: { limited: { getPerMinute: number }; quota: { maxAgents: number } };
  /** Absolute path of scenario.json. */
  scenario: string;
  /** The service's DATA_DIR (a temporary directory), where the admin CLI reaches the same accounts. */
  dataDir: string;
  /** The model providers the service serves. */
  providers: LauncherProvider[];
  pid: number;
}

/** The providers a launcher can serve: `openai` always (a fake the controls script), the others on request. */
export type LauncherProvider = "openai" | "anthropic" | "local";

export interface LauncherOptions {
  /**
   * What the service serves (`["openai", "local"]` by default, as a deployment with only OpenAI configured).
   * `anthropic` adds a fake Anthropic server answering as the OpenAI one does by default; leaving out `local`
   * turns the in-process model off (LOCAL_ENABLED=false), so no message can wait on it.
   */
  providers?: readonly LauncherProvider[];
}

export interface Launcher {
  info: LauncherInfo;
  /** The temporary directory of the service's SQLite files, removed by `close`. */
  dataDir: string;
  close(): Promise<void>;
}

/** Limits high enough that the scenario never reaches them unless a step means to. */
const UNLIMITED: Partial<Omit<Limits, "$typeName">> = {
  requestsPerMinute: 1_000_000,
  createPerMinute: 1_000_000,
  listPerMinute: 1_000_000,
  getPerMinute: 1_000_000,
  updatePerMinute: 1_000_000,
  deletePerMinute: 1_000_000,
  messagesPerMinute: 1_000_000,
  concurrentMessages: 1_000,
};

const LIMITED_GETS_PER_MINUTE = 2;
const QUOTA_MAX_AGENTS = 1;
const PROVIDER_KEY = "sk-conformance";

/** Fields of a scripted provider answer a runner may send to `POST {controlURL}/provider/answer`. */
const ANSWER_FIELDS = new Set<keyof FakeAnswer>([
  "text",
  "chunks",
  "delayMs",
  "chunkDelayMs",
  "cutAfter",
  "finishReason",
  "status",
  "headers",
  "errorMessage",
]);

/**
 * Starts the real gateway (all-in-one: registry and conversation service embedded, SQLite in a temporary
 * directory) on 127.0.0.1 port 0, behind it a fake OpenAI-compatible provider, and seeds the accounts and keys
 * the conformance scenario needs.
 *
 * The same HTTP server also answers `/_conformance/*`: request counts per key, so a runner can tell how many
 * attempts its SDK made, and scripted provider answers, so failures and slow replies happen on cue.
 */
export async function startLauncher(options: LauncherOptions = {}): Promise<Launcher> {
  const providers = options.providers ?? ["openai", "local"];
  if (!providers.includes("openai"))
    throw new Error("the launcher always serves openai, which its controls script");
  const dataDir = await mkdtemp(join(tmpdir(), "agentry-conformance-"));
  const openai = await startFakeOpenAI({ apiKey: PROVIDER_KEY });
  const anthropic = providers.includes("anthropic")
    ? await startFakeAnthropic({ apiKey: PROVIDER_KEY })
    : undefined;

  // The server listens before the gateway exists so that PUBLIC_BASE_URL (and so apiEndpoint) is its real origin.
  let gatewayHandler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const counts = new Map<string, number>();
  const keyNames = new Map<string, string>();
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (path.startsWith("/_conformance/")) {
      control(req, res, path.slice("/_conformance".length), counts, openai).catch((error: unknown) => {
        sendJson(res, 500, { error: String(error) });
      });
      return;
    }
    if (path.startsWith("/v1/")) {
      const name = keyNames.get(req.headers.authorization ?? "") ?? "other";
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    if (!gatewayHandler) {
      sendJson(res, 503, { error: "starting" });
      return;
    }
    gatewayHandler(req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let gateway: Server;
  try {
    const config = loadServerConfig({
      DATA_DIR: dataDir,
      PORT: "0",
      HOST: "127.0.0.1",
      PUBLIC_BASE_URL: origin,
      LOG_LEVEL: "silent",
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: PROVIDER_KEY,
      DEFAULT_MODEL_PROVIDER: "openai",
      ...(anthropic ? { ANTHROPIC_BASE_URL: anthropic.baseURL, ANTHROPIC_API_KEY: PROVIDER_KEY } : {}),
      LOCAL_ENABLED: String(providers.includes("local")),
      // Webhook endpoints here are on loopback: the launcher's own webhook sink, or a test's receiver.
      ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_RETRY_SCHEDULE: "1s,2s",
    });
    gateway = await composeServer(config, silentLogger());
  } catch (error) {
    server.close();
    await openai.close();
    await anthropic?.close();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  gatewayHandler = gateway.app.callback();

  const accounts = gateway.context.accounts;
  const account = async (name: string, limitOverrides: Partial<Omit<Limits, "$typeName">>) => {
    const { account: created } = await accounts.createAccount({
      name: `conformance-${name}`,
      tier: Tier.ENTERPRISE,
      limitOverrides,
    });
    return created!.id;
  };
  const key = async (accountId: string, name: KeyName, scopes: readonly Scope[]) => {
    const created = await accounts.createApiKey({ accountId, name, scopes: [...scopes] });
    keyNames.set(`Bearer ${created.secret}`, name);
    return { secret: created.secret, id: created.apiKey!.id };
  };

  const main = await account("main", UNLIMITED);
  const pager = await account("pager", UNLIMITED);
  const limited = await account("limited", { ...UNLIMITED, getPerMinute: LIMITED_GETS_PER_MINUTE });
  const quota = await account("quota", { ...UNLIMITED, maxAgents: QUOTA_MAX_AGENTS });
  const revoked = await key(main, "revoked", SCOPES);
  await accounts.revokeApiKey({ accountId: main, id: revoked.id });

  const info: LauncherInfo = {
    baseURL: `${origin}/v1`,
    controlURL: `${origin}/_conformance`,
    webhookURL: `${origin}/_conformance/webhooks/sink`,
    keys: {
      full: (await key(main, "full", SCOPES)).secret,
      readOnly: (await key(main, "readOnly", ["agents:read"])).secret,
      revoked: revoked.secret,
      pager: (await key(pager, "pager", SCOPES)).secret,
      limited: (await key(limited, "limited", SCOPES)).secret,
      quota: (await key(quota, "quota", SCOPES)).secret,
    },
    accounts: { main, pager, limited, quota },
    limits: {
      limited: { getPerMinute: LIMITED_GETS_PER_MINUTE },
      quota: { maxAgents: QUOTA_MAX_AGENTS },
    },
    scenario: SCENARIO_PATH,
    dataDir,
    providers: [...providers],
    pid: process.pid,
  };

  let closing: Promise<void> | undefined;
  return {
    info,
    dataDir,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => server.closeAllConnections(), 1000);
          force.unref();
          server.close(() => {
            clearTimeout(force);
            resolve();
          });
          server.closeIdleConnections();
        });
        await gateway.close();
        await openai.close();
        await anthropic?.close();
        await rm(dataDir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

async function control(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  counts: Map<string, number>,
  openai: FakeProviderServer<OpenAIChatBody>,
): Promise<void> {
  if (req.method === "GET" && path === "/requests") {
    let total = 0;
    for (const count of counts.values()) total += count;
    sendJson(res, 200, { total, byKey: Object.fromEntries(counts) });
    return;
  }
  if (req.method === "POST" && path === "/provider/answer") {
    const body = await readJson(req);
    const answers = Array.isArray(body) ? body : [body];
    for (const answer of answers) {
      if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
        sendJson(res, 400, { error: "send an answer object or an array of them" });
        return;
      }
      const unknown = Object.keys(answer).filter((field) => !ANSWER_FIELDS.has(field as keyof FakeAnswer));
      if (unknown.length > 0) {
        sendJson(res, 400, { error: `unknown answer fields: ${unknown.join(", ")}` });
        return;
      }
    }
    for (const answer of answers) openai.answer(answer as FakeAnswer);
    sendJson(res, 200, { queued: answers.length });
    return;
  }
  if (req.method === "POST" && path === "/provider/reset") {
    openai.reset();
    sendJson(res, 200, { reset: true });
    return;
  }
  if (req.method === "POST" && path.startsWith("/webhooks/")) {
    req.resume();
    req.on("end", () => {
      res.writeHead(204).end();
    });
    return;
  }
  sendJson(res, 404, { error: `no control ${req.method} ${path}` });
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(parts).toString("utf8") || "null"));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}
