import { createHash, createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeTelegram, startFakeTelegram } from "@agentry/connectors/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { type Scope, sha256Hex } from "@agentry/core";
import { ROUTES } from "@agentry/gateway";
import {
  BODY_LIMIT_BYTES,
  buildOpenApiDocument,
  COMMITTED_DOCUMENT,
  COMMITTED_DOCUMENT_URL,
  committedDocument,
  type OpenApiDocument,
  openApiPath,
  REGENERATE_COMMAND,
} from "@agentry/gateway/openapi";
import { definePlugin, defineTool } from "@agentry/plugin-kit";
import { builtinPlugins } from "@agentry/plugins";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Router } from "@koa/router";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, PUBLIC_BASE_URL, startHarness, type Tenant } from "./harness.js";
import { parseEventStream, type SseEvent } from "./sse.js";

type Json = Record<string, unknown>;

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const MISSING_AGENT = "agt_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_KEY = "key_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_MEMBER = "usr_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_CONVERSATION = "conv_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_MESSAGE = "msg_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_WEBHOOK = "whk_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_DELIVERY = "dlv_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_MEMORY = "mem_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_DOCUMENT = "doc_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_SCHEDULE = "sch_01JAAAAAAAAAAAAAAAAAAAAAAA";
const MISSING_BUDGET = "bdg_01JAAAAAAAAAAAAAAAAAAAAAAA";
/** Nothing listens there: deliveries to it fail, which no test here waits for. */
const WEBHOOK_URL = "http://127.0.0.1:9/hook";

/** A plugin whose tools answer and fail, for the tool events and `toolCalls` of replies and history. */
const labPlugin = definePlugin({
  name: "lab",
  version: "1.0.0",
  description: "Test tools.",
  config: z.object({}),
  secrets: [],
  tools: [
    defineTool({
      name: "add",
      description: "Adds two numbers.",
      input: z.object({ a: z.number(), b: z.number() }),
      run: async ({ a, b }) => ({ sum: a + b }),
    }),
    defineTool({
      name: "fail",
      description: "Fails.",
      input: z.object({}),
      run: async () => {
        throw new Error("out of order");
      },
    }),
  ],
});

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;
let doc: OpenApiDocument;

let consoleDir: string;
let telegram: FakeTelegram;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  telegram = await startFakeTelegram();
  consoleDir = await mkdtemp(join(tmpdir(), "agentry-console-"));
  await mkdir(join(consoleDir, "assets"));
  await writeFile(join(consoleDir, "index.html"), "<!doctype html><title>console</title>");
  await writeFile(join(consoleDir, "assets", "main.js"), "export {};");
  h = await startHarness(
    {
      CONSOLE_DIR: consoleDir,
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: "sk-test-openai",
      DEFAULT_MODEL_PROVIDER: "openai",
      ALLOW_PRIVATE_NETWORKS: "true",
      TELEGRAM_API_URL: telegram.url,
      CONNECTORS_SYNC_INTERVAL_MS: "250",
    },
    undefined,
    { plugins: [...builtinPlugins, labPlugin] },
  );
  tenant = await h.tenant();
  doc = (await (await fetch(`${h.url}/v1/openapi.json`)).json()) as OpenApiDocument;
});
afterAll(async () => {
  await h.close();
  await telegram.close();
  await openai.close();
  await rm(consoleDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------
// Validating against the document: its component schemas, compiled by a JSON Schema 2020-12 validator.

const BASE = "https://agentry.invalid/schemas";
const SCHEMAS = "#/components/schemas/";

/** A copy whose refs to the document's schemas point at the validator's copy of them. */
function rebase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebase);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === "$ref" && typeof item === "string" && item.startsWith(SCHEMAS)
        ? `${BASE}#/$defs/${item.slice(SCHEMAS.length)}`
        : rebase(item),
    ]),
  );
}

const CONDITIONS = new Set(["if", "then", "else", "not"]);

/**
 * Responses are checked strictly: an object schema without `additionalProperties` gets `false`, so a field the
 * service sends but the document does not describe fails the test (the document itself lets clients tolerate
 * fields added later).
 */
function strict(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strict);
  if (typeof value !== "object" || value === null) return value;
  // The subschemas of a condition speak of some fields of an object that has others too: left as they are.
  const object = Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, CONDITIONS.has(key) ? item : strict(item)]),
  ) as Json;
  if (object.properties && object.additionalProperties === undefined) object.additionalProperties = false;
  return object;
}

/**
 * Ajv finds a discriminator's schemas by the `const` of each `oneOf` branch and refuses an explicit `mapping`
 * (which OpenAPI readers need, the event names not being schema names), so the checker's copy goes without it.
 */
function withoutDiscriminatorMapping(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDiscriminatorMapping);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (key === "discriminator" && typeof item === "object" && item !== null) {
        const { mapping: _, ...rest } = item as Json;
        return [key, rest];
      }
      return [key, withoutDiscriminatorMapping(item)];
    }),
  );
}

class SchemaChecker {
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument, strictObjects: boolean) {
    this.ajv = new Ajv2020({ strict: true, strictTypes: false, discriminator: true, allErrors: true });
    // `ajv-formats` is CommonJS; its `default` is the plugin under every module loader.
    formats.default(this.ajv);
    // The document's own annotation: whether an event ends the stream.
    this.ajv.addKeyword("x-terminal");
    const components = (document.components as { schemas: Json }).schemas;
    const schemas = withoutDiscriminatorMapping(strictObjects ? strict(components) : components);
    this.ajv.addSchema({ $id: BASE, $defs: rebase(schemas) as Json });
  }

  errors(schema: unknown, data: unknown): string | null {
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema) as Json);
      this.cache.set(key, validate);
    }
    return validate(data) ? null : this.ajv.errorsText(validate.errors, { separator: "\n" });
  }
}

let checker: SchemaChecker;
let lenient: SchemaChecker;
const covered = new Set<string>();

function resolve(value: unknown): Json {
  const ref = (value as Json | undefined)?.$ref;
  if (typeof ref !== "string") return value as Json;
  let target: unknown = doc;
  for (const part of ref.slice(2).split("/")) target = (target as Json)[part];
  return resolve(target);
}

function operation(operationId: string): { path: string; method: string; op: Json } {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId === operationId) return { path, method, op };
    }
  }
  throw new Error(`no operation ${operationId}`);
}

interface Received {
  status: number;
  headers: Headers;
  body: unknown;
}

/** Checks a real response against a documented one: content type, body schema, required headers, codes. */
function expectMatches(response: Json, res: Received, label: string): void {
  for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
    if (resolve(header).required) expect(res.headers.get(name), `${label}: header ${name}`).not.toBeNull();
  }
  if (response.content === undefined) {
    expect(res.body, `${label}: no body`).toEqual({});
    return;
  }
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
  const media = (response.content as Json | undefined)?.[type] as Json | undefined;
  expect(media, `${label}: documents ${type}`).toBeDefined();
  if (type === "application/json") {
    expect(checker.errors(media!.schema, res.body), `${label}: body ${JSON.stringify(res.body)}`).toBeNull();
  }
  const codes = response["x-error-codes"] as string[] | undefined;
  if (codes)
    expect(codes, `${label}: x-error-codes`).toContain((res.body as { error: { code: string } }).error.code);
}

/** Checks a response of an operation and records that the operation's status was exercised. */
function expectDocumented(operationId: string, res: Received): void {
  const { op } = operation(operationId);
  const documented = (op.responses as Json)[String(res.status)];
  expect(
    documented,
    `${operationId} documents status ${res.status}: ${JSON.stringify(res.body)}`,
  ).toBeDefined();
  expectMatches(resolve(documented), res, `${operationId} ${res.status}`);
  covered.add(`${operationId} ${res.status}`);
}

interface CallOptions {
  params?: Record<string, string>;
  query?: string;
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** Calls an operation by its operationId, as an SDK would, and checks the response against the document. */
async function call(operationId: string, options: CallOptions = {}): Promise<Received> {
  const { path, method } = operation(operationId);
  const hasBody = method === "post" || method === "patch" || method === "put";
  let url = path.replace(/\{(\w+)\}/g, (_, name: string) => options.params?.[name] ?? "");
  if (options.query) url += `?${options.query}`;
  const res = await h.request(method.toUpperCase(), url, {
    key: options.key === undefined ? tenant.key : options.key,
    ...(hasBody && options.body !== undefined ? { body: options.body } : {}),
    ...(hasBody && options.rawBody !== undefined ? { rawBody: options.rawBody } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  expectDocumented(operationId, res);
  return res;
}

/** The schema of one event of the stream: what the `text/event-stream` content's schema picks by its name. */
function streamEventSchema(event: SseEvent): Json | undefined {
  const response = resolve((operation("sendMessage").op.responses as Json)["200"]);
  const streamSchema = resolve(((response.content as Json)["text/event-stream"] as Json).schema);
  const mapping = (streamSchema.discriminator as { mapping: Record<string, string> }).mapping;
  const ref = mapping[event.event ?? ""];
  return ref === undefined ? undefined : resolve({ $ref: ref });
}

/**
 * Checks an event against the stream's schema as the SSE format presents it (`data` the JSON text after
 * `data:`), and its data against the `contentSchema` that the validator treats as an annotation only.
 */
function streamEventErrors(validator: SchemaChecker, event: SseEvent): string | null {
  const schema = streamEventSchema(event);
  if (schema === undefined) return `event ${event.event} is not documented`;
  const wire = { ...event, data: JSON.stringify(event.data) };
  const streamSchema = resolve((operation("sendMessage").op.responses as Json)["200"]).content as Json;
  const asSent = validator.errors((streamSchema["text/event-stream"] as Json).schema, wire);
  const dataSchema = ((schema.properties as Json).data as Json).contentSchema;
  return asSent ?? validator.errors(dataSchema, event.data);
}

function requestSchema(operationId: string): unknown {
  const body = operation(operationId).op.requestBody as Json;
  return ((body.content as Json)["application/json"] as Json).schema;
}

async function newWebhook(key = tenant.key): Promise<string> {
  const res = await call("createWebhook", { key, body: { url: WEBHOOK_URL, events: ["*"] } });
  expect(res.status).toBe(201);
  return (res.body as { data: { id: string } }).data.id;
}

async function newAgent(key = tenant.key): Promise<string> {
  const res = await call("createAgent", { key, body: { name: "Ada", bio: ["Counts things"] } });
  expect(res.status).toBe(201);
  return (res.body as { data: { id: string } }).data.id;
}

beforeAll(() => {
  checker = new SchemaChecker(doc, true);
  lenient = new SchemaChecker(doc, false);
});

// ---------------------------------------------------------------------------------------------------------

describe("the document", () => {
  it("is valid OpenAPI 3.1", async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
  });

  it("describes exactly the routes the gateway serves", () => {
    const router = h.gateway.app.middleware
      .map((middleware) => (middleware as { router?: Router }).router)
      .find((found) => found !== undefined)!;
    const served = new Set<string>();
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        if (method !== "HEAD") served.add(`${method} ${openApiPath(String(layer.path))}`);
      }
    }
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        if (METHODS.includes(method)) documented.add(`${method.toUpperCase()} ${path}`);
      }
    }
    expect([...documented].sort()).toEqual([...served].sort());
    for (const route of ROUTES) expect(served).toContain(`${route.method} ${openApiPath(route.path)}`);
  });

  it("names each operation's scope and rate limits as the route table does", () => {
    for (const route of ROUTES) {
      const op = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      const scopes = route.scope ? [route.scope] : [];
      expect(op["x-scopes"]).toEqual(scopes);
      expect(op.security).toEqual([{ bearerAuth: scopes }]);
      expect(op["x-rate-limits"]).toContain("requestsPerMinute");
      if (route.limit) expect(op["x-rate-limits"]).toContain(route.limit);
    }
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(ids).toEqual(expect.arrayContaining(["createAgent", "listAgents", "getAgent", "updateAgent"]));
    expect(ids).toEqual(expect.arrayContaining(["deleteAgent", "sendMessage", "createApiKey"]));
    expect(ids).toEqual(expect.arrayContaining(["listApiKeys", "revokeApiKey"]));
    expect(ids).toEqual(
      expect.arrayContaining(["listConversations", "deleteConversation", "listMessages", "getMessage"]),
    );
    expect(ids).toEqual(expect.arrayContaining(["exportUser", "eraseUser"]));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("is served with the configured public base URL, and is what the code builds for this deployment", async () => {
    expect(doc.servers).toEqual([{ url: PUBLIC_BASE_URL, description: "This service" }]);
    const providers = await h.gateway.context.providers.get();
    expect(providers?.providers.map((provider) => provider.name)).toEqual(["openai", "local"]);
    expect(doc).toEqual(buildOpenApiDocument({ routes: ROUTES, publicBaseUrl: PUBLIC_BASE_URL, providers }));
  });

  it("matches the committed copy for SDK generators", () => {
    // Compared as JSON text without layout, so key order counts and the formatter's line breaks do not.
    const committed = JSON.stringify(JSON.parse(readFileSync(COMMITTED_DOCUMENT_URL, "utf8")));
    expect(
      committed === JSON.stringify(committedDocument()),
      `${COMMITTED_DOCUMENT} is out of date with the gateway; regenerate it with \`${REGENERATE_COMMAND}\` and commit it`,
    ).toBe(true);
  });

  it("has examples that satisfy their own schemas", () => {
    let checked = 0;
    const visit = (value: unknown): void => {
      if (typeof value !== "object" || value === null) return;
      const schema = value as Json;
      if (Array.isArray(schema.examples) && schema.type !== undefined) {
        const { examples, ...rest } = schema;
        for (const example of examples as unknown[]) {
          expect(lenient.errors(rest, example), JSON.stringify(example)).toBeNull();
          checked += 1;
        }
      }
      Object.values(schema).forEach(visit);
    };
    visit((doc.components as Json).schemas);
    expect(checked).toBeGreaterThan(10);
  });

  it("gives a stream example whose events satisfy the event schemas", () => {
    const response = resolve((operation("sendMessage").op.responses as Json)["200"]);
    const media = (response.content as Json)["text/event-stream"] as Json;
    const { events } = parseEventStream(media.example as string);
    expect(events.length).toBeGreaterThan(2);
    for (const event of events) expect(streamEventErrors(lenient, event)).toBeNull();
  });
});

describe("agents", () => {
  it("create, get, list, update and delete answer as documented", async () => {
    const created = await call("createAgent", {
      body: {
        name: "  Ada  ",
        bio: ["Counts things"],
        personality: { tone: "dry" },
        knowledge: ["engines"],
        goals: ["help"],
        clients: ["discord", { type: "telegram", channel: "@ada" }],
        settings: { temperature: 0.7, maxTokens: 512, theme: { dark: true } },
        modelProvider: "openai",
        model: "gpt-4o-mini",
        plugins: ["time", { name: "calendar", enabled: false, config: { region: "eu" } }],
      },
    });
    expect(created.status).toBe(201);
    const id = (created.body as { data: { id: string } }).data.id;
    const read = await call("getAgent", { params: { agentId: id } });
    expect(read.status).toBe(200);
    const etag = { "if-none-match": read.headers.get("etag")! };
    expect((await call("getAgent", { params: { agentId: id }, headers: etag })).status).toBe(304);
    await newAgent();
    const listQuery = "page=1&limit=1&status=active&sortBy=name&order=asc";
    const page = await call("listAgents", { query: listQuery });
    expect(page.status).toBe(200);
    expect((page.body as { pagination: { hasMore: boolean } }).pagination.hasMore).toBe(true);
    const pageTag = { "if-none-match": page.headers.get("etag")! };
    expect((await call("listAgents", { query: listQuery, headers: pageTag })).status).toBe(304);
    const updated = await call("updateAgent", {
      params: { agentId: id },
      body: { status: "inactive", modelProvider: null, model: null, settings: { temperature: null } },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(updated.status).toBe(200);
    const stale = { "if-match": read.headers.get("etag")! };
    const staleUpdate = await call("updateAgent", {
      params: { agentId: id },
      body: { name: "x" },
      headers: stale,
    });
    expect(staleUpdate.status).toBe(412);
    expect((await call("deleteAgent", { params: { agentId: id }, headers: stale })).status).toBe(412);
    expect((await call("deleteAgent", { params: { agentId: id } })).status).toBe(200);
    for (const operationId of ["getAgent", "deleteAgent"]) {
      const missing = await call(operationId, { params: { agentId: id } });
      expect(missing.status).toBe(404);
    }
    const patchMissing = await call("updateAgent", {
      params: { agentId: MISSING_AGENT },
      body: { name: "x" },
    });
    expect(patchMissing.status).toBe(404);
    const malformed = await call("getAgent", { params: { agentId: "not-an-id" } });
    expect(malformed.status).toBe(404);
  });

  it("refuses what the request schemas refuse, and accepts what they accept", async () => {
    const agentId = await newAgent();
    const cases: [string, unknown, boolean][] = [
      ["createAgent", { name: "x" }, true],
      ["createAgent", { name: "a", settings: { temperature: null, maxTokens: 8192, extra: [1] } }, true],
      ["createAgent", {}, false],
      ["createAgent", { name: "" }, false],
      ["createAgent", { name: "   " }, false],
      ["createAgent", { name: "x".repeat(201) }, false],
      ["createAgent", { name: "a", bio: [""] }, false],
      ["createAgent", { name: "a", bio: [" \n"] }, false],
      ["createAgent", { name: "a", bio: Array(101).fill("x") }, false],
      ["createAgent", { name: "a", knowledge: ["x".repeat(10_001)] }, false],
      ["createAgent", { name: "a", status: "active" }, false],
      ["createAgent", { name: "a", id: MISSING_AGENT }, false],
      ["createAgent", { name: "a", mood: 1 }, false],
      ["createAgent", { name: "a", modelProvider: "acme" }, false],
      ["createAgent", { name: "a", personality: [] }, false],
      ["createAgent", { name: "a", clients: [{ channel: "x" }] }, false],
      ["createAgent", { name: "a", plugins: [{ name: "p", extra: 1 }] }, false],
      ["createAgent", { name: "a", settings: { temperature: 2.5 } }, false],
      ["createAgent", { name: "a", settings: { maxTokens: 0 } }, false],
      ["createAgent", { name: "a", settings: { maxTokens: 1.5 } }, false],
      ["createAgent", { name: "a", settings: { maxTokens: 8193 } }, false],
      ["createAgent", { name: ` \t${"x".repeat(200)}\u3000 ` }, true],
      ["createAgent", { name: "\u{1F600}".repeat(200) }, true],
      ["createAgent", { name: "\u{1F600}".repeat(201) }, false],
      ["createAgent", { name: "\ufeff\u2028" }, false],
      ["createAgent", { name: "\u001c" }, true],
      ["createAgent", { name: "a\u0000" }, false],
      ["createAgent", { name: "a", bio: ["\u{1F600}".repeat(10_000)] }, true],
      ["createAgent", { name: "a", bio: ["\u00a0"] }, false],
      ["createAgent", { name: "a", personality: { "k\u0000": 1 } }, false],
      ["createAgent", { name: "a", settings: { deep: [{ x: ["a\u0000"] }] } }, false],
      ["createAgent", { name: "a", clients: [{ type: "x", "\u0000": true }] }, false],
      ["createAgent", { name: "a", plugins: [{ name: "p", config: { a: { "\u0000b": 1 } } }] }, false],
      ["createAgent", { name: "a", model: ` ${"m".repeat(200)} ` }, true],
      ["createAgent", { name: "a", model: " " }, false],
      ["createAgent", { name: "a", modelProvider: "local", model: "gpt-4o" }, false],
      ["createAgent", { name: "a", modelProvider: "local", model: " SmolLM2-135M-Instruct " }, true],
      ["createAgent", { name: "a", modelProvider: "local" }, true],
      ["createAgent", { name: "a", modelProvider: "anthropic" }, true],
      ["createAgent", { name: "a", modelProvider: "llama_local" }, false],
      ["createAgent", { name: "a", model: "any-model-at-all" }, true],
      ["updateAgent", { modelProvider: "local", model: "gpt-4o" }, false],
      ["updateAgent", { modelProvider: "local", model: null }, true],
      ["updateAgent", { modelProvider: null, model: "gpt-4o" }, true],
      ["updateAgent", { name: "b", model: null }, true],
      ["updateAgent", { status: "error" }, false],
      ["updateAgent", { modelProvider: "acme" }, false],
      ["updateAgent", { settings: { temperature: -0.1 } }, false],
      ["updateAgent", { nope: 1 }, false],
      ["sendMessage", {}, false],
      ["sendMessage", { text: "x", background: true, stream: true }, false],
      ["sendMessage", { text: "x", onDisconnect: "later" }, false],
      ["sendMessage", { text: "" }, false],
      ["sendMessage", { text: "x".repeat(100_001) }, false],
      ["sendMessage", { text: "x", stream: "yes" }, false],
      ["sendMessage", { text: "x", context: [] }, false],
      ["sendMessage", { text: "x", userId: 5 }, false],
      ["sendMessage", { text: "x", roomId: "" }, false],
      ["sendMessage", { text: "x", mood: "happy" }, false],
      ["sendMessage", { text: "x", userId: "\u{1F600}".repeat(257) }, false],
      ["sendMessage", { text: "x\u0000" }, false],
      ["sendMessage", { text: "x", context: { a: [{ "\u0000": null }] } }, false],
      ["createApiKey", { name: "ci", scopes: ["agents:read"], expiresAt: "2099-01-01T00:00:00Z" }, true],
      ["createApiKey", { scopes: ["agents:fly"] }, false],
      ["createApiKey", { scopes: [] }, false],
      ["createApiKey", { scopes: ["agents:read", "agents:read"] }, false],
      ["createApiKey", { expiresAt: "tomorrow" }, false],
      ["createApiKey", { name: 3 }, false],
      ["createApiKey", { name: "   " }, true],
      ["createApiKey", { name: "\u{1F600}".repeat(201) }, false],
      ["createApiKey", { owner: "me" }, false],
    ];
    for (const [operationId, body, valid] of cases) {
      const label = `${operationId} ${JSON.stringify(body).slice(0, 80)}`;
      expect(lenient.errors(requestSchema(operationId), body) === null, `${label}: schema`).toBe(valid);
      const res = await call(operationId, { params: { agentId }, body });
      if (valid) expect(res.status, label).toBeLessThan(300);
      else {
        expect(res.status, label).toBe(400);
        expect((res.body as { error: { details?: unknown[] } }).error.details?.length, label).toBeGreaterThan(
          0,
        );
      }
    }
  });

  it("refuses an expiresAt in the past, the one rule its schema cannot state, and says so", async () => {
    const body = { expiresAt: "2001-01-01T00:00:00Z" };
    expect(lenient.errors(requestSchema("createApiKey"), body)).toBeNull();
    const expiresAt = ((resolve(requestSchema("createApiKey")).properties as Json).expiresAt as Json)
      .description;
    expect(expiresAt).toMatch(/in the future.*400 INVALID_REQUEST/);
    const res = await call("createApiKey", { body });
    expect(res.status).toBe(400);
    expect((res.body as { error: { details: unknown[] } }).error.details).toEqual([
      { field: "expiresAt", issue: "must be in the future" },
    ]);
  });

  it("refuses U+0000 in every string and object key of every request body, as its schema says", () => {
    const refusesNul = (pattern: unknown) =>
      typeof pattern === "string" && !new RegExp(pattern, "u").test("a\u0000b");
    const problems: string[] = [];
    const seen = new Set<unknown>();
    const visit = (schema: Json, where: string): void => {
      if (seen.has(schema)) return;
      seen.add(schema);
      if (typeof schema.$ref === "string") {
        visit(resolve(schema), schema.$ref);
        return;
      }
      const types = [schema.type].flat();
      const combined = ["anyOf", "oneOf", "allOf", "if"].some((key) => key in schema);
      const anyValue = schema.type === undefined && !combined;
      const fixed = schema.enum !== undefined || schema.const !== undefined || schema.format !== undefined;
      if ((anyValue || types.includes("string")) && !fixed && !refusesNul(schema.pattern))
        problems.push(`${where}: a string may hold U+0000`);
      const keys = schema.propertyNames as Json | undefined;
      if (
        (anyValue || types.includes("object")) &&
        schema.additionalProperties !== false &&
        !refusesNul(keys?.pattern)
      )
        problems.push(`${where}: an object key may hold U+0000`);
      for (const [name, item] of Object.entries((schema.properties ?? {}) as Record<string, Json>))
        visit(item, `${where}.${name}`);
      // `then` and `else` only narrow what the schema beside them already says.
      for (const key of ["items", "additionalProperties"]) {
        if (typeof schema[key] === "object") visit(schema[key] as Json, `${where}.${key}`);
      }
      for (const key of ["anyOf", "oneOf", "allOf"]) {
        for (const [i, item] of ((schema[key] ?? []) as Json[]).entries())
          visit(item, `${where}.${key}[${i}]`);
      }
    };
    for (const operationId of [
      "createAgent",
      "updateAgent",
      "sendMessage",
      "createApiKey",
      "importCharacter",
    ]) {
      visit(requestSchema(operationId) as Json, operationId);
    }
    expect(seen.has(resolve({ $ref: "#/components/schemas/JsonValue" }))).toBe(true);
    expect(problems).toEqual([]);
  });

  it("refuses query values outside the documented parameters", async () => {
    const parameters = (operation("listAgents").op.parameters as Json[]).filter((p) => p.in === "query");
    const schemaOf = (name: string) => parameters.find((p) => p.name === name)?.schema;
    /** Query values travel as strings; an integer parameter is the integer its digits spell. */
    const valueFor = (schema: unknown, raw: string) =>
      (schema as Json).type === "integer" && /^\d+$/.test(raw) ? Number(raw) : raw;
    const queries: [string, boolean][] = [
      ["page=2&limit=100&status=error&sortBy=status&order=desc", true],
      ["limit=0", false],
      ["limit=101", false],
      ["page=0", false],
      ["page=first", false],
      ["order=up", false],
      ["sortBy=age", false],
      ["status=gone", false],
      ["colour=blue", false],
    ];
    for (const [query, valid] of queries) {
      const documented = [...new URLSearchParams(query)].every(([name, raw]) => {
        const schema = schemaOf(name);
        return schema !== undefined && lenient.errors(schema, valueFor(schema, raw)) === null;
      });
      expect(documented, query).toBe(valid);
      expect((await call("listAgents", { query })).status, query).toBe(valid ? 200 : 400);
    }
  });

  it("refuses an agent beyond the quota with 403 INSUFFICIENT_QUOTA", async () => {
    const small = await h.tenant({ maxAgents: 1 });
    await newAgent(small.key);
    const res = await call("createAgent", { key: small.key, body: { name: "second" } });
    expect(res.status).toBe(403);
    expect((res.body as { error: { code: string } }).error.code).toBe("INSUFFICIENT_QUOTA");
  });

  it("answers 500 INTERNAL_ERROR as documented", async () => {
    const original = h.gateway.context.agents.getAgent;
    h.gateway.context.agents.getAgent = () => Promise.reject(new Error("disk on fire"));
    try {
      expect((await call("getAgent", { params: { agentId: MISSING_AGENT } })).status).toBe(500);
    } finally {
      h.gateway.context.agents.getAgent = original;
    }
  });
});

describe("messages", () => {
  it("answers with the reply object, and the documented errors", async () => {
    const agentId = await newAgent();
    openai.reply("Hello there.");
    const ok = await call("sendMessage", { params: { agentId }, body: { text: "Hi", userId: "u1" } });
    expect(ok.status).toBe(200);

    openai.failWith(401);
    expect((await call("sendMessage", { params: { agentId }, body: { text: "Hi" } })).status).toBe(502);
    openai.failWith(429, { headers: { "retry-after": "7" } });
    const unavailable = await call("sendMessage", { params: { agentId }, body: { text: "Hi" } });
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get("retry-after")).toBe("7");

    expect(
      (await call("sendMessage", { params: { agentId: MISSING_AGENT }, body: { text: "Hi" } })).status,
    ).toBe(404);
    await call("updateAgent", { params: { agentId }, body: { status: "inactive" } });
    expect((await call("sendMessage", { params: { agentId }, body: { text: "Hi" } })).status).toBe(409);
  });

  async function stream(agentId: string, body: Json) {
    const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream: true }),
    });
    const text = await res.text();
    return { res, events: parseEventStream(text).events };
  }

  function expectEventsDocumented(events: SseEvent[]) {
    for (const event of events) expect(streamEventErrors(checker, event), `${event.event}`).toBeNull();
    const terminal = events.filter((event) => streamEventSchema(event)?.["x-terminal"] === true);
    expect(terminal).toHaveLength(1);
    expect(events.at(-1)).toBe(terminal[0]);
  }

  it("pauses before a tool that waits for approval and answers approve as documented, with its 400, 404s and 409", async () => {
    const created = await call("createAgent", {
      body: { name: "Ada", plugins: [{ name: "lab", requireApproval: ["add"] }] },
    });
    const agentId = (created.body as { data: { id: string } }).data.id;
    openai.callTools([{ id: "call_a", name: "lab__add", arguments: { a: 1, b: 2 } }]);
    const { events } = await stream(agentId, { text: "add" });
    expectEventsDocumented(events);
    expect(events.map((event) => event.event)).toEqual([
      "message.started",
      "tool.call",
      "tool.approval_required",
    ]);
    const messageId = (events[0]!.data as { id: string }).id;
    const paused = await call("getMessage", { params: { agentId, messageId } });
    expect((paused.body as { data: { status: string } }).data.status).toBe("requires_action");
    const params = { agentId, messageId };
    expect(
      (await call("approveToolCalls", { params, body: { toolCallIds: ["nope"], approve: true } })).status,
    ).toBe(400);
    openai.reply("Three.");
    expect(
      (await call("approveToolCalls", { params, body: { toolCallIds: ["call_a"], approve: true } })).status,
    ).toBe(200);
    expect(
      (await call("approveToolCalls", { params, body: { toolCallIds: ["call_a"], approve: true } })).status,
    ).toBe(409);
    const missing = { toolCallIds: ["call_a"], approve: true };
    expect(
      (await call("approveToolCalls", { params: { agentId, messageId: MISSING_MESSAGE }, body: missing }))
        .status,
    ).toBe(404);
    expect(
      (await call("approveToolCalls", { params: { agentId: MISSING_AGENT, messageId }, body: missing }))
        .status,
    ).toBe(404);

    // A JSON send that pauses is answered 202 requires_action.
    openai.callTools([{ id: "call_b", name: "lab__add", arguments: { a: 2, b: 2 } }]);
    const sent = await call("sendMessage", { params: { agentId }, body: { text: "add again" } });
    expect(sent.status).toBe(202);
    expect((sent.body as { data: { status: string } }).data.status).toBe("requires_action");
  });

  it("streams events whose data satisfy the documented event schemas", async () => {
    const agentId = await newAgent();
    openai.reply("one two three", { chunkDelayMs: 2 });
    const { res, events } = await stream(agentId, { text: "count", roomId: "r1" });
    expectDocumented("sendMessage", { status: res.status, headers: res.headers, body: null });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(events.map((event) => event.event)).toContain("message.delta");
    expect(events.at(-1)?.event).toBe("message.completed");
    expectEventsDocumented(events);

    openai.reply("alpha beta gamma delta", { cutAfter: 2 });
    const cut = await stream(agentId, { text: "go" });
    expect(cut.events.at(-1)?.event).toBe("error");
    expectEventsDocumented(cut.events);
  });

  it("streams tool.call and tool.result, and answers toolCalls in the reply and the history, as documented", async () => {
    const created = await call("createAgent", { body: { name: "Ada", plugins: ["lab"] } });
    const agentId = (created.body as { data: { id: string } }).data.id;
    const calls = [
      { id: "call_1", name: "lab__add", arguments: { a: 2, b: 3 } },
      { id: "call_2", name: "lab__fail", arguments: {} },
      { id: "call_3", name: "lab__add", arguments: '{"a": ' },
    ];
    openai.callTools(calls, { text: "Let me see. " });
    openai.reply("Five; the rest failed.");
    const { events } = await stream(agentId, { text: "add", userId: "tools" });
    expectEventsDocumented(events);
    expect(events.map((event) => event.event)).toEqual([
      "message.started",
      "message.delta",
      "message.delta",
      "message.delta",
      "tool.call",
      "tool.call",
      "tool.call",
      "tool.result",
      "tool.result",
      "tool.result",
      "message.delta",
      "message.delta",
      "message.delta",
      "message.delta",
      "message.completed",
    ]);
    expect(events[4]!.data).toEqual({ id: "call_1", name: "lab__add", arguments: { a: 2, b: 3 } });
    const reply = events.at(-1)!.data as { text: string; toolCalls: Json[] };
    expect(reply.text).toBe("Let me see. Five; the rest failed.");
    expect(reply.toolCalls).toEqual([
      { id: "call_1", name: "lab__add", arguments: { a: 2, b: 3 }, ok: true, output: { sum: 5 } },
      { id: "call_2", name: "lab__fail", arguments: {}, ok: false, error: "out of order" },
      {
        id: "call_3",
        name: "lab__add",
        arguments: '{"a": ',
        ok: false,
        error: "The arguments are not valid JSON.",
      },
    ]);

    openai.callTools([calls[0]!]);
    openai.reply("Five.");
    const sent = await call("sendMessage", { params: { agentId }, body: { text: "again", userId: "tools" } });
    expect((sent.body as { data: { toolCalls: Json[] } }).data.toolCalls).toEqual([reply.toolCalls[0]]);
    const history = await call("listMessages", { params: { agentId }, query: "userId=tools" });
    const messages = (history.body as { data: Json[] }).data;
    expect(messages.map((message) => (message.toolCalls as Json[] | undefined)?.length)).toEqual([
      1,
      undefined,
      3,
      undefined,
    ]);
  });

  it("resumes a stream with the documented events, and refuses a bad after and an unknown stream", async () => {
    const agentId = await newAgent();
    openai.reply("one two three", { chunkDelayMs: 2 });
    const { events } = await stream(agentId, { text: "count" });
    const messageId = (events[0]!.data as { id: string }).id;
    const res = await fetch(`${h.url}/v1/agents/${agentId}/messages/${messageId}/events?after=1`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    const resumed = parseEventStream(await res.text()).events;
    expectDocumented("resumeMessageEvents", { status: res.status, headers: res.headers, body: null });
    expect(resumed).toEqual(events.slice(1));
    expectEventsDocumented(resumed);
    const params = { agentId, messageId };
    expect((await call("resumeMessageEvents", { params, query: "after=-1" })).status).toBe(400);
    const unknown = { agentId, messageId: "msg_01J00000000000000000000000" };
    expect((await call("resumeMessageEvents", { params: unknown })).status).toBe(404);
    expect(
      (await call("resumeMessageEvents", { params: { ...params, agentId: MISSING_AGENT } })).status,
    ).toBe(404);
  });

  it("accepts a background message with 202, then reads it as documented in each state", async () => {
    const agentId = await newAgent();
    const states: string[] = [];
    const follow = async (text: string): Promise<Json> => {
      const accepted = await call("sendMessage", { params: { agentId }, body: { text, background: true } });
      expect(accepted.status).toBe(202);
      const messageId = (accepted.body as { data: { id: string } }).data.id;
      for (;;) {
        // `call` checks the answer against getMessage's documented schema: a stored message or a BackgroundMessage.
        const read = await call("getMessage", { params: { agentId, messageId } });
        expect(read.status).toBe(200);
        const data = (read.body as { data: Json }).data;
        states.push(data.status as string);
        if (data.status !== "pending") return data;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    openai.reply("later");
    const completed = await follow("Hi");
    expect(completed).toMatchObject({ status: "completed", text: "later" });
    expect(
      checker.errors(
        { $ref: "#/components/schemas/BackgroundMessageResponse" },
        { success: true, data: completed },
      ),
    ).toBeNull();

    openai.failWith(401);
    const failed = await follow("Hi again");
    expect(failed).toMatchObject({ status: "failed", error: { code: "MODEL_ERROR" } });
    expect(failed.text).toBeUndefined();

    // The schema tells the states apart: a completed answer without its reply fields is not one.
    const { text: _, ...incomplete } = completed;
    expect(checker.errors({ $ref: "#/components/schemas/BackgroundMessage" }, incomplete)).not.toBeNull();
    expect(
      checker.errors({ $ref: "#/components/schemas/BackgroundMessage" }, { ...failed, text: "x" }),
    ).not.toBeNull();
  });
});

describe("API keys", () => {
  it("create, list and revoke answer as documented", async () => {
    const created = await call("createApiKey", { body: { name: "ci", scopes: ["agents:read"] } });
    expect(created.status).toBe(201);
    const keyId = (created.body as { data: { id: string } }).data.id;
    expect((await call("listApiKeys")).status).toBe(200);
    expect((await call("revokeApiKey", { params: { keyId } })).status).toBe(200);
    expect((await call("revokeApiKey", { params: { keyId } })).status).toBe(404);
    expect((await call("revokeApiKey", { params: { keyId: MISSING_KEY } })).status).toBe(404);
    const limited = await tenant.keyWith(["keys:manage"]);
    const escalate = await call("createApiKey", { key: limited.key, body: { scopes: ["agents:delete"] } });
    expect(escalate.status).toBe(403);
  });
});

describe("memories", () => {
  it("adds, lists, searches and deletes as documented, with the documented 400s and 404s", async () => {
    const agentId = await newAgent();
    const created = await call("createMemory", {
      params: { agentId },
      body: { userId: "doc-user", text: "The user likes tea." },
    });
    expect(created.status).toBe(201);
    const memoryId = (created.body as { data: { id: string } }).data.id;
    const listed = await call("listMemories", { params: { agentId }, query: "userId=doc-user&q=tea" });
    expect((listed.body as { data: unknown[] }).data).toHaveLength(1);
    expect((await call("deleteMemory", { params: { agentId, memoryId } })).status).toBe(200);
    expect((await call("deleteMemory", { params: { agentId, memoryId } })).status).toBe(404);

    const missing = { agentId: MISSING_AGENT, memoryId: MISSING_MEMORY };
    expect((await call("listMemories", { params: missing })).status).toBe(404);
    expect((await call("deleteMemory", { params: missing })).status).toBe(404);
    const body = { userId: "u", text: "A fact." };
    expect((await call("createMemory", { params: missing, body })).status).toBe(404);
    expect((await call("listMemories", { params: { agentId }, query: "limit=0" })).status).toBe(400);
    expect((await call("createMemory", { params: { agentId }, body: { text: "no user" } })).status).toBe(400);
  });
});

describe("documents", () => {
  it("uploads, lists, reads and deletes as documented, with the documented 400s, 404s, 413 and 415", async () => {
    const agentId = await newAgent();
    const created = await call("createDocument", {
      params: { agentId },
      body: { title: "Hours", contentType: "text/markdown", text: "# Hours\nOpen at nine." },
    });
    expect(created.status).toBe(201);
    const documentId = (created.body as { data: { id: string } }).data.id;
    expect((await call("listDocuments", { params: { agentId } })).status).toBe(200);
    expect((await call("getDocument", { params: { agentId, documentId } })).status).toBe(200);
    expect((await call("listKnowledgeSources", { params: { agentId } })).status).toBe(200);
    expect((await call("deleteDocument", { params: { agentId, documentId } })).status).toBe(200);
    expect((await call("deleteDocument", { params: { agentId, documentId } })).status).toBe(404);
    expect((await call("getDocument", { params: { agentId, documentId } })).status).toBe(404);

    const missing = { agentId: MISSING_AGENT, documentId: MISSING_DOCUMENT };
    expect((await call("listDocuments", { params: missing })).status).toBe(404);
    expect((await call("listKnowledgeSources", { params: missing })).status).toBe(404);
    expect((await call("createDocument", { params: missing, body: { text: "x" } })).status).toBe(404);
    expect((await call("listDocuments", { params: { agentId }, query: "limit=0" })).status).toBe(400);
    expect((await call("createDocument", { params: { agentId }, body: { title: "no text" } })).status).toBe(
      400,
    );
    const big = { text: "x".repeat(1024 * 1024 + 1) };
    expect((await call("createDocument", { params: { agentId }, body: big })).status).toBe(413);
    const plain = { rawBody: "just text", headers: { "content-type": "text/plain" } };
    expect((await call("createDocument", { params: { agentId }, ...plain })).status).toBe(415);
  });
});

describe("schedules", () => {
  it("creates, reads, lists, updates and deletes as documented, with the documented 400s and 404s", async () => {
    const agentId = await newAgent();
    const body = { cron: "0 9 * * 1-5", timezone: "Europe/Berlin", text: "Morning summary." };
    const created = await call("createSchedule", { params: { agentId }, body });
    expect(created.status).toBe(201);
    const scheduleId = (created.body as { data: { id: string } }).data.id;
    expect((await call("getSchedule", { params: { agentId, scheduleId } })).status).toBe(200);
    expect((await call("listSchedules", { params: { agentId } })).status).toBe(200);
    const paused = await call("updateSchedule", {
      params: { agentId, scheduleId },
      body: { enabled: false },
    });
    expect(paused.status).toBe(200);
    const badCron = { ...body, cron: "61 * * * *" };
    expect((await call("createSchedule", { params: { agentId }, body: badCron })).status).toBe(400);
    const badZone = { timezone: "Nowhere/Else" };
    expect((await call("updateSchedule", { params: { agentId, scheduleId }, body: badZone })).status).toBe(
      400,
    );
    expect((await call("listSchedules", { params: { agentId }, query: "limit=0" })).status).toBe(400);
    expect((await call("deleteSchedule", { params: { agentId, scheduleId } })).status).toBe(200);
    expect((await call("getSchedule", { params: { agentId, scheduleId } })).status).toBe(404);
    expect(
      (await call("updateSchedule", { params: { agentId, scheduleId }, body: { text: "x" } })).status,
    ).toBe(404);
    expect((await call("deleteSchedule", { params: { agentId, scheduleId } })).status).toBe(404);
    const missing = { agentId: MISSING_AGENT, scheduleId: MISSING_SCHEDULE };
    expect((await call("createSchedule", { params: missing, body })).status).toBe(404);
    expect((await call("listSchedules", { params: missing })).status).toBe(404);
  });
});

describe("budgets", () => {
  it("create, list, read, update and delete as documented, and a spent budget refuses a message with 402", async () => {
    const agentId = await newAgent();
    const created = await call("createBudget", {
      body: { unit: "tokens", limit: 1, period: "day", agentId },
    });
    expect(created.status).toBe(201);
    const budgetId = (created.body as { data: { id: string } }).data.id;
    expect((await call("listBudgets")).status).toBe(200);
    expect((await call("getBudget", { params: { budgetId } })).status).toBe(200);
    expect((await call("updateBudget", { params: { budgetId }, body: { period: "month" } })).status).toBe(
      200,
    );
    expect((await call("updateBudget", { params: { budgetId }, body: { limit: 0.5 } })).status).toBe(400);

    openai.reply("Hello there.", { usage: { input: 5, output: 1 } });
    expect((await call("sendMessage", { params: { agentId }, body: { text: "Hi" } })).status).toBe(200);
    const refused = await call("sendMessage", { params: { agentId }, body: { text: "Hi" } });
    expect(refused.status).toBe(402);

    expect((await call("deleteBudget", { params: { budgetId } })).status).toBe(200);
    for (const operationId of ["getBudget", "deleteBudget"]) {
      expect((await call(operationId, { params: { budgetId: MISSING_BUDGET } })).status).toBe(404);
    }
    const patch = await call("updateBudget", { params: { budgetId: MISSING_BUDGET }, body: { limit: 2 } });
    expect(patch.status).toBe(404);
    const foreign = { unit: "tokens", limit: 1, period: "day" };
    expect((await call("createBudget", { body: { ...foreign, agentId: MISSING_AGENT } })).status).toBe(404);
    expect((await call("createBudget", { body: { ...foreign, period: "week" } })).status).toBe(400);
  });
});

describe("runs", () => {
  it("lists and cancels an agent's runs as documented, with the documented 400 and 404s", async () => {
    const agentId = await newAgent();
    openai.reply("Done in the background.");
    const sent = await call("sendMessage", { params: { agentId }, body: { text: "Hi", background: true } });
    expect(sent.status).toBe(202);
    const messageId = (sent.body as { data: { id: string } }).data.id;
    const listed = await call("listRuns", { params: { agentId }, query: "limit=5" });
    expect(listed.status).toBe(200);
    expect((listed.body as { data: { messageId: string }[] }).data.map((run) => run.messageId)).toEqual([
      messageId,
    ]);
    const cancelled = await call("cancelAgentRuns", { params: { agentId } });
    expect(cancelled.status).toBe(200);
    expect((await call("listRuns", { params: { agentId }, query: "status=stopped" })).status).toBe(400);
    expect((await call("listRuns", { params: { agentId: MISSING_AGENT } })).status).toBe(404);
    expect((await call("cancelAgentRuns", { params: { agentId: MISSING_AGENT } })).status).toBe(404);
  });
});

describe("history", () => {
  async function conversationOf(agentId: string, userId: string) {
    openai.reply("Hello there.");
    const sent = await call("sendMessage", { params: { agentId }, body: { text: "Hi", userId } });
    expect(sent.status).toBe(200);
    const listed = await call("listMessages", { params: { agentId }, query: `userId=${userId}&order=asc` });
    const [first] = (listed.body as { data: { id: string; conversationId: string }[] }).data;
    return { replyId: (sent.body as { data: { id: string } }).data.id, ...first! };
  }

  it("reads, deletes, exports and erases as documented", async () => {
    const agentId = await newAgent();
    const { replyId, id: messageId, conversationId } = await conversationOf(agentId, "doc-user");
    const params = { agentId, conversationId, messageId };

    const listed = await call("listConversations", { params, query: "userId=doc-user&limit=1" });
    expect(listed.status).toBe(200);
    expect((listed.body as { data: unknown[] }).data).toHaveLength(1);
    const messages = await call("listMessages", { params, query: `conversationId=${conversationId}` });
    expect((messages.body as { data: unknown[] }).data).toHaveLength(2);
    expect((await call("getMessage", { params })).status).toBe(200);
    expect((await call("getMessage", { params: { ...params, messageId: replyId } })).status).toBe(200);

    // Each line of the export is a document's `HistoryMessage` (the NDJSON content's item schema).
    const exported = await fetch(`${h.url}/v1/users/doc-user/export`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    const text = await exported.text();
    expectDocumented("exportUser", { status: exported.status, headers: exported.headers, body: text });
    const media = (resolve((operation("exportUser").op.responses as Json)["200"]).content as Json)[
      "application/x-ndjson"
    ] as Json;
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    for (const line of [...lines, ...(media.example as string).trimEnd().split("\n")]) {
      expect(checker.errors(media.schema, JSON.parse(line)), line).toBeNull();
    }

    expect((await call("deleteConversation", { params })).status).toBe(200);
    expect((await call("deleteConversation", { params })).status).toBe(404);
    expect((await call("getMessage", { params })).status).toBe(404);
    expect((await call("eraseUser", { params: { userId: "doc-user" } })).status).toBe(200);
  });

  it("answers the documented 400s and 404s", async () => {
    const agentId = await newAgent();
    const { id: messageId } = await conversationOf(agentId, "doc-errors");
    const missing = {
      agentId: MISSING_AGENT,
      conversationId: MISSING_CONVERSATION,
      messageId: MISSING_MESSAGE,
    };
    for (const operationId of ["listConversations", "listMessages", "getMessage", "deleteConversation"]) {
      expect((await call(operationId, { params: missing })).status, operationId).toBe(404);
    }
    const mine = { ...missing, agentId };
    expect((await call("getMessage", { params: mine })).status).toBe(404);
    expect((await call("deleteConversation", { params: mine })).status).toBe(404);
    const unknownConversation = await call("listMessages", {
      params: mine,
      query: `conversationId=${MISSING_CONVERSATION}`,
    });
    expect(unknownConversation.status).toBe(404);
    expect((await call("listConversations", { params: mine, query: "limit=0" })).status).toBe(400);
    expect((await call("listMessages", { params: mine, query: `before=${MISSING_MESSAGE}` })).status).toBe(
      400,
    );
    expect((await call("listMessages", { params: mine, query: `after=${messageId}&limit=1` })).status).toBe(
      200,
    );
    const tooLong = { userId: "x".repeat(257) };
    expect((await call("exportUser", { params: tooLong })).status).toBe(400);
    expect((await call("eraseUser", { params: tooLong })).status).toBe(400);
  });

  it("refuses query values outside the documented parameters of the history lists", async () => {
    const agentId = await newAgent();
    const { id: messageId, conversationId } = await conversationOf(agentId, "doc-query");
    const valueFor = (schema: unknown, raw: string) =>
      (schema as Json).type === "integer" && /^\d+$/.test(raw) ? Number(raw) : raw;
    const cases: [string, string, boolean][] = [
      ["listMessages", `userId=doc-query&roomId=r&limit=100&order=asc&after=${messageId}`, true],
      ["listMessages", `conversationId=${conversationId}&before=${messageId}`, true],
      ["listMessages", "limit=0", false],
      ["listMessages", "limit=101", false],
      ["listMessages", "order=sideways", false],
      ["listMessages", `before=${conversationId}`, false],
      ["listMessages", "userId=", false],
      ["listMessages", `roomId=${"r".repeat(257)}`, false],
      ["listMessages", "page=2", false],
      ["listConversations", "userId=doc-query&roomId=r&limit=1", true],
      ["listConversations", `before=${messageId}`, false],
      ["listConversations", "order=asc", false],
    ];
    for (const [operationId, query, valid] of cases) {
      const parameters = (operation(operationId).op.parameters as Json[]).filter((p) => p.in === "query");
      const documented = [...new URLSearchParams(query)].every(([name, raw]) => {
        const schema = parameters.find((p) => p.name === name)?.schema;
        return schema !== undefined && lenient.errors(schema, valueFor(schema, raw)) === null;
      });
      expect(documented, `${operationId}?${query}`).toBe(valid);
      const res = await call(operationId, { params: { agentId }, query });
      expect(res.status, `${operationId}?${query}`).toBe(valid ? 200 : 400);
    }
  });
});

describe("usage", () => {
  it("answers as documented", async () => {
    const agentId = await newAgent();
    openai.reply("Counted.");
    expect(
      (await call("sendMessage", { params: { agentId }, body: { text: "Hi", userId: "u" } })).status,
    ).toBe(200);
    expect((await call("getUsage", { query: "groupBy=agentId,model" })).status).toBe(200);
    expect((await call("getUsage", { query: "granularity=week" })).status).toBe(400);
    expect((await call("getAgentUsage", { params: { agentId }, query: "granularity=hour" })).status).toBe(
      200,
    );
    expect((await call("getAgentUsage", { params: { agentId }, query: "groupBy=nothing" })).status).toBe(400);
    // groupBy is documented as a list sent comma-separated, so clients take a list: its schema holds what the
    // route takes.
    for (const operationId of ["getUsage", "getAgentUsage"]) {
      const groupBy = (operation(operationId).op.parameters as Json[]).find((p) => p.name === "groupBy")!;
      expect(groupBy).toMatchObject({ in: "query", style: "form", explode: false });
      expect(lenient.errors(groupBy.schema, ["agentId", "model"])).toBeNull();
      expect(lenient.errors(groupBy.schema, ["nothing"])).not.toBeNull();
      expect(lenient.errors(groupBy.schema, ["model", "model"])).not.toBeNull();
    }
    expect((await call("getUsage", { query: "groupBy=model,model" })).status).toBe(400);
    expect((await call("getAgentUsage", { params: { agentId: MISSING_AGENT } })).status).toBe(404);
  });
});

describe("character files", () => {
  const file = {
    name: "Eliza",
    bio: "A bot.",
    modelProvider: "groq",
    plugins: ["@elizaos/plugin-sql"],
    knowledge: ["fact", { path: "docs/a.md" }],
    settings: { secrets: { KEY: "sk-hidden-0001" }, model: "gpt-4o-mini" },
  };

  it("import, dry run, export and the schema answer as documented", async () => {
    expect((await call("importCharacter", { query: "dryRun=true", body: file })).status).toBe(200);
    const created = await call("importCharacter", { body: file });
    expect(created.status).toBe(201);
    const agentId = (created.body as { data: { id: string } }).data.id;
    expect((await call("exportCharacter", { params: { agentId } })).status).toBe(200);
    expect((await call("exportCharacter", { params: { agentId: MISSING_AGENT } })).status).toBe(404);
    const schema = await call("getCharacterSchema", { key: null });
    expect(schema.status).toBe(200);
    const small = await h.tenant({ maxAgents: 1 });
    await newAgent(small.key);
    const over = await call("importCharacter", { key: small.key, body: file });
    expect((over.body as { error: { code: string } }).error.code).toBe("INSUFFICIENT_QUOTA");
  });

  it("refuses what the CharacterFile schema refuses, and accepts what it accepts", async () => {
    const cases: [unknown, boolean][] = [
      [{ name: "x" }, true],
      [{}, false],
      [{ name: "  " }, false],
      [{ name: "a", bio: "   " }, false],
      [{ name: "a", bio: ["", "x"] }, false],
      [{ name: "a", bio: Array(101).fill("b") }, false],
      [{ name: "a", knowledge: Array(101).fill({ path: "p" }) }, false],
      [{ name: "a", lore: Array(1001).fill("l") }, false],
      [{ name: "a", modelProvider: "bedrock" }, false],
      [{ name: "a", modelProvider: "anthropic" }, true],
      [{ name: "a", modelProvider: "llama_local" }, true],
      [{ name: "a", modelProvider: "llama_local", settings: { model: "gpt-4o" } }, false],
      [{ name: "a", modelProvider: "llama_local", settings: { model: " SmolLM2-135M-Instruct " } }, true],
      [{ name: "a", settings: { agentry: { modelProvider: "local" }, model: "gpt-4o" } }, false],
      [{ name: "a", modelProvider: "openai", settings: { agentry: { modelProvider: "local" } } }, true],
      [
        {
          name: "a",
          modelProvider: "llama_local",
          settings: { agentry: { modelProvider: "openai" }, model: "x" },
        },
        true,
      ],
      [{ name: "a", settings: { model: "any-model-at-all" } }, true],
      [{ name: "a", settings: { agentry: { modelProvider: "anthropic" } } }, true],
      [{ name: "a", settings: { agentry: { modelProvider: "llama_local" } } }, false],
      [{ name: "a", knowledge: [{ shared: true }] }, false],
      [{ name: "a", knowledge: [{ directory: "d" }, "fact"] }, true],
      [{ name: "a", messageExamples: [[{ content: { text: "x" } }]] }, false],
      [
        {
          name: "a",
          messageExamples: [
            [{ user: "u", content: { text: "x", action: "NONE" } }],
            { examples: [{ name: "n", content: {} }] },
          ],
        },
        true,
      ],
      [{ name: "a", messageExamples: [{ examples: [], extra: 1 }] }, false],
      [{ name: "a", settings: { temperature: 3 } }, false],
      [{ name: "a", settings: { maxTokens: 8192, temperature: null, voice: 1 } }, true],
      [{ name: "a", settings: { agentry: { unknown: 1 } } }, false],
      [{ name: "a", twitterProfile: { id: 1 }, clientConfig: null }, true],
      [{ name: "a", secrets: { K: [1] } }, false],
      [{ name: "a", plugins: [""] }, false],
      [{ name: "a", style: { all: ["x"], custom: 1 } }, true],
      [{ name: "a", extra: { "k\u0000": 1 } }, false],
    ];
    for (const [body, valid] of cases) {
      const label = `importCharacter ${JSON.stringify(body).slice(0, 80)}`;
      expect(lenient.errors(requestSchema("importCharacter"), body) === null, `${label}: schema`).toBe(valid);
      const res = await call("importCharacter", { body });
      if (valid) expect(res.status, label).toBe(201);
      else {
        expect(res.status, label).toBe(400);
        expect((res.body as { error: { details?: unknown[] } }).error.details?.length, label).toBeGreaterThan(
          0,
        );
      }
    }
  });

  it("takes a provider the deployment has no configuration for, warning at the path the file names it", async () => {
    const res = await call("importCharacter", { body: { name: "a", modelProvider: "anthropic" } });
    expect(res.status).toBe(201);
    expect((res.body as { warnings: unknown[] }).warnings).toEqual([
      { field: "modelProvider", issue: expect.stringMatching(/ANTHROPIC_API_KEY/) },
    ]);
    const agentry = await call("importCharacter", {
      body: { name: "a", settings: { agentry: { modelProvider: "anthropic" } } },
    });
    expect((agentry.body as { warnings: { field: string }[] }).warnings).toEqual([
      { field: "settings.agentry.modelProvider", issue: expect.stringMatching(/ANTHROPIC_API_KEY/) },
    ]);
  });
});

describe("webhooks", () => {
  it("manage endpoints, test events, the delivery log and redeliveries as documented", async () => {
    const created = await call("createWebhook", {
      body: { url: WEBHOOK_URL, events: ["agent.created"], description: "docs", enabled: true },
    });
    expect(created.status).toBe(201);
    const webhookId = (created.body as { data: { id: string } }).data.id;
    const params = { webhookId };
    expect((await call("listWebhooks")).status).toBe(200);
    expect((await call("getWebhook", { params })).status).toBe(200);
    expect((await call("updateWebhook", { params, body: { events: ["*"] } })).status).toBe(200);
    expect((await call("rotateWebhookSecret", { params })).status).toBe(200);
    const sent = await call("sendWebhookTest", { params });
    expect(sent.status).toBe(200);
    const deliveryId = (sent.body as { data: { id: string } }).data.id;
    const log = await call("listWebhookDeliveries", { params, query: "limit=1&order=asc" });
    expect(log.status).toBe(200);
    expect((log.body as { data: unknown[] }).data).toHaveLength(1);
    const again = await call("redeliverWebhookDelivery", { params: { webhookId, deliveryId } });
    expect(again.status).toBe(200);
    expect((await call("deleteWebhook", { params })).status).toBe(200);
  });

  it("answers the documented 400s, 403s and 404s", async () => {
    const webhookId = await newWebhook();
    const missing = { webhookId: MISSING_WEBHOOK, deliveryId: MISSING_DELIVERY };
    for (const operationId of [
      "getWebhook",
      "updateWebhook",
      "deleteWebhook",
      "rotateWebhookSecret",
      "sendWebhookTest",
      "listWebhookDeliveries",
      "redeliverWebhookDelivery",
    ]) {
      const res = await call(operationId, { params: missing, body: {} });
      expect(res.status, operationId).toBe(404);
    }
    const mine = { webhookId, deliveryId: MISSING_DELIVERY };
    expect((await call("redeliverWebhookDelivery", { params: mine })).status).toBe(404);
    expect((await call("createWebhook", { body: { url: WEBHOOK_URL } })).status).toBe(400);
    expect((await call("updateWebhook", { params: mine, body: { events: [] } })).status).toBe(400);
    expect(
      (await call("listWebhookDeliveries", { params: mine, query: `before=${MISSING_DELIVERY}` })).status,
    ).toBe(400);
    const deliveryId = ((await call("sendWebhookTest", { params: mine })).body as { data: { id: string } })
      .data.id;
    expect((await call("updateWebhook", { params: mine, body: { enabled: false } })).status).toBe(200);
    expect((await call("sendWebhookTest", { params: mine })).status).toBe(400);
    expect((await call("redeliverWebhookDelivery", { params: { webhookId, deliveryId } })).status).toBe(400);

    const full = await h.tenant();
    for (let i = 0; i < 20; i++) await newWebhook(full.key);
    const over = await call("createWebhook", { key: full.key, body: { url: WEBHOOK_URL, events: ["*"] } });
    expect(over.status).toBe(403);
    expect((over.body as { error: { code: string } }).error.code).toBe("INSUFFICIENT_QUOTA");
  });
});

describe("clients", () => {
  it("lists an agent's platform clients as documented, and 404 for a missing agent", async () => {
    const agentId = await newAgent();
    const listed = await call("listAgentClients", { params: { agentId } });
    expect(listed.status).toBe(200);
    expect((await call("listAgentClients", { params: { agentId: MISSING_AGENT } })).status).toBe(404);
  });
});

describe("connector updates", () => {
  it("takes a pushed Telegram update with the registered secret, and answers the documented errors", async () => {
    telegram.addBot("1:openapi-token", "openapi_bot");
    const created = await call("createAgent", {
      body: { name: "Hooked", clients: [{ type: "telegram", mode: "webhook" }] },
    });
    const agentId = (created.body as { data: { id: string } }).data.id;
    await call("putAgentSecret", {
      params: { agentId, name: "TELEGRAM_BOT_TOKEN" },
      body: { value: "1:openapi-token" },
    });
    const deadline = Date.now() + 8_000;
    while (!telegram.webhook("1:openapi-token") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const secret = telegram.webhook("1:openapi-token")?.secretToken ?? "";
    const params = { type: "telegram", agentId };
    const update = {
      update_id: 1,
      message: {
        message_id: 5,
        date: 0,
        chat: { id: 9, type: "private" },
        from: { id: 9, is_bot: false },
        text: "Hi",
      },
    };
    const headers = { "x-telegram-bot-api-secret-token": secret };
    const wrong = { "x-telegram-bot-api-secret-token": "wrong" };
    expect((await call("deliverConnectorUpdate", { params, key: null, body: update, headers })).status).toBe(
      200,
    );
    expect(
      (await call("deliverConnectorUpdate", { params, key: null, body: update, headers: wrong })).status,
    ).toBe(401);
    expect(
      (
        await call("deliverConnectorUpdate", {
          params,
          key: null,
          rawBody: "{",
          headers: { ...headers, "content-type": "application/json" },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call("deliverConnectorUpdate", {
          params,
          key: null,
          rawBody: "hi",
          headers: { ...headers, "content-type": "text/plain" },
        })
      ).status,
    ).toBe(415);
  });
});

describe("plugins", () => {
  it("lists the catalogue, and sets, lists and deletes secrets as documented", async () => {
    const plugins = await call("listPlugins");
    expect(plugins.status).toBe(200);
    expect((plugins.body as { data: { name: string }[] }).data.map((plugin) => plugin.name)).toEqual([
      "calculator",
      "http",
      "knowledge",
      "lab",
      "mcp",
      "time",
    ]);
    const agentId = await newAgent();
    const params = { agentId, name: "MCP_TOKEN" };
    expect((await call("putAgentSecret", { params, body: { value: "s3cret-value" } })).status).toBe(200);
    expect((await call("listAgentSecrets", { params })).status).toBe(200);
    expect((await call("deleteAgentSecret", { params })).status).toBe(200);
  });

  it("answers the documented 400s and 404s", async () => {
    const agentId = await newAgent();
    const missing = { agentId: MISSING_AGENT, name: "MCP_TOKEN" };
    expect((await call("putAgentSecret", { params: missing, body: { value: "v" } })).status).toBe(404);
    expect((await call("listAgentSecrets", { params: missing })).status).toBe(404);
    expect((await call("deleteAgentSecret", { params: missing })).status).toBe(404);
    expect((await call("deleteAgentSecret", { params: { agentId, name: "NEVER_SET" } })).status).toBe(404);
    const badName = { agentId, name: "bad.name" };
    expect((await call("putAgentSecret", { params: badName, body: { value: "v" } })).status).toBe(400);
    expect((await call("deleteAgentSecret", { params: badName })).status).toBe(400);
    expect(
      (await call("putAgentSecret", { params: { agentId, name: "T" }, body: { value: "" } })).status,
    ).toBe(400);
  });
});

describe("every authenticated operation", () => {
  const pathParams = {
    agentId: MISSING_AGENT,
    keyId: MISSING_KEY,
    memberId: MISSING_MEMBER,
    conversationId: MISSING_CONVERSATION,
    messageId: MISSING_MESSAGE,
    userId: "nobody",
    webhookId: MISSING_WEBHOOK,
    deliveryId: MISSING_DELIVERY,
    memoryId: MISSING_MEMORY,
    documentId: MISSING_DOCUMENT,
    scheduleId: MISSING_SCHEDULE,
    budgetId: MISSING_BUDGET,
    name: "TOKEN",
  };

  it("answers 401 without a key and with a malformed one", async () => {
    for (const route of ROUTES) {
      const { operationId } = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]! as {
        operationId: string;
      };
      expect((await call(operationId, { params: pathParams, key: null })).status).toBe(401);
      const malformed = await call(operationId, { params: pathParams, key: "agentry_sk_nope" });
      expect(malformed.status).toBe(401);
    }
  });

  it("answers 403 to a key without the documented scope, and lets a key with only that scope through", async () => {
    for (const route of ROUTES) {
      const op = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      const scopes = op["x-scopes"] as Scope[];
      if (scopes.length === 0) {
        // Any valid key: one with a single unrelated scope is let through.
        const any = await tenant.keyWith(["usage:read"]);
        const allowed = await call(op.operationId as string, { params: pathParams, key: any.key, body: {} });
        expect([401, 403]).not.toContain(allowed.status);
        continue;
      }
      const other: Scope = scopes.includes("messages:send") ? "agents:read" : "messages:send";
      const without = await tenant.keyWith([other]);
      const refused = await call(op.operationId as string, {
        params: pathParams,
        key: without.key,
        body: {},
      });
      expect(refused.status).toBe(403);
      expect((refused.body as { error: { code: string } }).error.code).toBe("FORBIDDEN");
      const only = await tenant.keyWith(scopes);
      const allowed = await call(op.operationId as string, { params: pathParams, key: only.key, body: {} });
      expect([401, 403]).not.toContain(allowed.status);
    }
  });

  it("answers 429 with Retry-After once the account's limit is spent", async () => {
    for (const route of ROUTES) {
      const op = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      const spent = await h.tenant({ limits: { requestsPerMinute: 1 } });
      expect((await h.request("GET", "/v1/api-keys", { key: spent.key })).status).toBe(200);
      const res = await call(op.operationId as string, { params: pathParams, key: spent.key, body: {} });
      expect(res.status).toBe(429);
    }
  });

  it("answers 413 to a body over 1 MiB and 415 to a body that is not JSON", async () => {
    const agentId = await newAgent();
    const webhookId = await newWebhook();
    const schedule = await call("createSchedule", {
      params: { agentId },
      body: { cron: "0 9 * * *", timezone: "UTC", text: "A body of the right size." },
    });
    const scheduleId = (schedule.body as { data: { id: string } }).data.id;
    const budget = await call("createBudget", { body: { unit: "tokens", limit: 1000, period: "day" } });
    const budgetId = (budget.body as { data: { id: string } }).data.id;
    for (const route of ROUTES.filter((r) => ["POST", "PATCH", "PUT"].includes(r.method))) {
      const op = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      // Actions without a body (a rotation, a test event, a redelivery) do not read one.
      if (op.requestBody === undefined) continue;
      const operationId = op.operationId as string;
      const tooLarge = await call(operationId, {
        params: {
          agentId,
          webhookId,
          scheduleId,
          budgetId,
          name: "TOKEN",
          messageId: MISSING_MESSAGE,
          memberId: MISSING_MEMBER,
        },
        rawBody: JSON.stringify({ name: "x".repeat(BODY_LIMIT_BYTES) }),
        headers: { "content-type": "application/json" },
      });
      expect(tooLarge.status).toBe(413);
      const form = await call(operationId, {
        params: {
          agentId,
          webhookId,
          scheduleId,
          budgetId,
          name: "TOKEN",
          messageId: MISSING_MESSAGE,
          memberId: MISSING_MEMBER,
        },
        rawBody: "name=Ada",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(form.status).toBe(415);
    }
    expect((await call("deleteBudget", { params: { budgetId } })).status).toBe(200);
  });
});

describe("Members", () => {
  it("invite, list, get, change and remove answer as documented", async () => {
    const account = await h.tenant();
    const key = account.key;
    const invited = await call("inviteMember", { key, body: { email: "doc@example.com", role: "viewer" } });
    expect(invited.status).toBe(201);
    const memberId = (invited.body as { data: { id: string } }).data.id;
    expect(
      (await call("inviteMember", { key, body: { email: "doc@example.com", role: "admin" } })).status,
    ).toBe(409);
    expect((await call("inviteMember", { key, body: { email: "nope", role: "viewer" } })).status).toBe(400);
    expect((await call("listMembers", { key, query: "order=asc&limit=1" })).status).toBe(200);
    expect((await call("listMembers", { key, query: "limit=0" })).status).toBe(400);
    expect((await call("getMember", { key, params: { memberId } })).status).toBe(200);
    expect((await call("getMember", { key, params: { memberId: MISSING_MEMBER } })).status).toBe(404);
    expect(
      (await call("updateMember", { key, params: { memberId }, body: { role: "developer" } })).status,
    ).toBe(200);
    expect((await call("updateMember", { key, params: { memberId }, body: {} })).status).toBe(400);
    expect(
      (await call("updateMember", { key, params: { memberId: MISSING_MEMBER }, body: { name: "x" } })).status,
    ).toBe(404);
    const owners = (await call("listMembers", { key, query: "order=asc&limit=1" })).body as {
      data: { id: string }[];
    };
    const ownerId = owners.data[0]!.id;
    expect(
      (await call("updateMember", { key, params: { memberId: ownerId }, body: { role: "viewer" } })).status,
    ).toBe(409);
    expect((await call("removeMember", { key, params: { memberId: ownerId } })).status).toBe(409);
    expect((await call("removeMember", { key, params: { memberId } })).status).toBe(200);
    expect((await call("removeMember", { key, params: { memberId } })).status).toBe(404);
  });
});

describe("Audit", () => {
  it("lists and exports the account's audit events as documented", async () => {
    const account = await h.tenant();
    const key = account.key;
    expect(
      (await call("inviteMember", { key, body: { email: "audit@example.com", role: "viewer" } })).status,
    ).toBe(201);
    const listed = await call("listAuditEvents", { key, query: "limit=1&action=member.invite" });
    expect(listed.status).toBe(200);
    expect((listed.body as { data: unknown[] }).data).toHaveLength(1);
    expect((await call("listAuditEvents", { key, query: "limit=0" })).status).toBe(400);
    const exported = await call("exportAuditEvents", { key, query: "actorType=key" });
    expect(exported.status).toBe(200);
    expect(String(exported.body).trimEnd().split("\n")).toHaveLength(1);
    expect((await call("exportAuditEvents", { key, query: "since=yesterday" })).status).toBe(400);
  });
});

describe("every write operation", () => {
  it("answers 409 IDEMPOTENCY_KEY_IN_USE, 422 IDEMPOTENCY_KEY_REUSED and 400 for a malformed key as documented", async () => {
    const params = {
      agentId: MISSING_AGENT,
      keyId: MISSING_KEY,
      memberId: MISSING_MEMBER,
      conversationId: MISSING_CONVERSATION,
      userId: "nobody",
      webhookId: MISSING_WEBHOOK,
      deliveryId: MISSING_DELIVERY,
      memoryId: MISSING_MEMORY,
      documentId: MISSING_DOCUMENT,
      scheduleId: MISSING_SCHEDULE,
      messageId: MISSING_MESSAGE,
      budgetId: MISSING_BUDGET,
      name: "TOKEN",
    };
    const { idempotency } = h.gateway.context;
    for (const route of ROUTES.filter((r) => r.method !== "GET")) {
      const op = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      const operationId = op.operationId as string;
      const url = route.path.replace(/:(\w+)/g, (_, name: string) => params[name as keyof typeof params]);
      const body = route.method === "DELETE" ? "" : JSON.stringify({ name: "x" });
      // Another request holds each key: one the same as the call, one different.
      const [running, other] = [`running ${operationId}`, `other ${operationId}`];
      const fingerprint = createHmac("sha256", running)
        .update(`${route.method} ${url}\n${body}`)
        .digest("hex");
      for (const [key, print] of [
        [running, fingerprint],
        [other, "another request"],
      ] as const) {
        await idempotency.beginRequest({
          accountId: tenant.accountId,
          keyHash: createHash("sha256").update(key).digest("hex"),
          fingerprint: print,
          leaseMs: 60_000n,
        });
      }
      const options = {
        params,
        ...(route.method === "DELETE" ? {} : { rawBody: body }),
        headers: { "content-type": "application/json" },
      };
      const inUse = await call(operationId, {
        ...options,
        headers: { ...options.headers, "Idempotency-Key": running },
      });
      expect(inUse.status, operationId).toBe(409);
      expect((inUse.body as { error: { code: string } }).error.code).toBe("IDEMPOTENCY_KEY_IN_USE");
      const reused = await call(operationId, {
        ...options,
        headers: { ...options.headers, "Idempotency-Key": other },
      });
      expect(reused.status, operationId).toBe(422);
      expect((reused.body as { error: { code: string } }).error.code).toBe("IDEMPOTENCY_KEY_REUSED");
      const malformed = await call(operationId, {
        ...options,
        headers: { ...options.headers, "Idempotency-Key": "x".repeat(256) },
      });
      expect(malformed.status, operationId).toBe(400);
      expect((malformed.body as { error: { details: unknown } }).error.details).toEqual([
        { field: "Idempotency-Key", issue: "must be 1 to 255 printable ASCII characters" },
      ]);
    }
  });
});

describe("service routes and route-level errors", () => {
  it("health, readiness and the document answer as documented", async () => {
    expect((await call("getHealth", { key: null })).status).toBe(200);
    expect((await call("getReadiness", { key: null })).status).toBe(200);
    h.gateway.context.draining = true;
    try {
      expect((await call("getReadiness", { key: null })).status).toBe(503);
    } finally {
      h.gateway.context.draining = false;
    }
    const served = await fetch(`${h.url}/v1/openapi.json`);
    expectDocumented("getOpenApiDocument", {
      status: served.status,
      headers: served.headers,
      body: await served.json(),
    });
  });

  it("serves the reference page and the renderer's files it references, without a CDN", async () => {
    const page = await fetch(`${h.url}/docs`);
    const html = await page.text();
    expectDocumented("getDocs", { status: page.status, headers: page.headers, body: html });
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(html).toContain("/v1/openapi.json");
    const referenced = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(referenced).toEqual(expect.arrayContaining(["/docs/assets/swagger-ui-bundle.js"]));
    for (const url of referenced) {
      expect(url.startsWith("/"), `${url} is served by the gateway`).toBe(true);
      const asset = await fetch(`${h.url}${url}`);
      const body = await asset.text();
      expectDocumented("getDocsAsset", { status: asset.status, headers: asset.headers, body });
      expect(body.length).toBeGreaterThan(10_000);
    }
    expect((await fetch(`${h.url}/docs/assets/swagger-ui-bundle.js`)).headers.get("content-type")).toMatch(
      /javascript/,
    );
    expect((await call("getDocsAsset", { params: { file: "secrets.txt" }, key: null })).status).toBe(404);
    expect((await call("getDocsAsset", { params: { file: "..%2Fpackage.json" }, key: null })).status).toBe(
      404,
    );
  });

  it("serves the web console and its session routes as documented", async () => {
    const fetched = async (operationId: string, path: string, init: RequestInit = {}) => {
      const res = await fetch(`${h.url}${path}`, { redirect: "manual", ...init });
      const text = await res.text();
      const json = (res.headers.get("content-type") ?? "").startsWith("application/json");
      const received = { status: res.status, headers: res.headers, body: json ? JSON.parse(text) : text };
      expectDocumented(operationId, received);
      return { ...received, cookies: res.headers.getSetCookie() };
    };
    expect((await fetched("getConsole", "/console")).status).toBe(302);
    expect((await fetched("getConsole", "/console/")).status).toBe(200);
    expect((await fetched("getConsolePage", "/console/agents")).status).toBe(200);
    expect((await fetched("getConsolePage", "/console/assets/main.js")).status).toBe(200);
    expect((await fetched("getConsolePage", "/console/assets/missing.js")).status).toBe(404);
    const oidc = await fetched("getConsoleOidc", "/console/oidc");
    expect(oidc.status).toBe(200);
    expect(oidc.body).toEqual({ success: true, data: { enabled: false, startUrl: null } });

    const token = randomBytes(32).toString("base64url");
    await h.gateway.context.accounts.createConsoleLink({
      accountId: tenant.accountId,
      tokenSha256: sha256Hex(token),
      expireTime: timestampFromMs(Date.now() + 60_000),
    });
    const json = { "content-type": "application/json" };
    expect((await call("signInToConsole", { key: null, body: {} })).status).toBe(400);
    const notJson = { "content-type": "text/plain" };
    expect((await call("signInToConsole", { key: null, rawBody: "token", headers: notJson })).status).toBe(
      415,
    );
    const huge = JSON.stringify({ token: "x".repeat(BODY_LIMIT_BYTES) });
    expect((await call("signInToConsole", { key: null, rawBody: huge, headers: json })).status).toBe(413);
    expect((await call("signInToConsole", { key: null, body: { token: "x".repeat(43) } })).status).toBe(401);
    const signedIn = await fetched("signInToConsole", "/console/session", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ token }),
    });
    expect(signedIn.status).toBe(201);
    const cookie = signedIn.cookies.map((c) => c.split(";")[0]).join("; ");
    const csrf = /agentry_csrf=([^;]+)/.exec(cookie)![1]!;
    expect((await call("getConsoleSession", { key: null })).status).toBe(401);
    expect((await call("getConsoleSession", { key: null, headers: { cookie } })).status).toBe(200);
    expect((await call("signOutOfConsole", { key: null, headers: { cookie } })).status).toBe(403);
    const out = await call("signOutOfConsole", { key: null, headers: { cookie, "x-csrf-token": csrf } });
    expect(out.status).toBe(200);
  });

  it("answers an unknown route and a wrong method with the documented responses", async () => {
    const components = (doc.components as { responses: Json }).responses;
    const unknown = await h.request("GET", "/v1/nothing-here", { key: tenant.key });
    expect(unknown.status).toBe(404);
    expectMatches(components.RouteNotFound as Json, unknown, "RouteNotFound");
    const wrong = await h.request("PUT", "/v1/agents", { key: tenant.key, body: {} });
    expect(wrong.status).toBe(405);
    expectMatches(components.MethodNotAllowed as Json, wrong, "MethodNotAllowed");
  });

  it("lists in Allow exactly the documented methods of every path, for OPTIONS and for every other method", async () => {
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      // A parameter's value that no literal path uses, so the request is for this path and no other.
      const concrete = path.replace(/\{[^}]+\}/g, "p-sample");
      const documented = Object.keys(item)
        .filter((method) => METHODS.includes(method))
        .map((method) => method.toUpperCase());
      const expected = [...documented, ...(documented.includes("GET") ? ["HEAD"] : [])].sort();
      const allow = (res: { headers: Headers }) =>
        (res.headers.get("allow") ?? "")
          .split(",")
          .map((method) => method.trim())
          .filter(Boolean)
          .sort();
      const options = await h.request("OPTIONS", concrete, { key: tenant.key });
      if (options.status !== 200 || allow(options).join() !== expected.join()) {
        wrong.push(`OPTIONS ${concrete}: ${options.status}, Allow ${allow(options).join(", ")}`);
      }
      for (const method of ["GET", "HEAD", "PUT", "POST", "PATCH", "DELETE"]) {
        if (expected.includes(method)) continue;
        const res = await h.request(method, concrete, { key: tenant.key });
        if (res.status !== 405 || allow(res).join() !== expected.join()) {
          wrong.push(`${method} ${concrete}: ${res.status}, Allow ${allow(res).join(", ")}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // The literal path is its own, not an agent's: an agent's methods are not offered on it.
    const importing = await h.request("OPTIONS", "/v1/agents/import", { key: tenant.key });
    expect(importing.headers.get("allow")).toBe("POST");
    const get = await h.request<{ error: { code: string; message: string } }>("GET", "/v1/agents/import", {
      key: tenant.key,
    });
    expect(get.status).toBe(405);
    expect(get.body.error.code).toBe("METHOD_NOT_ALLOWED");
    expect(get.body.error.message).toBe("GET is not allowed on /v1/agents/import; allowed: POST.");
  });

  it("reuses a caller's X-Request-Id exactly when it matches the documented pattern", async () => {
    const header = resolve((doc.components as { headers: Json }).headers["X-Request-Id"]);
    const pattern = /`(\^[^`]+\$)`/.exec(header.description as string)![1]!;
    for (const id of ["a", `a${"b".repeat(127)}`, `a${"b".repeat(128)}`, "-a", "a b", "a/b"]) {
      const res = await h.request("GET", "/healthz", { headers: { "x-request-id": id } });
      const reused = res.headers.get("x-request-id") === id;
      expect(reused, id).toBe(new RegExp(pattern).test(id));
    }
  });
});

describe("OpenAI-compatible operations", () => {
  const chat = (model: string, extra: Json = {}) => ({
    model,
    messages: [{ role: "user", content: "Hi" }],
    ...extra,
  });

  it("answers a chat completion, its stream and the models as documented", async () => {
    const agentId = await newAgent();
    openai.reply("Hello there.");
    const ok = await call("createChatCompletion", { body: chat(agentId, { user: "u-openai" }) });
    expect(ok.status).toBe(200);
    expect((ok.body as { object: string }).object).toBe("chat.completion");

    // The stream: its content type is the documented one, each `data:` event satisfies the documented chunk.
    openai.reply("one two three", { chunkDelayMs: 2 });
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify(chat(agentId, { stream: true, stream_options: { include_usage: true } })),
    });
    const frames = (await res.text()).split("\n\n").filter(Boolean);
    expectDocumented("createChatCompletion", { status: res.status, headers: res.headers, body: null });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const response = resolve((operation("createChatCompletion").op.responses as Json)["200"]);
    const chunk = ((response.content as Json)["text/event-stream"] as Json)["x-event-data"];
    expect(frames.at(-1)).toBe("data: [DONE]");
    expect(frames.length).toBeGreaterThan(2);
    for (const frame of frames.slice(0, -1)) {
      expect(frame.startsWith("data: "), frame).toBe(true);
      expect(checker.errors(chunk, JSON.parse(frame.slice("data: ".length))), frame).toBeNull();
    }

    const models = await call("listModels");
    expect(models.status).toBe(200);
    expect((models.body as { data: { id: string }[] }).data.map((model) => model.id)).toContain(agentId);
    const one = await call("retrieveModel", { params: { model: agentId } });
    expect(one.status).toBe(200);
    expect((one.body as { id: string }).id).toBe(agentId);
  });

  it("answers the documented errors in OpenAI's shape", async () => {
    const agentId = await newAgent();
    const codeOf = (res: Received) => (res.body as { error: { code: string } }).error.code;

    const tools = await call("createChatCompletion", {
      body: chat(agentId, { tools: [{ type: "function", function: { name: "f" } }] }),
    });
    expect(tools.status).toBe(400);
    expect((tools.body as { error: { param: string } }).error.param).toBe("tools");
    const unknown = await call("createChatCompletion", { body: chat(MISSING_AGENT) });
    expect(unknown.status).toBe(404);
    expect((await call("retrieveModel", { params: { model: MISSING_AGENT } })).status).toBe(404);

    openai.failWith(401);
    const failed = await call("createChatCompletion", { body: chat(agentId) });
    expect(failed.status).toBe(502);
    expect(codeOf(failed)).toBe("MODEL_ERROR");
    openai.failWith(429, { headers: { "retry-after": "7" } });
    const unavailable = await call("createChatCompletion", { body: chat(agentId) });
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get("retry-after")).toBe("7");

    const tooLarge = await call("createChatCompletion", {
      rawBody: JSON.stringify({ ...chat(agentId), user: "x".repeat(BODY_LIMIT_BYTES) }),
      headers: { "content-type": "application/json" },
    });
    expect(tooLarge.status).toBe(413);
    const form = await call("createChatCompletion", {
      rawBody: "model=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(415);

    await call("updateAgent", { params: { agentId }, body: { status: "inactive" } });
    const inactive = await call("createChatCompletion", { body: chat(agentId) });
    expect(inactive.status).toBe(409);
    expect(codeOf(inactive)).toBe("AGENT_INACTIVE");
  });

  it("answers a reused, a running and a malformed Idempotency-Key as documented", async () => {
    const agentId = await newAgent();
    const codeOf = (res: Received) => (res.body as { error: { code: string } }).error.code;
    const key = `chat ${randomBytes(6).toString("hex")}`;
    openai.reply("Hello there.");
    const first = await call("createChatCompletion", {
      body: chat(agentId),
      headers: { "Idempotency-Key": key },
    });
    expect(first.status).toBe(200);
    const reused = await call("createChatCompletion", {
      body: chat(agentId, { user: "someone-else" }),
      headers: { "Idempotency-Key": key },
    });
    expect(reused.status).toBe(422);
    expect(codeOf(reused)).toBe("IDEMPOTENCY_KEY_REUSED");
    // Another request holds this key, with the same request: the retry waits for it.
    const running = `running ${key}`;
    const rawBody = JSON.stringify(chat(agentId));
    await h.gateway.context.idempotency.beginRequest({
      accountId: tenant.accountId,
      keyHash: createHash("sha256").update(running).digest("hex"),
      fingerprint: createHmac("sha256", running)
        .update(`POST /v1/chat/completions\n${rawBody}`)
        .digest("hex"),
      leaseMs: 60_000n,
    });
    const inUse = await call("createChatCompletion", {
      rawBody,
      headers: { "content-type": "application/json", "Idempotency-Key": running },
    });
    expect(inUse.status).toBe(409);
    expect(codeOf(inUse)).toBe("IDEMPOTENCY_KEY_IN_USE");
    expect(inUse.headers.get("retry-after")).not.toBeNull();
    const malformed = await call("createChatCompletion", {
      body: chat(agentId),
      headers: { "Idempotency-Key": "x".repeat(256) },
    });
    expect(malformed.status).toBe(400);
    expect((malformed.body as { error: { param: string } }).error.param).toBe("Idempotency-Key");
  });

  it("answers 401 without a key, 403 without the scope and 429 once the account's limit is spent", async () => {
    const agentId = await newAgent();
    const operations: { operationId: string; scope: Scope; options: CallOptions }[] = [
      { operationId: "createChatCompletion", scope: "messages:send", options: { body: chat(agentId) } },
      { operationId: "listModels", scope: "agents:read", options: {} },
      { operationId: "retrieveModel", scope: "agents:read", options: { params: { model: agentId } } },
    ];
    for (const { operationId, scope, options } of operations) {
      const anonymous = await call(operationId, { ...options, key: null });
      expect(anonymous.status, operationId).toBe(401);
      expect((anonymous.body as { error: { type: string } }).error.type).toBe("authentication_error");
      const other = await tenant.keyWith([scope === "messages:send" ? "agents:read" : "messages:send"]);
      const refused = await call(operationId, { ...options, key: other.key });
      expect(refused.status, operationId).toBe(403);
      expect((refused.body as { error: { type: string } }).error.type).toBe("permission_error");

      const spent = await h.tenant({ limits: { requestsPerMinute: 1 } });
      expect((await h.request("GET", "/v1/api-keys", { key: spent.key })).status).toBe(200);
      const limited = await call(operationId, { ...options, key: spent.key });
      expect(limited.status, operationId).toBe(429);
      expect((limited.body as { error: { type: string } }).error.type).toBe("rate_limit_error");
    }
  });
});

describe("coverage", () => {
  it("exercised every documented status of every operation (500 and 503 at least once)", () => {
    const missing: string[] = [];
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const status of Object.keys(op.responses as Json)) {
          if (status === "500" || status === "503") continue;
          const key = `${op.operationId as string} ${status}`;
          if (!covered.has(key)) missing.push(key);
        }
      }
    }
    expect(missing).toEqual([]);
    expect([...covered].some((key) => key.endsWith(" 500"))).toBe(true);
    expect([...covered].some((key) => key.endsWith(" 503"))).toBe(true);
  });
});
