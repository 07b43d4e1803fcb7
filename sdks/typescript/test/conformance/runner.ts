/**
 * The TypeScript runner of the cross-SDK conformance scenario (tools/conformance/scenario.json, format in
 * tools/conformance/README.md). It is also the reference for the other SDKs' runners: the pattern matcher, the
 * reference resolution and each operation's result shape are exactly what they must reproduce.
 */
import {
  Agentry,
  AgentryError,
  APIError,
  type MessageStreamEvent,
  type RequestOptions,
} from "../../src/index.js";

export interface LauncherInfo {
  baseURL: string;
  controlURL: string;
  keys: Record<string, string>;
  [other: string]: unknown;
}

export interface ClientSpec {
  key?: string;
  apiKey?: string;
  maxRetries?: number;
  maxRetryDelayMs?: number;
  timeoutMs?: number;
}

export interface Step {
  name: string;
  client?: string;
  call?: string;
  args?: Record<string, unknown>;
  control?: string;
  body?: unknown;
  expect?: {
    result?: unknown;
    error?: unknown;
    requests?: number;
    requestLog?: unknown;
    rateLimit?: unknown;
  };
  save?: string;
}

export interface Scenario {
  version: number;
  clients: Record<string, ClientSpec>;
  steps: Step[];
}

type Args = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: scenario arguments are JSON checked by the server, not the compiler.
type Loose = any;

/** The per-call options of a step: the caller's own `Idempotency-Key` when `args` gives one. */
function o(args: Args): RequestOptions {
  return typeof args.idempotencyKey === "string" ? { idempotencyKey: args.idempotencyKey } : {};
}

/** The scenario's operation names, each mapped to this SDK's call and its result in wire form. */
const OPERATIONS: Record<string, (client: Agentry, args: Args) => Promise<unknown>> = {
  "agents.create": (c, a) => c.agents.create(a.body as Loose, o(a)),
  "agents.get": (c, a) => c.agents.get(a.agentId as string),
  "agents.update": (c, a) => c.agents.update(a.agentId as string, a.body as Loose, o(a)),
  "agents.delete": (c, a) => c.agents.delete(a.agentId as string, o(a)),
  "agents.list": (c, a) => pageForm(c.agents.list(a.query as Loose)),
  "agents.listPages": async (c, a) => {
    const pages = [];
    for await (const page of (await c.agents.list(a.query as Loose)).iterPages())
      pages.push({ data: page.data, pagination: page.pagination });
    return pages;
  },
  "agents.listAll": async (c, a) => {
    const agents = [];
    for await (const agent of c.agents.list(a.query as Loose)) agents.push(agent);
    return agents;
  },
  "agents.messages.send": (c, a) => c.agents.messages.send(a.agentId as string, a.body as Loose, o(a)),
  "agents.messages.streamText": (c, a) =>
    c.agents.messages.stream(a.agentId as string, a.body as Loose, o(a)).text(),
  "agents.messages.streamFinalMessage": (c, a) =>
    c.agents.messages.stream(a.agentId as string, a.body as Loose, o(a)).finalMessage(),
  "apiKeys.create": (c, a) => c.apiKeys.create(a.body as Loose, o(a)),
  "apiKeys.list": (c) => c.apiKeys.list(),
  "apiKeys.revoke": (c, a) => c.apiKeys.revoke(a.keyId as string, o(a)),
  "agents.messages.list": (c, a) => pageForm(c.agents.messages.list(a.agentId as string, a.query as Loose)),
  "agents.messages.listAll": (c, a) => c.agents.messages.listAll(a.agentId as string, a.query as Loose),
  "agents.messages.get": (c, a) => c.agents.messages.get(a.agentId as string, a.messageId as string),
  "agents.messages.sendBackground": (c, a) =>
    c.agents.messages.sendBackground(a.agentId as string, a.body as Loose, o(a)),
  "agents.messages.getBackground": (c, a) =>
    c.agents.messages.getBackground(a.agentId as string, a.messageId as string),
  "agents.messages.waitForBackground": (c, a) =>
    c.agents.messages.waitForBackground(a.agentId as string, a.messageId as string, {
      pollInterval: 50,
      maxWait: 30_000,
    }),
  "agents.conversations.list": (c, a) =>
    pageForm(c.agents.conversations.list(a.agentId as string, a.query as Loose)),
  "agents.conversations.listAll": (c, a) =>
    c.agents.conversations.listAll(a.agentId as string, a.query as Loose),
  "agents.conversations.delete": (c, a) =>
    c.agents.conversations.delete(a.agentId as string, a.conversationId as string, o(a)),
  "users.export": async (c, a) => {
    const messages = [];
    for await (const message of c.users.export(a.userId as string)) messages.push(message);
    return messages;
  },
  "users.erase": (c, a) => c.users.erase(a.userId as string, o(a)),
  "usage.get": (c, a) => c.usage.get(a.query as Loose),
  "agents.usage.get": (c, a) => c.agents.usage.get(a.agentId as string, a.query as Loose),
  "agents.importCharacter": (c, a) =>
    c.agents.importCharacter(a.body as Loose, { dryRun: a.dryRun === true }, o(a)),
  "agents.exportCharacter": (c, a) => c.agents.exportCharacter(a.agentId as string),
  "webhookEndpoints.create": (c, a) => c.webhookEndpoints.create(a.body as Loose, o(a)),
  "webhookEndpoints.list": (c) => c.webhookEndpoints.list(),
  "webhookEndpoints.get": (c, a) => c.webhookEndpoints.get(a.webhookId as string),
  "webhookEndpoints.update": (c, a) =>
    c.webhookEndpoints.update(a.webhookId as string, a.body as Loose, o(a)),
  "webhookEndpoints.delete": (c, a) => c.webhookEndpoints.delete(a.webhookId as string, o(a)),
  "webhookEndpoints.rotateSecret": (c, a) => c.webhookEndpoints.rotateSecret(a.webhookId as string, o(a)),
  "webhookEndpoints.sendTestEvent": (c, a) => c.webhookEndpoints.sendTestEvent(a.webhookId as string, o(a)),
  "webhookEndpoints.deliveries.list": (c, a) =>
    pageForm(c.webhookEndpoints.deliveries.list(a.webhookId as string, a.query as Loose)),
  "webhookEndpoints.deliveries.listAll": (c, a) =>
    c.webhookEndpoints.deliveries.listAll(a.webhookId as string, a.query as Loose),
  "webhookEndpoints.deliveries.redeliver": (c, a) =>
    c.webhookEndpoints.deliveries.redeliver(a.webhookId as string, a.deliveryId as string, o(a)),
  "plugins.list": (c) => c.plugins.list(),
  "agents.secrets.set": (c, a) =>
    c.agents.secrets.set(a.agentId as string, a.name as string, a.body as { value: string }, o(a)),
  "agents.secrets.list": (c, a) => c.agents.secrets.list(a.agentId as string),
  "agents.secrets.delete": (c, a) => c.agents.secrets.delete(a.agentId as string, a.name as string, o(a)),
};

/** A first page in the scenario's page form. */
async function pageForm(
  pending: PromiseLike<{ data: unknown[]; pagination: unknown; hasNextPage(): boolean }>,
) {
  const page = await pending;
  return { data: page.data, pagination: page.pagination, hasNextPage: page.hasNextPage() };
}

/** A stream's result is what was received before it ended, even when it ended in an error. */
async function streamOperation(client: Agentry, args: Args): Promise<{ result: unknown; error?: unknown }> {
  const events: MessageStreamEvent[] = [];
  let text = "";
  try {
    for await (const event of client.agents.messages.stream(
      args.agentId as string,
      args.body as Loose,
      o(args),
    )) {
      events.push(event);
      if (event.type === "message.delta") text += event.data.text;
    }
    return { result: { events, text } };
  } catch (error) {
    return { result: { events, text }, error };
  }
}

/** An SDK error in the scenario's wire form; anything else is a bug of the runner or SDK and is rethrown. */
function errorForm(error: unknown) {
  if (!(error instanceof AgentryError)) throw error;
  const api = error instanceof APIError ? error : undefined;
  return {
    type: error.name,
    status: api?.status ?? null,
    code: api?.code ?? null,
    message: error.message,
    requestId: api?.requestId ?? null,
    details: api?.details ?? null,
    retryAfter: api?.retryAfter ?? null,
  };
}

const REFERENCE = /^\$[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*$/;

/** Replaces every string value `$name.path` by the value it names; keys are left alone. */
export function resolve(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === "string" && REFERENCE.test(value)) {
    let current: unknown = vars;
    for (const part of value.slice(1).split(".")) {
      if (typeof current !== "object" || current === null || !(part in current))
        throw new Error(`unresolved reference ${value}`);
      current = (current as Record<string, unknown>)[part];
    }
    return current;
  }
  if (Array.isArray(value)) return value.map((item) => resolve(item, vars));
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, vars)]));
  return value;
}

const isOperatorObject = (pattern: object) =>
  !Array.isArray(pattern) &&
  Object.keys(pattern).length > 0 &&
  Object.keys(pattern).every((k) => k[0] === "$");

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Where `actual` fails to match `pattern` (README, "Patterns"), or null when it matches. */
export function mismatch(pattern: unknown, actual: unknown, path = "$"): string | null {
  if (pattern === null) return actual === null || actual === undefined ? null : `${path}: expected null`;
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== pattern.length)
      return `${path}: expected ${pattern.length} items, got ${actual.length}: ${JSON.stringify(actual)}`;
    for (const [i, item] of pattern.entries()) {
      const found = mismatch(item, actual[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (typeof pattern === "object" && isOperatorObject(pattern)) {
    for (const [op, operand] of Object.entries(pattern as Record<string, Loose>)) {
      const fail = (what: string) => `${path}: ${what}, got ${JSON.stringify(actual)}`;
      if (op === "$regex") {
        if (typeof actual !== "string" || !new RegExp(operand).test(actual))
          return fail(`expected /${operand}/`);
      } else if (op === "$type") {
        const type = typeOf(actual);
        if (type !== operand && !(operand === "number" && type === "integer"))
          return fail(`expected ${operand}`);
      } else if (op === "$gte" || op === "$lte" || op === "$gt" || op === "$lt") {
        const ok =
          typeof actual === "number" &&
          (op === "$gte"
            ? actual >= operand
            : op === "$lte"
              ? actual <= operand
              : op === "$gt"
                ? actual > operand
                : actual < operand);
        if (!ok) return fail(`expected ${op} ${operand}`);
      } else if (op === "$length") {
        if (!(Array.isArray(actual) || typeof actual === "string") || actual.length !== operand)
          return fail(`expected length ${operand}`);
      } else if (op === "$contains") {
        if (!Array.isArray(actual)) return fail("expected an array");
        for (const wanted of operand as unknown[]) {
          if (!actual.some((item) => mismatch(wanted, item) === null))
            return fail(`expected an item matching ${JSON.stringify(wanted)}`);
        }
      } else {
        return `${path}: unknown operator ${op}`;
      }
    }
    return null;
  }
  if (typeof pattern === "object") {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual))
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, item] of Object.entries(pattern)) {
      const found = mismatch(item, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (found) return found;
    }
    return null;
  }
  return pattern === actual
    ? null
    : `${path}: expected ${JSON.stringify(pattern)}, got ${JSON.stringify(actual)}`;
}

interface RequestCounts {
  total: number;
  byKey: Record<string, number>;
  /** With `?after=n`: the requests after the n-th. */
  log?: { key: string }[];
}

/** The launcher's request counts, and with `after`, its log of the requests since then. */
async function requestCounts(launcher: LauncherInfo, after?: number): Promise<RequestCounts> {
  const query = after === undefined ? "" : `?after=${after}`;
  const response = await fetch(`${launcher.controlURL}/requests${query}`);
  return (await response.json()) as RequestCounts;
}

/** Runs the steps in order; `vars` starts as `{ launcher }` and gains each step's `save`. */
export class ScenarioRun {
  readonly vars: Record<string, unknown>;

  constructor(
    private readonly scenario: Scenario,
    private readonly launcher: LauncherInfo,
  ) {
    this.vars = { launcher };
  }

  /** Runs one step; throws an Error naming what did not match. */
  async step(step: Step): Promise<void> {
    if (step.control !== undefined) {
      const response = await fetch(`${this.launcher.controlURL}/${step.control}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(resolve(step.body ?? {}, this.vars)),
      });
      if (!response.ok)
        throw new Error(`control ${step.control}: ${response.status} ${await response.text()}`);
      return;
    }
    const spec = this.scenario.clients[step.client ?? "default"];
    if (!spec) throw new Error(`unknown client ${step.client}`);
    const resolved = resolve(spec, this.vars) as ClientSpec;
    const client = new Agentry({
      apiKey: resolved.key !== undefined ? this.launcher.keys[resolved.key] : resolved.apiKey,
      baseURL: this.launcher.baseURL,
      ...(resolved.maxRetries !== undefined ? { maxRetries: resolved.maxRetries } : {}),
      ...(resolved.maxRetryDelayMs !== undefined ? { maxRetryDelay: resolved.maxRetryDelayMs } : {}),
      ...(resolved.timeoutMs !== undefined ? { timeout: resolved.timeoutMs } : {}),
    });
    const expect = (resolve(step.expect ?? {}, this.vars) ?? {}) as NonNullable<Step["expect"]>;
    const args = resolve(step.args ?? {}, this.vars) as Args;
    const counting =
      (expect.requests !== undefined || expect.requestLog !== undefined) && resolved.key !== undefined;
    const before = counting ? await requestCounts(this.launcher) : undefined;

    let outcome: { result?: unknown; error?: unknown };
    if (step.call === "agents.messages.stream") {
      outcome = await streamOperation(client, args);
    } else {
      const operation = OPERATIONS[step.call ?? ""];
      if (!operation) throw new Error(`unknown operation ${step.call}`);
      try {
        outcome = { result: await operation(client, args) };
      } catch (error) {
        outcome = { error };
      }
    }
    const result = outcome.result === undefined ? undefined : JSON.parse(JSON.stringify(outcome.result));
    const error = outcome.error === undefined ? undefined : errorForm(outcome.error);

    const problems: string[] = [];
    if (expect.error === undefined && error) problems.push(`unexpected error: ${JSON.stringify(error)}`);
    if (expect.error !== undefined) {
      const found = error
        ? mismatch(expect.error, error, "error")
        : "error: expected an error, the call succeeded";
      if (found) problems.push(found);
    }
    if (expect.result !== undefined) {
      const found = mismatch(expect.result, result, "result");
      if (found) problems.push(found);
    }
    if (expect.rateLimit !== undefined) {
      const state = client.lastRateLimit;
      const wire = state && {
        limit: state.limit,
        remaining: state.remaining,
        reset: Math.round(state.resetAt.getTime() / 1000),
      };
      const found = mismatch(expect.rateLimit, wire, "rateLimit");
      if (found) problems.push(found);
    }
    if (counting && before) {
      const key = resolved.key!;
      const after = await requestCounts(this.launcher, before.total);
      const made = (after.byKey[key] ?? 0) - (before.byKey[key] ?? 0);
      if (expect.requests !== undefined && made !== expect.requests)
        problems.push(`requests: expected ${expect.requests}, the server saw ${made}`);
      if (expect.requestLog !== undefined) {
        const log = (after.log ?? []).filter((entry) => entry.key === key);
        const found = mismatch(expect.requestLog, log, "requestLog");
        if (found) problems.push(found);
      }
    }
    if (problems.length > 0) throw new Error(`step "${step.name}":\n  ${problems.join("\n  ")}`);
    if (step.save !== undefined) this.vars[step.save] = result;
  }
}
