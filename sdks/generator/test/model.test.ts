import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  buildModel,
  hiddenBodyFields,
  loadModel,
  ModelError,
  OPENAPI_PATH,
  type TypeRef,
  typeNamed,
} from "../src/model.js";
import { camelCase, constantCase, pascalCase, snakeCase, words, wrap } from "../src/text.js";

const model = loadModel();
const op = (id: string) => {
  const found = model.operations.find((o) => o.operationId === id);
  if (found === undefined) throw new Error(`no ${id}`);
  return found;
};
const field = (type: string, name: string) => {
  const found = typeNamed(model, type).fields.find((f) => f.name === name);
  if (found === undefined) throw new Error(`no ${type}.${name}`);
  return found;
};

const HISTORY =
  "Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`, `history:delete`).";

const USAGE = "Sends, tokens, errors and latency by hour or day, grouped as asked (scope `usage:read`).";

const WEBHOOKS =
  "Endpoints that receive the account's events, signed per Standard Webhooks; their secrets and delivery logs (scope `webhooks:manage`).";
const PLUGINS =
  "The plugin catalogue (any key) and agents' secrets, which plugins read (scope `plugins:manage`).";

describe("model", () => {
  it("has the SDK operations, without the excluded ones, on paths without /v1", () => {
    expect(model.operations.map((o) => `${o.method} ${o.path} ${o.resource.join(".")}.${o.name}`)).toEqual([
      "POST /agents agents.create",
      "GET /agents agents.list",
      "GET /agents/{agentId} agents.get",
      "PATCH /agents/{agentId} agents.update",
      "DELETE /agents/{agentId} agents.delete",
      "POST /agents/import agents.importCharacter",
      "GET /agents/{agentId}/character agents.exportCharacter",
      "POST /agents/{agentId}/messages agents.messages.send",
      "GET /agents/{agentId}/messages agents.messages.list",
      "POST /agents/{agentId}/messages/{messageId}/approve agents.messages.approve",
      "GET /agents/{agentId}/conversations agents.conversations.list",
      "DELETE /agents/{agentId}/conversations/{conversationId} agents.conversations.delete",
      "GET /agents/{agentId}/messages/{messageId} agents.messages.get",
      "GET /users/{userId}/export users.export",
      "DELETE /users/{userId} users.erase",
      "GET /agents/{agentId}/runs agents.runs.list",
      "POST /agents/{agentId}/runs/cancel agents.runs.cancel",
      "GET /agents/{agentId}/memories agents.memories.list",
      "POST /agents/{agentId}/memories agents.memories.create",
      "DELETE /agents/{agentId}/memories/{memoryId} agents.memories.delete",
      "POST /agents/{agentId}/documents agents.documents.create",
      "GET /agents/{agentId}/documents agents.documents.list",
      "GET /agents/{agentId}/documents/{documentId} agents.documents.get",
      "DELETE /agents/{agentId}/documents/{documentId} agents.documents.delete",
      "GET /agents/{agentId}/knowledge-sources agents.documents.sources",
      "POST /agents/{agentId}/schedules agents.schedules.create",
      "GET /agents/{agentId}/schedules agents.schedules.list",
      "GET /agents/{agentId}/schedules/{scheduleId} agents.schedules.get",
      "PATCH /agents/{agentId}/schedules/{scheduleId} agents.schedules.update",
      "DELETE /agents/{agentId}/schedules/{scheduleId} agents.schedules.delete",
      "GET /usage usage.get",
      "GET /agents/{agentId}/usage agents.usage.get",
      "POST /webhooks webhookEndpoints.create",
      "GET /webhooks webhookEndpoints.list",
      "GET /webhooks/{webhookId} webhookEndpoints.get",
      "PATCH /webhooks/{webhookId} webhookEndpoints.update",
      "DELETE /webhooks/{webhookId} webhookEndpoints.delete",
      "POST /webhooks/{webhookId}/rotate-secret webhookEndpoints.rotateSecret",
      "POST /webhooks/{webhookId}/test webhookEndpoints.sendTestEvent",
      "GET /webhooks/{webhookId}/deliveries webhookEndpoints.deliveries.list",
      "POST /webhooks/{webhookId}/deliveries/{deliveryId}/redeliver webhookEndpoints.deliveries.redeliver",
      "GET /plugins plugins.list",
      "PUT /agents/{agentId}/secrets/{name} agents.secrets.set",
      "DELETE /agents/{agentId}/secrets/{name} agents.secrets.delete",
      "GET /agents/{agentId}/secrets agents.secrets.list",
      "GET /agents/{agentId}/clients agents.clients.list",
      "POST /api-keys apiKeys.create",
      "GET /api-keys apiKeys.list",
      "DELETE /api-keys/{keyId} apiKeys.revoke",
      "POST /members members.invite",
      "GET /members members.list",
      "GET /members/{memberId} members.get",
      "PATCH /members/{memberId} members.update",
      "DELETE /members/{memberId} members.remove",
      "POST /budgets budgets.create",
      "GET /budgets budgets.list",
      "GET /budgets/{budgetId} budgets.get",
      "PATCH /budgets/{budgetId} budgets.update",
      "DELETE /budgets/{budgetId} budgets.delete",
      "GET /audit-events auditEvents.list",
      "GET /audit-events/export auditEvents.export",
    ]);
    expect(model.defaultBaseUrl).toBe("http://localhost:8080/v1");
    expect(model.resources).toEqual([
      {
        path: ["agents"],
        description:
          "Create, list, read, update and delete agents; import and export elizaOS character files.",
        children: [
          ["agents", "messages"],
          ["agents", "conversations"],
          ["agents", "runs"],
          ["agents", "memories"],
          ["agents", "documents"],
          ["agents", "schedules"],
          ["agents", "usage"],
          ["agents", "secrets"],
          ["agents", "clients"],
        ],
      },
      {
        path: ["agents", "messages"],
        description: "Talk to an agent, with or without streaming.",
        children: [],
      },
      { path: ["agents", "conversations"], description: HISTORY, children: [] },
      { path: ["users"], description: HISTORY, children: [] },
      {
        path: ["agents", "runs"],
        description: "Talk to an agent, with or without streaming.",
        children: [],
      },
      { path: ["agents", "memories"], description: HISTORY, children: [] },
      {
        path: ["agents", "documents"],
        description:
          "Create, list, read, update and delete agents; import and export elizaOS character files.",
        children: [],
      },
      {
        path: ["agents", "schedules"],
        description:
          "Create, list, read, update and delete agents; import and export elizaOS character files.",
        children: [],
      },
      { path: ["usage"], description: USAGE, children: [] },
      { path: ["agents", "usage"], description: USAGE, children: [] },
      {
        path: ["webhookEndpoints"],
        description: WEBHOOKS,
        children: [["webhookEndpoints", "deliveries"]],
      },
      { path: ["webhookEndpoints", "deliveries"], description: WEBHOOKS, children: [] },
      { path: ["plugins"], description: PLUGINS, children: [] },
      { path: ["agents", "secrets"], description: PLUGINS, children: [] },
      {
        path: ["agents", "clients"],
        description:
          "Create, list, read, update and delete agents; import and export elizaOS character files.",
        children: [],
      },
      {
        path: ["apiKeys"],
        description: "Manage the account's API keys (scope `keys:manage`).",
        children: [],
      },
      {
        path: ["members"],
        description:
          "The people of the account and their roles, which decide what their console sessions may do (scopes `members:read`, `members:write`).",
        children: [],
      },
      {
        path: ["budgets"],
        description:
          "Spend limits in tokens or US dollars per day or month for the account, an agent or a key (scopes `budgets:read`, `budgets:write`).",
        children: [],
      },
      {
        path: ["auditEvents"],
        description:
          "Who changed what in the account, when and from where: every change through any route, the console or the admin CLI (scope `audit:read`).",
        children: [],
      },
    ]);
    expect(model.operations[0]?.tag).toBe("Agents");
  });

  it("marks the writes, which take an Idempotency-Key, and only them", () => {
    const writes = model.operations.filter((o) => o.idempotencyKey).map((o) => o.operationId);
    expect(writes).toEqual(model.operations.filter((o) => o.method !== "GET").map((o) => o.operationId));
    for (const id of ["createAgent", "sendMessage", "updateAgent", "deleteAgent", "rotateWebhookSecret"])
      expect(writes).toContain(id);
    expect(op("getAgent").idempotencyKey).toBe(false);
    expect(op("listAgents").queryParameters.map((p) => p.name)).not.toContain("Idempotency-Key");
  });

  it("unwraps envelopes and describes pagination", () => {
    expect(op("getAgent").response).toMatchObject({ status: 200, data: { kind: "ref", name: "Agent" } });
    expect(op("createAgent").response.status).toBe(201);
    expect(op("createApiKey").response.data).toEqual({ kind: "ref", name: "ApiKeyCreated" });
    expect(op("listApiKeys").response.data).toEqual({
      kind: "array",
      items: { kind: "ref", name: "ApiKey" },
    });
    expect(op("listAgents").pagination).toEqual({
      pageParameter: "page",
      limitParameter: "limit",
      itemsField: "data",
      pageInfoField: "pagination",
      hasMoreField: "hasMore",
      item: { kind: "ref", name: "Agent" },
      pageInfo: { kind: "ref", name: "Pagination" },
    });
    expect(op("getAgent").pagination).toBeUndefined();
    expect(op("getAgent").response.field).toBe("data");
  });

  it("answers the agent itself for create and update, whose envelopes add advisory warnings", () => {
    for (const id of ["createAgent", "updateAgent"]) {
      expect(op(id).response).toMatchObject({ field: "data", data: { kind: "ref", name: "Agent" } });
    }
    expect(model.types.some((t) => t.name === "AgentWriteResponseResult")).toBe(false);
  });

  it("describes cursor pagination", () => {
    const cursor = {
      limitParameter: "limit",
      beforeParameter: "before",
      afterParameter: "after",
      itemsField: "data",
      pageInfoField: "pagination",
      hasMoreField: "hasMore",
      cursorField: "id",
      pageInfo: { kind: "ref", name: "CursorPagination" },
    };
    expect(op("listMessages").cursorPagination).toEqual({
      ...cursor,
      orderParameter: "order",
      item: { kind: "ref", name: "HistoryMessage" },
    });
    // Conversations run newest activity first, with no order to choose.
    expect(op("listConversations").cursorPagination).toEqual({
      ...cursor,
      orderParameter: undefined,
      item: { kind: "ref", name: "Conversation" },
    });
    expect(op("listWebhookDeliveries").cursorPagination?.item).toEqual({ kind: "ref", name: "Delivery" });
    expect(op("listMessages").pagination).toBeUndefined();
    expect(op("listAgents").cursorPagination).toBeUndefined();
    expect(typeNamed(model, "CursorPagination").fields.map((f) => f.name)).toEqual(["limit", "hasMore"]);
  });

  it("reads an NDJSON answer as a stream of its line's type", () => {
    expect(op("exportUser")).toMatchObject({
      ndjson: true,
      response: {
        status: 200,
        // Messages, then memories: each told by a required key the other type lacks.
        data: {
          kind: "union",
          name: "UserExportLine",
          variants: [
            { kind: "ref", name: "HistoryMessage" },
            { kind: "ref", name: "Memory" },
          ],
          keys: ["conversationId", "source"],
        },
        field: undefined,
      },
    });
    expect(op("getMessage").ndjson).toBe(false);
  });

  it("refuses a union of object types that no key of their own tells apart", () => {
    const document = JSON.parse(JSON.stringify(loadModelDocument())) as {
      components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
    };
    expect(() => buildModel(JSON.parse(JSON.stringify(document)) as never)).not.toThrow();
    // A memory that also had a conversationId and whose source could be absent would fit both variants.
    const memory = document.components.schemas.Memory!;
    memory.properties.conversationId = { type: "string" };
    memory.required = memory.required.filter((name) => name !== "source");
    expect(() => buildModel(document as never)).toThrow(/Memory has no required key the other variants lack/);
  });

  it("takes a character file whole, and types the answers of its import and export", () => {
    const importing = op("importCharacter");
    expect(importing.body).toBeUndefined();
    expect(importing.bodyArgument?.name).toBe("character");
    expect(importing.bodyArgument?.description).toMatch(/elizaOS character file/);
    // The file's own schema is not turned into types.
    expect(model.types.some((t) => t.name === "CharacterFile")).toBe(false);
    expect(importing.queryParameters.map((p) => [p.name, p.type, p.default])).toEqual([
      ["dryRun", { kind: "boolean" }, false],
      ["useDefaultModel", { kind: "boolean" }, false],
    ]);
    expect(importing.response).toMatchObject({
      status: 201,
      data: { kind: "ref", name: "CharacterImport" },
      field: undefined,
      dataAs: "agent",
    });
    expect(typeNamed(model, "CharacterImport").fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ["agent", { kind: "ref", name: "Agent" }, true],
      ["warnings", { kind: "array", items: { kind: "ref", name: "FieldIssue" } }, true],
    ]);
    expect(importing.alternatives).toEqual([
      {
        status: 200,
        data: { kind: "ref", name: "CharacterImportPreview" },
        field: undefined,
        dataAs: "agent",
        description: expect.stringMatching(/nothing was stored/),
        whenQuery: { dryRun: true },
      },
    ]);
    expect(field("CharacterImportPreview", "agent").type).toEqual({ kind: "ref", name: "AgentDraft" });
    expect(typeNamed(model, "AgentDraft").fields.some((f) => f.name === "id")).toBe(false);

    const exporting = op("exportCharacter");
    expect(exporting.response).toMatchObject({
      data: { kind: "ref", name: "ExportedCharacterFile" },
      field: undefined,
      dataAs: undefined,
    });
    expect(field("ExportedCharacterFile", "settings").type).toEqual({
      kind: "ref",
      name: "CharacterSettings",
    });
    expect(field("ExportedCharacterFile", "knowledge").type).toEqual({
      kind: "array",
      items: {
        kind: "union",
        variants: [{ kind: "string" }, { kind: "ref", name: "CharacterKnowledgeSource" }],
      },
    });
  });

  it("types usage reports, and takes groupBy as a list", () => {
    for (const id of ["getUsage", "getAgentUsage"]) {
      const usage = op(id);
      expect(usage.response.data).toEqual({ kind: "ref", name: "UsageReport" });
      expect(usage.queryParameters.find((p) => p.name === "groupBy")?.type).toEqual({
        kind: "array",
        items: { kind: "enum", values: ["agentId", "userId", "model", "apiKeyId"] },
      });
      expect(usage.queryParameters.find((p) => p.name === "from")?.type).toEqual({
        kind: "string",
        format: "date-time",
      });
    }
    expect(field("UsageGroup", "latencyMs").type).toEqual({ kind: "ref", name: "Percentiles" });
    expect(field("UsageReport", "buckets").type).toEqual({
      kind: "array",
      items: { kind: "ref", name: "UsageBucket" },
    });
    expect(field("UsageReport", "totals").type).toEqual({ kind: "ref", name: "UsageTotals" });
  });

  it("refuses an array query parameter sent other than comma-separated, and an alternative nothing asks for", () => {
    const document = () =>
      JSON.parse(JSON.stringify(loadModelDocument())) as {
        paths: Record<
          string,
          Record<
            string,
            { parameters: Record<string, unknown>[]; responses: Record<string, Record<string, unknown>> }
          >
        >;
      };
    const exploded = document();
    const groupBy = exploded.paths["/v1/usage"]!.get!.parameters.find((p) => p.name === "groupBy")!;
    delete groupBy.explode;
    expect(() => buildModel(exploded as never)).toThrow(/comma-separated/);
    const unasked = document();
    delete unasked.paths["/v1/agents/import"]!.post!.responses["200"]!["x-when-query"];
    expect(() => buildModel(unasked as never)).toThrow(ModelError);
  });

  it("gives the background send a method of its own, and reads a message by id as either of its types", () => {
    const send = op("sendMessage");
    expect(send.bodyForms).toEqual([
      expect.objectContaining({
        name: "sendBackground",
        status: 202,
        data: { kind: "ref", name: "BackgroundMessageAccepted" },
        field: "data",
        whenBody: { background: true },
      }),
    ]);
    expect(hiddenBodyFields(send)).toEqual(["stream", "background"]);
    const get = op("getMessage");
    expect(get.response.data).toEqual({ kind: "ref", name: "HistoryMessage" });
    expect(get.variants).toEqual([
      {
        name: "getBackground",
        data: { kind: "ref", name: "BackgroundMessage" },
        marker: "status",
        wait: { name: "waitForBackground", pending: { status: "pending" } },
      },
    ]);
    expect(field("BackgroundMessage", "status")).toMatchObject({ required: true });
    expect(field("BackgroundMessage", "text")).toMatchObject({ required: false });
    expect(field("BackgroundMessage", "usage").type).toEqual({ kind: "ref", name: "Usage" });

    type Doc = {
      paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
    };
    const document = () => JSON.parse(JSON.stringify(loadModelDocument())) as Doc;
    const responses = (doc: Doc, path: string, method: string) => doc.paths[path]![method]!.responses;
    const unnamed = document();
    delete responses(unnamed, "/v1/agents/{agentId}/messages", "post")["202"]!["x-sdk-method"];
    expect(() => buildModel(unnamed as never)).toThrow(/x-sdk-method/);
    const notABodyField = document();
    responses(notABodyField, "/v1/agents/{agentId}/messages", "post")["202"]!["x-when-body"] = {
      later: true,
    };
    expect(() => buildModel(notABodyField as never)).toThrow(/x-when-body/);
    const bothNamed = document();
    const variants = responses(bothNamed, "/v1/agents/{agentId}/messages/{messageId}", "get")["200"]!;
    (variants["x-sdk-variants"] as Record<string, unknown>).HistoryMessage = { method: "getStored" };
    expect(() => buildModel(bothNamed as never)).toThrow(/exactly one variant/);
    const pendingUnknown = document();
    const spec = responses(pendingUnknown, "/v1/agents/{agentId}/messages/{messageId}", "get")["200"]!;
    (
      spec["x-sdk-variants"] as { BackgroundMessage: { wait: { pending: unknown } } }
    ).BackgroundMessage.wait.pending = { state: "pending" };
    expect(() => buildModel(pendingUnknown as never)).toThrow(/wait.pending/);
  });

  it("has parameters, bodies, scopes and errors", () => {
    const list = op("listAgents");
    expect(list.queryParameters.map((p) => [p.name, p.default])).toEqual([
      ["page", 1],
      ["limit", 20],
      ["status", undefined],
      ["sortBy", "createdAt"],
      ["order", "desc"],
    ]);
    expect(list.queryParameters[2]?.type).toEqual({
      kind: "enum",
      values: ["active", "inactive", "error"],
      enumName: "AgentStatus",
    });
    expect(op("sendMessage").pathParameters.map((p) => p.name)).toEqual(["agentId"]);
    expect(op("createAgent").body).toEqual({ type: "CreateAgentRequest", required: true });
    expect(op("createAgent").scopes).toEqual(["agents:write"]);
    expect(op("createAgent").errors.find((e) => e.status === 403)?.codes).toEqual([
      "FORBIDDEN",
      "INSUFFICIENT_QUOTA",
    ]);
    expect(model.errorCodes.find((c) => c.code === "AGENT_INACTIVE")?.status).toBe(409);
    const answered = new Set(model.operations.flatMap((o) => o.errors.flatMap((e) => e.codes)));
    expect(model.errorCodes.filter((c) => answered.has(c.code)).every((c) => c.status !== undefined)).toBe(
      true,
    );
    expect(model.errorCodes.find((c) => c.code === "RATE_LIMIT_EXCEEDED")?.description).toMatch(/limit/);
    expect(model.errorDetail).toEqual({ kind: "ref", name: "FieldIssue" });
  });

  it("describes the stream's events", () => {
    const streaming = op("sendMessage").streaming;
    expect(streaming?.parameter).toBe("stream");
    expect(streaming?.events.map((e) => [e.name, e.terminal, e.data])).toEqual([
      ["message.started", false, { kind: "ref", name: "MessageStarted" }],
      ["message.delta", false, { kind: "ref", name: "MessageDelta" }],
      ["tool.call", false, { kind: "ref", name: "ToolCallStarted" }],
      ["tool.result", false, { kind: "ref", name: "ToolCall" }],
      ["tool.approval_required", true, { kind: "ref", name: "ToolApprovalRequired" }],
      ["message.completed", true, { kind: "ref", name: "Reply" }],
      ["error", true, { kind: "ref", name: "StreamError" }],
    ]);
    expect(op("createAgent").streaming).toBeUndefined();
    expect(field("CreateAgentRequest", "personality").type).toEqual({
      kind: "map",
      values: { kind: "json" },
    });
  });

  it("refuses a stream whose events are not JSON data named by their event", () => {
    const broken = (
      change: (events: Record<string, { properties: Record<string, Record<string, unknown>> }>) => void,
    ) => {
      const document = JSON.parse(JSON.stringify(loadModelDocument())) as {
        components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
      };
      change(document.components.schemas);
      return () => buildModel(document as never);
    };
    expect(broken(() => {})).not.toThrow();
    expect(
      broken((schemas) => {
        delete schemas.MessageDeltaEvent!.properties.event!.const;
      }),
    ).toThrow(ModelError);
    expect(
      broken((schemas) => {
        schemas.MessageDeltaEvent!.properties.data!.contentMediaType = "text/plain";
      }),
    ).toThrow(ModelError);
    expect(
      broken((schemas) => {
        delete (schemas.MessageStreamEvent as { oneOf?: unknown }).oneOf;
      }),
    ).toThrow(ModelError);
  });

  it("resolves nullability, unions, maps and hoisted inline objects", () => {
    const nullableString: TypeRef = { kind: "nullable", inner: { kind: "string" } };
    expect(field("Reply", "userId")).toMatchObject({ required: true, type: nullableString });
    expect(field("Agent", "modelProvider").type).toEqual({
      kind: "nullable",
      inner: { kind: "enum", values: ["openai", "anthropic", "local"], enumName: "ModelProvider" },
    });
    expect(field("Agent", "statusReason").type).toEqual({
      kind: "nullable",
      inner: { kind: "ref", name: "StatusReason" },
    });
    expect(field("Agent", "personality").type).toEqual({ kind: "map", values: { kind: "json" } });
    expect(field("Agent", "plugins").type).toEqual({
      kind: "array",
      items: { kind: "union", variants: [{ kind: "string" }, { kind: "ref", name: "PluginConfig" }] },
    });
    expect(field("CreateAgentRequest", "settings").type).toEqual({ kind: "ref", name: "AgentSettings" });
    expect(typeNamed(model, "AgentSettings")).toMatchObject({
      additionalProperties: { kind: "json" },
      usage: { input: true, output: true },
    });
    expect(field("AgentSettings", "maxTokens")).toMatchObject({
      required: false,
      type: { kind: "nullable", inner: { kind: "integer" } },
    });
    expect(typeNamed(model, "ClientIntegration").additionalProperties).toEqual({ kind: "json" });
    expect(typeNamed(model, "PluginConfig").additionalProperties).toBeUndefined();
    expect(field("AgentDeleted", "deleted").type).toEqual({ kind: "literal", value: true });
    expect(field("ApiKey", "createdAt").type).toEqual({
      kind: "nullable",
      inner: { kind: "string", format: "date-time" },
    });
    expect(typeNamed(model, "Agent").usage).toEqual({ input: false, output: true });
    expect(typeNamed(model, "CreateAgentRequest").usage).toEqual({ input: true, output: false });
    expect(model.enums.map((e) => e.name)).toEqual([
      "AgentStatus",
      "BackgroundMessageStatus",
      "ErrorCode",
      "FinishReason",
      "ModelProvider",
      "Role",
      "Scope",
    ]);
  });

  it("refuses a write without an Idempotency-Key, and a read with one", () => {
    const document = () =>
      JSON.parse(JSON.stringify(loadModelDocument())) as {
        paths: Record<string, Record<string, { parameters?: unknown[] }>>;
      };
    const keyless = document();
    const create = keyless.paths["/v1/agents"]!.post!;
    create.parameters = (create.parameters ?? []).filter(
      (p) => !JSON.stringify(p).includes("Idempotency-Key"),
    );
    expect(() => buildModel(keyless as never)).toThrow(/createAgent: a POST must take the Idempotency-Key/);
    const keyed = document();
    const get = keyed.paths["/v1/agents/{agentId}"]!.get!;
    get.parameters = [...(get.parameters ?? []), { $ref: "#/components/parameters/Idempotency-Key" }];
    expect(() => buildModel(keyed as never)).toThrow(/getAgent: a GET takes no Idempotency-Key/);
  });
});

describe("text", () => {
  it("cases identifiers", () => {
    expect(words("X-RateLimit-Limit")).toEqual(["x", "rate", "limit", "limit"]);
    expect(snakeCase("apiKeys")).toBe("api_keys");
    expect(snakeCase("statusReason")).toBe("status_reason");
    expect(camelCase("api-keys")).toBe("apiKeys");
    expect(pascalCase("message.delta")).toBe("MessageDelta");
    expect(constantCase("AGENT_NOT_FOUND")).toBe("AGENT_NOT_FOUND");
    expect(constantCase("modelProvider")).toBe("MODEL_PROVIDER");
  });

  it("wraps paragraphs and keeps lists", () => {
    expect(wrap("one two three four\n\n- a\n- b", 9)).toEqual(["one two", "three", "four", "", "- a", "- b"]);
  });
});

function loadModelDocument(): unknown {
  return JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as unknown;
}
