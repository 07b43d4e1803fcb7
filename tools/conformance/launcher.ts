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
export type KeyName = "full" | "readOnly" | "revoked" | "pager" | "limited" | "quota" | "retry";

/** The one JSON line the launcher prints: everything a runner needs to reach the service and its controls. */
export interface LauncherInfo {
  /** The REST API's base URL, ending in `/v1`. */
  baseURL: string;
  /** Test controls (request counts and log, scripted provider answers, lost responses); see README.md. */
  controlURL: string;
  /** A webhook endpoint URL that takes every delivery (204): the sink under `controlURL`. */
  webhookURL: string;
  /** Plaintext API keys by name. */
  keys: Record<KeyName, string>;
  /** Account ids by name. */
  accounts: Record<"main" | "pager" | "limited" | "quota" | "retry", string>;
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
  "toolCalls",
]);

/** One request under `/v1/` as the launcher saw it, for `GET {controlURL}/requests?after=n`. */
export interface LoggedRequest {
  /** Its place among all `/v1/` requests, from 1. */
  seq: number;
  /** The name of the launcher key it was sent with (`other` for none or an unknown one). */
  key: string;
  method: string;
  /** The path with its query, as sent. */
  path: string;
  /** Its `Idempotency-Key` header, or null without one. */
  idempotencyKey: string | null;
  /**
   * How many requests with this key and this `Idempotency-Key` the launcher has seen so far, this one included
   * (1 for the first); null without an `Idempotency-Key`. A retry that reused its call's key counts 2.
   */
  idempotencyKeyUse: number | null;
  /** The status of its response once the gateway has answered (also when the response was lost); else null. */
  status: number | null;
  /** The response said `Idempotent-Replayed: true`. */
  replayed: boolean;
  /** The gateway answered it, and the launcher lost the response on purpose (`gateway/drop-response`). */
  dropped: boolean;
}

/**
 * A `gateway/drop-response` rule: lose the responses of the next `count` requests with this method and path, in
 * which a segment `*` stands for any one segment, such as an agent's id.
 */
interface DropRule {
  method: string;
  path: string;
  count: number;
  /** For a stream: the events sent before the connection is destroyed; unset: the whole response is lost. */
  afterEvents?: number;
}

function pathMatches(pattern: string, path: string): boolean {
  const wanted = pattern.split("/");
  const actual = path.split("/");
  return (
    wanted.length === actual.length &&
    wanted.every((segment, i) => (segment === "*" ? actual[i] !== "" : segment === actual[i]))
  );
}

const DROP_FIELDS = new Set(["count", "method", "path", "afterEvents"]);
/** The newest requests the log keeps; a runner reads only the few of its own step. */
const LOG_LIMIT = 2_000;

/**
 * Starts the real gateway (all-in-one: registry and conversation service embedded, SQLite in a temporary
 * directory) on 127.0.0.1 port 0, behind it a fake OpenAI-compatible provider, and seeds the accounts and keys
 * the conformance scenario needs.
 *
 * The same HTTP server also answers ` /
  _conformance; /*`: request counts per key and a log of the requests, so a
 * runner can tell how many attempts its SDK made and with which `Idempotency-Key`; scripted provider answers, so
 * failures and slow replies happen on cue; and lost responses, so that a retry meets a request that already ran.
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
  const keyNames = new Map<string, string>();
  const traffic = new Traffic();
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (path.startsWith("/_conformance/")) {
      control(req, res, path.slice("/_conformance".length), traffic, openai).catch((error: unknown) => {
        sendJson(res, 500, { error: String(error) });
      });
      return;
    }
    if (path.startsWith("/v1/")) {
      traffic.observe(req, res, keyNames.get(req.headers.authorization ?? "") ?? "other");
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
  const retry = await account("retry", UNLIMITED);
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
      retry: (await key(retry, "retry", SCOPES)).secret,
    },
    accounts: { main, pager, limited, quota, retry },
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

/**
 * What reached the gateway under `/v1/`: counts per key, a log of the newest requests with their Idempotency-Key
 * and outcome, and the rules that lose responses on purpose.
 */
class Traffic {
  readonly counts = new Map<string, number>();
  readonly log: LoggedRequest[] = [];
  readonly drops: DropRule[] = [];
  total = 0;
  readonly #keyUses = new Map<string, number>();

  /** Counts and logs a request on arrival, and watches its response for the status and the replay header. */
  observe(req: IncomingMessage, res: ServerResponse, key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.total += 1;
    const header = req.headers["idempotency-key"];
    const idempotencyKey = typeof header === "string" ? header : null;
    let idempotencyKeyUse: number | null = null;
    if (idempotencyKey !== null) {
      const use = `${key}\n${idempotencyKey}`;
      idempotencyKeyUse = (this.#keyUses.get(use) ?? 0) + 1;
      this.#keyUses.set(use, idempotencyKeyUse);
    }
    const entry: LoggedRequest = {
      seq: this.total,
      key,
      method: req.method ?? "",
      path: req.url ?? "",
      idempotencyKey,
      idempotencyKeyUse,
      status: null,
      replayed: false,
      dropped: false,
    };
    this.log.push(entry);
    if (this.log.length > LOG_LIMIT) this.log.splice(0, this.log.length - LOG_LIMIT);

    const answered = (status: number, headers: unknown) => {
      entry.status = status;
      entry.replayed = replayedHeader(headers) ?? String(res.getHeader("idempotent-replayed")) === "true";
    };
    const rule = this.#takeDrop(entry.method, entry.path.split("?")[0] ?? "");
    if (rule?.afterEvents !== undefined) {
      entry.dropped = true;
      cutStream(res, rule.afterEvents);
    } else if (rule) {
      entry.dropped = true;
      loseResponse(res, answered);
      return;
    }
    // Node's implicit headers (a plain res.end) go through writeHead too.
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
      answered(
        status,
        rest.find((part) => typeof part === "object" && part !== null),
      );
      return (writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest);
    } as ServerResponse["writeHead"];
  }

  #takeDrop(method: string, path: string): DropRule | undefined {
    const index = this.drops.findIndex((rule) => rule.method === method && pathMatches(rule.path, path));
    if (index === -1) return undefined;
    const rule = this.drops[index]!;
    rule.count -= 1;
    if (rule.count === 0) this.drops.splice(index, 1);
    return rule;
  }
}

/** The `Idempotent-Replayed` value among headers given to writeHead, when they name it. */
function replayedHeader(headers: unknown): boolean | undefined {
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === "idempotent-replayed") return String(value) === "true";
  }
  return undefined;
}

/**
 * Lets the gateway handle the request to its end, then destroys the connection instead of sending the response:
 * to the client, a request whose answer was lost on the way.
 */
function loseResponse(res: ServerResponse, answered: (status: number, headers: unknown) => void): void {
  let lost = false;
  const lose = (headers?: unknown) => {
    if (lost) return;
    lost = true;
    answered(res.statusCode, headers);
    res.socket?.destroy();
  };
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    res.statusCode = status;
    lose(rest.find((part) => typeof part === "object" && part !== null));
    return this;
  } as ServerResponse["writeHead"];
  res.write = (() => {
    lose();
    return false;
  }) as ServerResponse["write"];
  res.end = function (this: ServerResponse) {
    lose();
    return this;
  } as ServerResponse["end"];
}

/**
 * Sends a stream's first `events` server-sent events (a `: ping` comment is not one), then destroys the
 * connection: to the client, a stream that broke in the middle, while the service goes on.
 */
function cutStream(res: ServerResponse, events: number): void {
  let sent = 0;
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (sent >= events) return false;
    const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : "";
    const written = write(chunk, ...rest);
    if (!text.startsWith(":")) sent += text.split("\n\n").length - 1;
    if (sent >= events) res.socket?.end(() => res.socket?.destroy());
    return written;
  }) as ServerResponse["write"];
}

async function control(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  traffic: Traffic,
  openai: FakeProviderServer<OpenAIChatBody>,
): Promise<void> {
  if (req.method === "GET" && path === "/requests") {
    const after = new URL(req.url ?? "", "http://launcher").searchParams.get("after");
    const answer: Record<string, unknown> = {
      total: traffic.total,
      byKey: Object.fromEntries(traffic.counts),
    };
    if (after !== null) {
      if (!/^\d+$/.test(after)) {
        sendJson(res, 400, { error: "after must be a request number (0 or more)" });
        return;
      }
      answer.log = traffic.log.filter((entry) => entry.seq > Number(after));
    }
    sendJson(res, 200, answer);
    return;
  }
  if (req.method === "POST" && path === "/gateway/drop-response") {
    const body = await readJson(req);
    const problem = dropRuleProblem(body);
    if (problem) {
      sendJson(res, 400, { error: problem });
      return;
    }
    const rule = body as { count?: number; method: string; path: string; afterEvents?: number };
    const count = rule.count ?? 1;
    const method = rule.method.toUpperCase();
    const existing = traffic.drops.find(
      (drop) => drop.method === method && drop.path === rule.path && drop.afterEvents === rule.afterEvents,
    );
    if (existing) existing.count += count;
    else
      traffic.drops.push({
        method,
        path: rule.path,
        count,
        ...(rule.afterEvents === undefined ? {} : { afterEvents: rule.afterEvents }),
      });
    sendJson(res, 200, { armed: existing ? existing.count : count });
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

/** Why a drop-response rule cannot be used, or undefined when it can. */
function dropRuleProblem(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return "send {method, path, count?} as an object";
  const rule = body as Record<string, unknown>;
  const unknown = Object.keys(rule).filter((field) => !DROP_FIELDS.has(field));
  if (unknown.length > 0) return `unknown fields: ${unknown.join(", ")}`;
  if (typeof rule.method !== "string" || !/^(GET|POST|PUT|PATCH|DELETE)$/i.test(rule.method))
    return "method must be GET, POST, PUT, PATCH or DELETE";
  if (typeof rule.path !== "string" || !rule.path.startsWith("/v1/") || rule.path.includes("?"))
    return "path must be a path under /v1/, without a query";
  if (rule.count !== undefined && (!Number.isInteger(rule.count) || (rule.count as number) < 1))
    return "count must be an integer of at least 1";
  if (
    rule.afterEvents !== undefined &&
    (!Number.isInteger(rule.afterEvents) || (rule.afterEvents as number) < 1)
  )
    return "afterEvents must be an integer of at least 1";
  return undefined;
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
