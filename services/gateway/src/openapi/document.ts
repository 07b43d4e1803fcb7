import {
  API_KEY_PREFIX,
  AGENT_BOUNDS as BOUNDS,
  type LimitName,
  MESSAGE_BOUNDS,
  PAGE_LIMIT,
  SCOPES,
  TIER_DEFAULTS,
} from "@agentry/core";
import { ERROR_CODES, type ErrorCode } from "@agentry/errors";
import { BODY_LIMIT_BYTES, NUL_FREE_PATTERN } from "../http/body.js";
import { IDEMPOTENCY_KEY_SCHEMA_PATTERN } from "../http/idempotency.js";
import type { ServedProviders } from "../providers.js";
import { characterSchemaPath } from "../routes/characters.schemas.js";
import { type Component, type ParamDoc, type Route, schemaId } from "../routes/define.js";
import { openAiOperations } from "../standard/openai/openapi.js";
import { consolePaths } from "./console.js";
import { JSON_VALUE_SCHEMA_ID, type JsonSchema, schemaRef } from "./convert.js";
import { AUTHENTICATED_ERRORS, PATH_PARAMETERS } from "./operations.js";
import {
  ERROR_CODE_DOCS,
  errorResponse,
  errorResponseName,
  headerComponents,
  responseHeaders,
  statusOf,
} from "./responses.js";
import { componentSchemas, queryParameters, STREAM_EVENT_SCHEMA_ID, WEBHOOK_EVENTS } from "./schemas.js";

export type OpenApiDocument = JsonSchema & { paths: Record<string, Record<string, JsonSchema>> };

/** The origin written into the committed copy of the document (`sdks/openapi.json`). */
export const DEFAULT_PUBLIC_BASE_URL = "http://localhost:8080";

export const OPENAPI_JSON_PATH = "/v1/openapi.json";
export const DOCS_PATH = "/docs";
/** The reference page's script and stylesheet, served from the gateway itself so the page works offline. */
export const DOCS_ASSETS: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
};
export const DOCS_ASSET_PATH = "/docs/assets/:file";

const SECURITY_SCHEME = "bearerAuth";

/** `/v1/agents/:agentId` → `/v1/agents/{agentId}`. */
export function openApiPath(routerPath: string): string {
  // `:name` is one segment, `*name` the rest of the path (the console's files); both are `{name}` here.
  return routerPath.replace(/[:*]([A-Za-z0-9_]+)/g, "{$1}");
}

const LIMIT_ROWS: { name: LimitName; what: string }[] = [
  { name: "requestsPerMinute", what: "Requests per minute, all endpoints (the account's tier limit)" },
  {
    name: "createPerMinute",
    what: "Create Agent, Create Webhook, test events and redeliveries per minute",
  },
  {
    name: "listPerMinute",
    what: "List Agents, the history lists, exports, List Webhooks and the delivery log per minute",
  },
  { name: "getPerMinute", what: "Get Agent, Get Message and Get Webhook per minute" },
  { name: "updatePerMinute", what: "Update Agent, Update Webhook and secret rotations per minute" },
  {
    name: "deletePerMinute",
    what: "Delete Agent, Delete Conversation, Erase User and Delete Webhook per minute",
  },
  { name: "messagesPerMinute", what: "Send Message per minute, per agent" },
  {
    name: "concurrentMessages",
    what: "Send Message requests at once, per agent (a stream holds one until it ends)",
  },
  { name: "maxAgents", what: "Agents per account" },
];

/** `100000` → `100,000`. */
export const formatNumber = (value: number) => value.toLocaleString("en-US");

function rateLimitTable(): string {
  const rows = LIMIT_ROWS.map(
    ({ name, what }) =>
      `| ${what} | \`${name}\` | ${TIER_DEFAULTS.standard[name]} | ${TIER_DEFAULTS.pro[name]} | custom (default ${TIER_DEFAULTS.enterprise[name]}) |`,
  );
  return ["| Limit | Name | Standard | Pro | Enterprise |", "|---|---|---|---|---|", ...rows].join("\n");
}

function errorTable(): string {
  const rows = (Object.keys(ERROR_CODE_DOCS) as ErrorCode[]).map(
    (code) => `| \`${code}\` | ${statusOf([code])} | ${ERROR_CODE_DOCS[code].when} |`,
  );
  return ["| Code | Status | When |", "|---|---|---|", ...rows].join("\n");
}

function infoDescription(): string {
  return `Create, configure, list, message and delete AI agents. Every call is an HTTP request with a JSON body, authenticated by an API key.

## Authentication
Send \`Authorization: Bearer <API key>\`. Keys look like \`${API_KEY_PREFIX}\` followed by 38 letters and digits (the last 6 a checksum, so a mistyped key is refused without a lookup). A missing or invalid key is answered \`401 UNAUTHORIZED\`; a key without the scope an operation needs, \`403 FORBIDDEN\`. Scopes: ${SCOPES.map((scope) => `\`${scope}\``).join(", ")}; each operation names its scope (\`x-scopes\`). A key created without scopes is a full-access key: it holds every scope, including scopes added in later versions; a key created with scopes holds only those. Rotate keys about every 90 days, keep development and production keys apart, revoke unused keys, and keep keys out of version control.

## Responses
Success: \`{"success": true, "data": ...}\`; lists add \`pagination\`. Errors: \`{"success": false, "error": {"code", "message", "details"?, "requestId"}}\`, where \`details\` lists field problems as \`{"field": "bio[2]", "issue": "..."}\`. Each code has one status:

${errorTable()}

Any path answers \`404 NOT_FOUND\` for a route that does not exist and \`405 METHOD_NOT_ALLOWED\` (with \`Allow\`) for a method it does not have. Every response carries \`X-Request-Id\`. Identifiers (\`agt_\`, \`conv_\`, \`msg_\`, \`key_\`, \`whk_\`, \`dlv_\`, \`evt_\`, \`req_\` and a ULID) are opaque strings.

## Limits
Every request spends from the account's tier limit and from its endpoint's limit (for messages, the agent's), and all must allow it. Authenticated responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix epoch seconds) for the limit with the least remaining, and \`X-RateLimit-Bucket\` naming it (\`requestsPerMinute\`, \`createPerMinute\`, ...). A refused request is \`429 RATE_LIMIT_EXCEEDED\` with \`Retry-After\` in seconds; retry with exponential backoff. Limits are exact across all gateways that share one Redis.

${rateLimitTable()}

Sizes: a request body at most ${formatNumber(BODY_LIMIT_BYTES)} bytes (1 MiB, else \`413\`); \`name\` 1 to ${BOUNDS.nameMaxLength} characters; arrays at most ${BOUNDS.arrayMaxItems} items; string items at most ${formatNumber(BOUNDS.stringItemMaxLength)} characters; a message's \`text\` 1 to ${formatNumber(MESSAGE_BOUNDS.textMaxLength)} characters. No string or object key in a request body may contain the NUL character (U+0000). Lists: \`page\` from 1, \`limit\` 1 to ${PAGE_LIMIT.max} (default ${PAGE_LIMIT.default}); the history lists and a webhook endpoint's delivery log page by cursor instead (\`before\`, \`after\`, \`limit\` 1 to ${PAGE_LIMIT.max}, default ${PAGE_LIMIT.default}) and answer \`pagination: {limit, hasMore}\`. Recommended client timeout: 30 seconds.

## Webhooks
An account's events reach the URLs it registers (\`POST /v1/webhooks\`, scope \`webhooks:manage\`) as POSTs of \`{"id", "type", "createdAt", "data"}\`, signed per Standard Webhooks: \`webhook-id\` (the event id, the same on every retry), \`webhook-timestamp\` and \`webhook-signature\` (\`v1,\` and the base64 HMAC-SHA256 of \`id.timestamp.body\` keyed with the endpoint's secret). Any Standard Webhooks library, and each official SDK, verifies them. Delivery is at least once: a 2xx within 10 seconds is success; anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; \`410 Gone\` disables the endpoint, and so do 5 days of failures. The bodies of each event type are under \`webhooks\` in this document.

## MCP and A2A
The agents are also reachable with the standard protocols' own clients, on the same API keys (as bearer tokens), scopes, limits, history and usage; those endpoints are described by their protocols, not here (docs/api/standard-clients.md). MCP (Streamable HTTP): \`POST /v1/mcp\`, tools \`list_agents\` (\`agents:read\`), \`get_agent\` (\`agents:read\`), \`send_message\` (\`messages:send\`). A2A (JSON-RPC, protocol 1.0 and the 0.3 methods): each agent at \`/v1/a2a/{agentId}\` (\`messages:send\`), its card at \`/v1/a2a/{agentId}/.well-known/agent-card.json\` (\`agents:read\`).

## Versioning
The major version is the first path segment (\`/v1\`). Within it, changes are backward compatible: fields may be added to responses, so clients must ignore fields they do not know. A breaking change is a new major version.`;
}

function parameter(name: string, own: Record<string, ParamDoc | undefined> = {}): JsonSchema {
  const doc = own[name] ?? PATH_PARAMETERS[name];
  if (!doc) throw new Error(`no description of path parameter ${name}`);
  return {
    name,
    in: "path",
    required: true,
    description: doc.description,
    schema: { type: "string", ...doc.bounds, examples: [doc.example] },
  };
}

function pathParameters(route: Route): JsonSchema[] {
  return [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => parameter(match[1]!, route.params));
}

function errorResponses(
  codes: ErrorCode[],
  responses: Record<string, JsonSchema>,
): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = statusOf([code]);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, JsonSchema> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const group = byStatus.get(status)!.sort((a, b) => ERROR_CODES.indexOf(a) - ERROR_CODES.indexOf(b));
    const name = errorResponseName(group);
    responses[name] ??= errorResponse(group);
    out[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

function streamExample(): string {
  const ids = { id: "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1", agentId: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1" };
  const conversation = { userId: "user-42", roomId: null };
  const events: [string, unknown][] = [
    ["message.started", { ...ids, ...conversation }],
    ["message.delta", { text: "Hello" }],
    ["message.delta", { text: " there." }],
    [
      "message.completed",
      {
        ...ids,
        ...conversation,
        text: "Hello there.",
        model: "gpt-4o-mini",
        modelProvider: "openai",
        finishReason: "stop",
        usage: { inputTokens: 42, outputTokens: 3, totalTokens: 45 },
        latencyMs: 812,
        createdAt: "2026-11-20T09:30:00.812Z",
      },
    ],
  ];
  return events
    .map(([event, data], index) => `id: ${index + 1}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
}

/**
 * The `text/event-stream` content: `schema` describes each event, as OpenAPI 3.1 tooling reads it (OpenAPI 3.2
 * calls the same thing `itemSchema`, and gives `schema` to the stream as a whole).
 */
function sseContent(): JsonSchema {
  return { schema: schemaRef(STREAM_EVENT_SCHEMA_ID), example: streamExample() };
}

function hasQueryParameter(route: Route, name: string): boolean {
  return (
    route.query !== undefined && queryParameters(route.query).some((parameter) => parameter.name === name)
  );
}

function ndjsonExample(): string {
  const common = {
    agentId: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
    conversationId: "conv_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
    userId: "user-42",
    roomId: null,
  };
  const lines = [
    {
      id: "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H0",
      ...common,
      role: "user",
      text: "Hello!",
      createdAt: "2026-11-20T09:30:00.000Z",
    },
    {
      id: "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
      ...common,
      role: "assistant",
      text: "Hello there.",
      model: "gpt-4o-mini",
      modelProvider: "openai",
      finishReason: "stop",
      usage: { inputTokens: 42, outputTokens: 3, totalTokens: 45 },
      latencyMs: 812,
      createdAt: "2026-11-20T09:30:00.812Z",
    },
    // The memories come after the messages.
    {
      id: "mem_01JCZ3S8Q5M2T7V9X0B4D6F8H2",
      agentId: common.agentId,
      userId: common.userId,
      text: "The user's favourite colour is teal.",
      source: { messageId: "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H0" },
      createdAt: "2026-11-20T09:30:01.000Z",
    },
  ];
  return lines.map((line) => `${JSON.stringify(line)}\n`).join("");
}

/**
 * The `application/x-ndjson` content: `schema` describes each line, as the `text/event-stream` one describes each
 * event (OpenAPI 3.2 calls this `itemSchema`).
 */
function ndjsonContent(itemSchema: string): JsonSchema {
  return { schema: schemaRef(itemSchema), example: ndjsonExample() };
}

function authenticatedOperation(route: Route, responses: Record<string, JsonSchema>) {
  const limits: LimitName[] = ["requestsPerMinute"];
  if (route.limit) limits.push(route.limit);
  if (route.concurrency) limits.push("concurrentMessages");
  const parameters = pathParameters(route);
  const query = [...(route.query ? queryParameters(route.query) : []), ...(route.queryParameters?.() ?? [])];
  for (const { name, schema, required } of query) {
    const { description, ...rest } = schema;
    const values = route.commaSeparated?.[name];
    if (values === undefined) {
      parameters.push({ name, in: "query", required, description, schema: rest });
      continue;
    }
    parameters.push({
      name,
      in: "query",
      required,
      description,
      style: "form",
      explode: false,
      schema: {
        type: "array",
        items: { type: "string", enum: [...values] },
        minItems: 1,
        uniqueItems: true,
        examples: [values.slice(0, 2)],
      },
    });
  }
  for (const { name, description, schema, sdkExclude } of route.requestHeaders ?? []) {
    const exclude = sdkExclude ? { "x-sdk-exclude": true } : {};
    parameters.push({ name, in: "header", required: false, description, schema, ...exclude });
  }
  parameters.push({ $ref: "#/components/parameters/X-Request-Id" });
  const write = route.method !== "GET";
  if (write) parameters.push({ $ref: "#/components/parameters/Idempotency-Key" });
  // Every write reads an Idempotency-Key, and refuses a malformed one with 400.
  const errors: ErrorCode[] = write
    ? [
        ...new Set<ErrorCode>([
          ...route.errors,
          "INVALID_REQUEST",
          "IDEMPOTENCY_KEY_IN_USE",
          "IDEMPOTENCY_KEY_REUSED",
        ]),
      ]
    : route.errors;
  // A replayed response (Idempotency-Key) says so.
  const replayed = write
    ? { "Idempotent-Replayed": { $ref: "#/components/headers/Idempotent-Replayed" } }
    : {};

  const successContent: JsonSchema = route.eventsOnly
    ? { "text/event-stream": sseContent() }
    : route.ndjson
      ? { "application/x-ndjson": ndjsonContent(schemaId(route.success.schema)) }
      : { "application/json": { schema: schemaRef(schemaId(route.success.schema)) } };
  if (route.stream) successContent["text/event-stream"] = sseContent();
  const successes = Object.fromEntries(
    (route.otherSuccess ?? []).map((other) => [
      String(other.status),
      {
        description: other.description,
        headers: { ...responseHeaders("always"), ...replayed, ...other.headers },
        content: { "application/json": { schema: schemaRef(schemaId(other.schema)) } },
        ...(other.whenQuery ? { "x-when-query": other.whenQuery } : {}),
        ...(other.whenBody ? { "x-when-body": other.whenBody } : {}),
        ...(other.sdkMethod ? { "x-sdk-method": other.sdkMethod } : {}),
      },
    ]),
  );

  const scopes = route.scope ? [route.scope] : [];
  const scopeNote = `${route.scope ? `Requires the \`${route.scope}\` scope.` : "Any valid API key, whatever its scopes."} Counts against ${limits.map((name) => `\`${name}\``).join(", ")}.`;
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: `${route.description}\n\n${scopeNote}`,
    security: [{ [SECURITY_SCHEME]: scopes }],
    "x-scopes": scopes,
    "x-rate-limits": limits,
    ...(route.sdkExclude ? { "x-sdk-exclude": true } : {}),
    ...(route.pagination === "page"
      ? {
          "x-pagination": {
            pageParameter: "page",
            limitParameter: "limit",
            itemsField: "data",
            pageInfoField: "pagination",
            hasMoreField: "hasMore",
          },
        }
      : {}),
    ...(route.pagination === "cursor"
      ? {
          "x-cursor-pagination": {
            limitParameter: "limit",
            beforeParameter: "before",
            afterParameter: "after",
            ...(hasQueryParameter(route, "order") ? { orderParameter: "order" } : {}),
            itemsField: "data",
            pageInfoField: "pagination",
            hasMoreField: "hasMore",
            cursorField: "id",
          },
        }
      : {}),
    ...(route.sdk ? { "x-sdk-resource": route.sdk.resource, "x-sdk-method": route.sdk.method } : {}),
    ...(route.body?.argument ? { "x-sdk-body-argument": route.body.argument } : {}),
    ...(route.bare ? { "x-envelope": false } : {}),
    parameters,
    ...(route.body
      ? {
          requestBody: {
            required: true,
            description:
              route.body.multipart?.description ?? `JSON, at most ${formatNumber(BODY_LIMIT_BYTES)} bytes.`,
            content: {
              "application/json": { schema: schemaRef(route.body.component) },
              ...(route.body.multipart
                ? { "multipart/form-data": { schema: route.body.multipart.schema } }
                : {}),
            },
          },
        }
      : {}),
    responses: {
      [String(route.success.status)]: {
        description: route.success.description,
        headers: { ...responseHeaders("always"), ...replayed, ...route.success.headers },
        content: successContent,
        ...(route.success.sdkVariants ? { "x-sdk-variants": route.success.sdkVariants } : {}),
      },
      ...successes,
      ...Object.fromEntries(
        (route.emptyResponses ?? []).map((empty) => [
          String(empty.status),
          { description: empty.description, headers: { ...responseHeaders("always"), ...empty.headers } },
        ]),
      ),
      ...errorResponses(
        [...errors, ...AUTHENTICATED_ERRORS.filter((code) => route.scope || code !== "FORBIDDEN")],
        responses,
      ),
    },
  };
}

const noAuth = { security: [], "x-sdk-exclude": true };

function serviceOperations(
  responses: Record<string, JsonSchema>,
): Record<string, Record<string, JsonSchema>> {
  const plain = (description: string, content: JsonSchema) => ({
    description,
    headers: responseHeaders("never"),
    content,
  });
  responses.RouteNotFound = errorResponse(["NOT_FOUND"], "never");
  responses.MethodNotAllowed = {
    ...errorResponse(["METHOD_NOT_ALLOWED"]),
    headers: {
      ...responseHeaders("never"),
      Allow: {
        description: "The methods this path has.",
        required: true,
        schema: { type: "string", examples: ["GET, HEAD, POST"] },
      },
    },
  };
  return {
    "/healthz": {
      get: {
        operationId: "getHealth",
        tags: ["Service"],
        summary: "Liveness",
        description: "Answers while the process is alive. No authentication.",
        ...noAuth,
        responses: {
          "200": plain("Alive.", { "application/json": { schema: schemaRef("Health") } }),
        },
      },
    },
    "/readyz": {
      get: {
        operationId: "getReadiness",
        tags: ["Service"],
        summary: "Readiness",
        description:
          "Whether this gateway takes requests: `200` with the state of each dependency, `503` once it is shutting down. A dependency that is down does not make it unready: every gateway shares it, and the requests that need it answer `503 AGENT_UNAVAILABLE` with `Retry-After`. No authentication.",
        ...noAuth,
        responses: {
          "200": plain("Ready.", { "application/json": { schema: schemaRef("Readiness") } }),
          "503": plain("Shutting down.", { "application/json": { schema: schemaRef("Readiness") } }),
        },
      },
    },
    [OPENAPI_JSON_PATH]: {
      get: {
        operationId: "getOpenApiDocument",
        tags: ["Service"],
        summary: "This document",
        description:
          "The OpenAPI 3.1 document of this API, as this deployment serves it: the agent requests accept only the model providers it serves and, where a provider serves only some models, only those. No authentication.",
        ...noAuth,
        responses: {
          "200": plain("The document.", {
            "application/json": { schema: { type: "object", description: "An OpenAPI 3.1 document." } },
          }),
        },
      },
    },
    ...characterSchemaPath(plain),
    ...consolePaths(plain),
    "/v1/connectors/{type}/{agentId}": {
      post: {
        operationId: "deliverConnectorUpdate",
        tags: ["Agents"],
        summary: "A platform's pushed update (Telegram webhook mode, Slack events)",
        description:
          "Where a platform pushes an agent's updates. Telegram, when the agent's `telegram` client has `mode: \"webhook\"`: the connector registers this URL with the bot (`setWebhook`) and a secret that Telegram repeats in `X-Telegram-Bot-Api-Secret-Token`. Slack, as the app's Events API Request URL: each request carries `X-Slack-Signature` and `X-Slack-Request-Timestamp`, checked against the agent's `SLACK_SIGNING_SECRET` and refused when more than 5 minutes old; `url_verification` is answered with its `challenge`. No API key: a missing or wrong secret or signature, or an agent whose client does not take pushed updates, is `401`. Answered once the update's message is answered, so a platform's retry of an update it got no answer to is answered once all the same.",
        ...noAuth,
        parameters: [
          {
            name: "type",
            in: "path",
            required: true,
            schema: { type: "string", enum: ["telegram", "slack"] },
          },
          { name: "agentId", in: "path", required: true, schema: { type: "string" } },
          {
            name: "X-Telegram-Bot-Api-Secret-Token",
            in: "header",
            required: false,
            schema: { type: "string" },
            description: "Telegram: the secret the connector registered with the bot.",
          },
          {
            name: "X-Slack-Signature",
            in: "header",
            required: false,
            schema: { type: "string" },
            description:
              "Slack: `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` under the signing secret.",
          },
          {
            name: "X-Slack-Request-Timestamp",
            in: "header",
            required: false,
            schema: { type: "string" },
            description: "Slack: when the request was signed, in Unix seconds; at most 5 minutes from now.",
          },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                description:
                  "A Telegram Update, or a Slack Events API payload. As in every request body, no string or object key in it may contain the NUL character (U+0000).",
                propertyNames: { pattern: NUL_FREE_PATTERN },
                additionalProperties: schemaRef(JSON_VALUE_SCHEMA_ID),
              },
            },
          },
        },
        responses: {
          "200": plain("The update was handled, or Slack's URL check answered.", {
            "application/json": {
              schema: {
                oneOf: [
                  { type: "object", required: ["success"], properties: { success: { const: true } } },
                  {
                    type: "object",
                    description: "Slack's url_verification, answered.",
                    required: ["challenge"],
                    properties: { challenge: { type: "string" } },
                  },
                ],
              },
            },
          }),
          "400": errorResponse(["INVALID_REQUEST"], "never"),
          "401": errorResponse(["UNAUTHORIZED"], "never"),
          "415": errorResponse(["UNSUPPORTED_MEDIA_TYPE"], "never"),
          "503": errorResponse(["AGENT_UNAVAILABLE"], "never"),
        },
      },
    },
    [DOCS_PATH]: {
      get: {
        operationId: "getDocs",
        tags: ["Service"],
        summary: "API reference page",
        description:
          "A rendered reference of this document, for a browser. Works offline. No authentication.",
        ...noAuth,
        responses: {
          "200": plain("An HTML page.", { "text/html": { schema: { type: "string" } } }),
        },
      },
    },
    [openApiPath(DOCS_ASSET_PATH)]: {
      get: {
        operationId: "getDocsAsset",
        tags: ["Service"],
        summary: "A file of the reference page",
        description: "The script and stylesheet the reference page loads. No authentication.",
        ...noAuth,
        parameters: [
          {
            name: "file",
            in: "path",
            required: true,
            schema: { type: "string", enum: Object.keys(DOCS_ASSETS) },
          },
        ],
        responses: {
          "200": plain("The file.", {
            "text/javascript": { schema: { type: "string" } },
            "text/css": { schema: { type: "string" } },
          }),
          "404": { $ref: "#/components/responses/RouteNotFound" },
        },
      },
    },
  };
}

/**
 * What the service POSTs to webhook endpoints, one entry per event type (OpenAPI 3.1 `webhooks`): the body's
 * schema and the signature headers. Receivers answer with any 2xx.
 */
function webhookDeliveries(): Record<string, JsonSchema> {
  const header = (description: string, example: string) => ({
    required: true,
    description,
    schema: { type: "string", examples: [example] },
  });
  const out: Record<string, JsonSchema> = {};
  for (const event of WEBHOOK_EVENTS) {
    for (const type of event.types) {
      out[type] = {
        post: {
          summary: `\`${type}\``,
          description: event.description,
          operationId: `on${type.replace(/(^|[._])([a-z])/g, (_, _sep: string, c: string) => c.toUpperCase())}`,
          tags: ["Webhooks"],
          parameters: [
            {
              name: "webhook-id",
              in: "header",
              ...header(
                "The event's id (`evt_…`): the same on every retry and redelivery.",
                "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
              ),
            },
            {
              name: "webhook-timestamp",
              in: "header",
              ...header("Unix seconds of this attempt; refuse one far from your clock.", "1763631000"),
            },
            {
              name: "webhook-signature",
              in: "header",
              ...header(
                "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the secret's bytes (after `whsec_`); two, space-separated, for 24 hours after a rotation.",
                "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
              ),
            },
          ],
          requestBody: {
            required: true,
            content: { "application/json": { schema: schemaRef(event.schemaId) } },
          },
          responses: {
            "2XX": { description: "Received. Anything else, or no answer within 10 seconds, is retried." },
            "410": { description: "Gone: the endpoint is disabled and nothing more is sent to it." },
          },
        },
      };
    }
  }
  return out;
}

/** The schemas routes declare themselves: their bodies' and the `component`s of their answers. */
function declaredComponents(routes: readonly Route[]): { requests: Component[]; responses: Component[] } {
  const requests: Component[] = [];
  const responses: Component[] = [];
  for (const route of routes) {
    if (route.body?.schema) requests.push({ id: route.body.component, schema: route.body.schema });
    for (const success of [route.success, ...(route.otherSuccess ?? [])]) {
      if (typeof success.schema !== "string") responses.push(success.schema);
    }
  }
  return { requests, responses };
}

/** The document's tags, in this order; a tag a route names that is not here follows them, without a description. */
const TAGS: { name: string; description: string }[] = [
  {
    name: "Agents",
    description: "Create, list, read, update and delete agents; import and export elizaOS character files.",
  },
  { name: "Messages", description: "Talk to an agent, with or without streaming." },
  {
    name: "History",
    description:
      "Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`, `history:delete`).",
  },
  {
    name: "Usage",
    description: "Sends, tokens, errors and latency by hour or day, grouped as asked (scope `usage:read`).",
  },
  {
    name: "Webhooks",
    description:
      "Endpoints that receive the account's events, signed per Standard Webhooks; their secrets and delivery logs (scope `webhooks:manage`).",
  },
  {
    name: "Plugins",
    description:
      "The plugin catalogue (any key) and agents' secrets, which plugins read (scope `plugins:manage`).",
  },
  { name: "API keys", description: "Manage the account's API keys (scope `keys:manage`)." },
  {
    name: "Members",
    description:
      "The people of the account and their roles, which decide what their console sessions may do (scopes `members:read`, `members:write`).",
  },
  {
    name: "Budgets",
    description:
      "Spend limits in tokens or US dollars per day or month for the account, an agent or a key (scopes `budgets:read`, `budgets:write`).",
  },
  {
    name: "Audit",
    description:
      "Who changed what in the account, when and from where: every change through any route, the console or the admin CLI (scope `audit:read`).",
  },
  { name: "Service", description: "Health, readiness and this documentation; no authentication." },
];

function documentTags(routes: readonly Route[]): { name: string; description?: string }[] {
  const named = new Set(TAGS.map((tag) => tag.name));
  const others = [...new Set(routes.map((route) => route.tag))].filter((tag) => !named.has(tag));
  return [...TAGS, ...others.map((name) => ({ name }))];
}

export interface DocumentOptions {
  /** The gateway's REST routes (`ROUTES`), each one declared with `defineRoute`. */
  routes: readonly Route[];
  /** The origin callers reach the service at (`PUBLIC_BASE_URL`), without a trailing slash. */
  publicBaseUrl: string;
  /** What this deployment serves; absent, the document lists every provider (the committed copy does). */
  providers?: ServedProviders | undefined;
}

/**
 * The OpenAPI 3.1 document of the REST API. Operations come from the routes' declarations, request schemas from
 * the gateway's validation schemas, so the document cannot describe routes or bounds the gateway does not have.
 */
export function buildOpenApiDocument(options: DocumentOptions): OpenApiDocument {
  const responses: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of options.routes) {
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase();
    paths[path] ??= {};
    if (paths[path][method]) throw new Error(`${route.method} ${route.path} is declared twice`);
    paths[path][method] = authenticatedOperation(route, responses);
  }
  Object.assign(paths, serviceOperations(responses));
  Object.assign(paths, openAiOperations());
  const schemas = componentSchemas(options.providers, declaredComponents(options.routes));
  for (const route of options.routes) {
    const named = [route.success, ...(route.otherSuccess ?? [])].map((success) => schemaId(success.schema));
    for (const id of route.body ? [...named, route.body.component] : named) {
      if (!(id in schemas))
        throw new Error(`${route.method} ${route.path} names schema ${id}, which is not a component`);
    }
  }

  const sortedResponses = Object.fromEntries(
    Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "Agentry Agent Management API",
      version: "1.0.0",
      description: infoDescription(),
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [{ url: options.publicBaseUrl, description: "This service" }],
    security: [{ [SECURITY_SCHEME]: [] }],
    tags: documentTags(options.routes),
    paths,
    webhooks: webhookDeliveries(),
    components: {
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: "http",
          scheme: "bearer",
          bearerFormat: `${API_KEY_PREFIX}<38 letters and digits>`,
          description: `An API key, sent as \`Authorization: Bearer ${API_KEY_PREFIX}…\`. Each operation's security requirement names the scope it needs (also in \`x-scopes\`).`,
        },
      },
      schemas,
      parameters: {
        "X-Request-Id": {
          name: "X-Request-Id",
          in: "header",
          required: false,
          description:
            "Your own id for the request, echoed in `X-Request-Id` and in error bodies when it matches `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`; otherwise the service makes one.",
          schema: { type: "string" },
        },
        "Idempotency-Key": {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "Makes the request safe to retry: the first request with a key runs, and the same request again (method, path with query, and body, byte for byte) within 24 hours answers the first response (`Idempotent-Replayed: true`) instead of running again. Keys are the account's: use a new random one (a UUID) for each new request. The same key with another request is `422 IDEMPOTENCY_KEY_REUSED`; while the first request runs, `409 IDEMPOTENCY_KEY_IN_USE` (an agent create, an import or an API key create answers such a duplicate with the first one's 201, replayed, once that has committed). A response with status 409, 429 or 5xx is not kept, so a retry with the key runs again; a stream is kept once completed, and replayed as its events.",
          schema: { type: "string", minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_SCHEMA_PATTERN },
        },
      },
      headers: headerComponents(),
      responses: sortedResponses,
    },
  };
}
