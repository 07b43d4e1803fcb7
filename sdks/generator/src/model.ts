/**
 * The language-neutral model of the REST API that every SDK emitter writes from. `buildModel` reads the OpenAPI
 * document once and resolves everything an emitter would otherwise have to work out again per language: `$ref`s,
 * nullability, unions, inline objects (hoisted into named types), the `{success, data}` envelopes (unwrapped), the
 * `x-` extensions, and which operations take an `Idempotency-Key`. Names stay as the document spells them (camelCase JSON
 * names, PascalCase type names); emitters case them with `text.ts`.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The SDK tree's root (`sdks/`), where `openapi.json` and each language's SDK live. */
export const SDKS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The OpenAPI document the SDKs are generated from. */
export const OPENAPI_PATH = join(SDKS_DIR, "openapi.json");

/** A type as a field, parameter, list item or event data uses it. */
export type TypeRef =
  | { kind: "string"; format?: string | undefined; enum?: undefined }
  /** A string from a fixed set; `enumName` when the set is one of the model's named enums. */
  | { kind: "enum"; values: string[]; enumName?: string | undefined }
  | { kind: "integer" }
  | { kind: "number" }
  | { kind: "boolean" }
  /** A constant (`const`): `deleted: true`, an event's name. */
  | { kind: "literal"; value: string | number | boolean }
  | { kind: "array"; items: TypeRef }
  /** A JSON object with arbitrary keys, each value of type `values` (`json` for any JSON). */
  | { kind: "map"; values: TypeRef }
  /** Any JSON value. */
  | { kind: "json" }
  /** A named object type of `ApiModel.types`. */
  | { kind: "ref"; name: string }
  /** `inner` or JSON `null`. Never nests: `nullable(nullable(x))` is `nullable(x)`. */
  | { kind: "nullable"; inner: TypeRef }
  /**
   * One of several shapes, e.g. a plugin given as a name or as an object; never contains `nullable`. `name`: the
   * component it is, when it is one (`UserExportLine`). `keys`: for a union of several object types, which JSON
   * tells apart by no kind of value, the key that only each variant's objects have (one per variant, in order).
   */
  | { kind: "union"; variants: TypeRef[]; name?: string; keys?: string[] };

/** One property of an object type. */
export interface Field {
  /** The JSON name, as sent on the wire (camelCase). */
  name: string;
  description: string | undefined;
  type: TypeRef;
  /** The key is always present in a response / must be sent in a request. Independent of nullability. */
  required: boolean;
}

/** A named JSON object type. */
export interface ObjectType {
  name: string;
  description: string | undefined;
  fields: Field[];
  /**
   * Keys besides `fields`: `undefined` when the schema forbids or does not mention them, else their value type
   * (`json` for anything). Settings keep keys they do not know, for instance.
   */
  additionalProperties: TypeRef | undefined;
  /** Where the type comes from: `components/schemas/<name>`, or the path of the inline schema it was hoisted from. */
  source: string;
  /** How the SDK uses it: sent in a request body, received, or both (a type reachable from both). */
  usage: { input: boolean; output: boolean };
}

/** A named set of strings (`status`, `modelProvider`, scopes, error codes). */
export interface EnumType {
  name: string;
  description: string | undefined;
  values: string[];
}

/** A path or query parameter. */
export interface Parameter {
  /** The name on the wire (camelCase). */
  name: string;
  in: "path" | "query" | "header";
  description: string | undefined;
  /**
   * A query parameter of kind `array` is sent as one comma-separated value (`style: form`, `explode: false`), the
   * only form of array the model accepts.
   */
  type: TypeRef;
  required: boolean;
  /** The server's default when the parameter is left out, for documentation. */
  default: string | number | boolean | undefined;
}

/** The request header that makes a write safe to retry (docs/api/messages-and-streams.md, "Idempotency"). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** Request headers the runtimes send on their own, which no operation takes as an argument. */
const RUNTIME_HEADERS = new Set(["idempotency-key", "x-request-id"]);

/**
 * Headers that carry an entity tag (`If-Match`, `If-None-Match`): the SDKs take an ETag as it was answered, or an
 * agent's `updatedAt`, which they send as its ETag (`W/"<updatedAt>"`).
 */
export const ENTITY_TAG_HEADERS = new Set(["if-match", "if-none-match"]);

/** An error response an operation documents. */
export interface ErrorResponse {
  status: number;
  /** The error codes this status carries here (`x-error-codes`). */
  codes: string[];
  description: string | undefined;
}

/** One event of a server-sent-event response (a branch of its per-event schema). */
export interface SseEvent {
  /** The `event:` field, e.g. `message.delta`. */
  name: string;
  description: string | undefined;
  /** The stream ends after this event. */
  terminal: boolean;
  /** The type of the JSON in `data:`. */
  data: TypeRef;
}

/** How a list operation pages (`x-pagination`). */
export interface Pagination {
  /** Query parameter holding the page number. */
  pageParameter: string;
  /** Query parameter holding the page size. */
  limitParameter: string;
  /** Envelope field with the page's items. */
  itemsField: string;
  /** Envelope field with the page information. */
  pageInfoField: string;
  /** Field of the page information saying whether another page follows. */
  hasMoreField: string;
  /** The type of one item. */
  item: TypeRef;
  /** The type of the page information. */
  pageInfo: TypeRef;
}

/**
 * How a list operation pages by cursor (`x-cursor-pagination`): the next page is `before` the last item's cursor
 * when the list runs newest first (the default), `after` it when oldest first.
 */
export interface CursorPagination {
  /** Query parameter holding the page size. */
  limitParameter: string;
  /** Query parameters holding the cursors. */
  beforeParameter: string;
  afterParameter: string;
  /** Query parameter holding the order (`asc` or `desc`, default `desc`), when the list takes one. */
  orderParameter: string | undefined;
  /** Envelope field with the page's items. */
  itemsField: string;
  /** Envelope field with the page information. */
  pageInfoField: string;
  /** Field of the page information saying whether another page follows. */
  hasMoreField: string;
  /** Field of an item that is its cursor. */
  cursorField: string;
  /** The type of one item. */
  item: TypeRef;
  /** The type of the page information. */
  pageInfo: TypeRef;
}

/**
 * A success answer an operation gives instead of its main one when the query says so (`x-when-query`), e.g. a
 * dry run's preview.
 */
export interface AlternativeResponse {
  status: number;
  data: TypeRef;
  /** As `Operation.response.field` and `dataAs`. */
  field: "data" | undefined;
  dataAs: string | undefined;
  description: string | undefined;
  /** The query values that ask for it: `{dryRun: true}`. */
  whenQuery: Record<string, string | boolean>;
}

/**
 * An answer a body value asks for (`x-when-body`), which SDKs offer as a method of its own (the response's
 * `x-sdk-method`) that sends that value itself: `sendBackground` sends `background: true` and returns the 202
 * answer. The value is then no argument of the operation's other methods (see `hiddenBodyFields`).
 */
export interface BodyForm {
  /** The method's name on the resource: `sendBackground`. */
  name: string;
  status: number;
  data: TypeRef;
  /** As `Operation.response.field` and `dataAs`. */
  field: "data" | undefined;
  dataAs: string | undefined;
  description: string | undefined;
  /** The body values the method sends: `{background: true}`. */
  whenBody: Record<string, string | boolean>;
}

/**
 * Another object type the main answer may have, told apart by the answer itself rather than by the request
 * (`x-sdk-variants`): a message read by id is a stored message, or a background message while its state is kept.
 * SDKs keep the main method's type and add a method (`getBackground`) that returns this type, and fails when the
 * answer is not of it.
 */
export interface AnswerVariant {
  /** The method's name on the resource: `getBackground`. */
  name: string;
  /** A named object type. */
  data: TypeRef & { kind: "ref" };
  /** A required field of this type that the main answer's type lacks: an answer with it is of this type. */
  marker: string;
  /**
   * A method that reads the answer again, with growing pauses, while it has the `pending` values, and returns the
   * first that has not (`waitForBackground`, until `status` is no longer `pending`).
   */
  wait: { name: string; pending: Record<string, string> } | undefined;
}

/** One REST operation. */
export interface Operation {
  /** As in the document: `createAgent`. */
  operationId: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Relative to the SDK's base URL, which already ends in `/v1`: `/agents/{agentId}/messages`. */
  path: string;
  /**
   * The resource the operation belongs to, from the static segments of its path in camelCase: `["agents"]`,
   * `["agents", "messages"]`, `["apiKeys"]`. SDKs nest resources this way (`client.agents.messages`). An
   * operation's `x-sdk-resource` names it instead, where the path would not (an action such as
   * `/webhooks/{id}/rotate-secret`) or would take a name the SDKs use otherwise (`webhooks`, their verification).
   */
  resource: string[];
  /**
   * The method's name on its resource, the leading verb of the operationId: `create`, `list`, `send`, `revoke`;
   * or the operation's `x-sdk-method` (`rotateSecret`).
   */
  name: string;
  /** The operation's first tag (`Agents`, `Messages`, `API keys`). */
  tag: string | undefined;
  summary: string | undefined;
  /** The operation's description (Markdown). */
  description: string | undefined;
  /** Scopes the API key needs (`x-scopes`). */
  scopes: string[];
  /** Limits the call counts against (`x-rate-limits`). */
  rateLimits: string[];
  /** In path order. */
  pathParameters: Parameter[];
  queryParameters: Parameter[];
  /** Request headers of the operation's own (`If-Match`), each an optional argument of its methods. */
  headerParameters: Parameter[];
  /**
   * The JSON request body, always a named object type whose fields SDKs take one by one, or undefined when the
   * operation has none or takes it whole (`bodyArgument`).
   */
  body: { type: string; required: boolean } | undefined;
  /**
   * A body that SDKs take whole, as one JSON object argument of this name (`x-sdk-body-argument`): an elizaOS
   * character file, whose versions and shapes are many. Never together with `body`.
   */
  bodyArgument: { name: string; description: string | undefined } | undefined;
  /**
   * The success response: its status and its type: the envelope's `data`; the envelope itself without `success`
   * when it has fields beside `data` (a named type); the body itself for an operation without envelope
   * (`x-envelope: false`); one line of an NDJSON response (`ndjson`).
   */
  response: {
    status: number;
    data: TypeRef;
    /** Where the result is in the body: in the envelope's `data`, or the whole body (`undefined`). */
    field: "data" | undefined;
    /**
     * For a result made of the envelope (`field` undefined, not a bare body): the name its `data` has in the
     * result type (`agent`: `{agent, warnings}`), which SDKs fill from the envelope's `data`.
     */
    dataAs: string | undefined;
    description: string | undefined;
  };
  /** Other success answers, each asked for by query values. */
  alternatives: AlternativeResponse[];
  /** Other success answers, each asked for by body values, and each a method of its own. */
  bodyForms: BodyForm[];
  /** Other types of the main answer, each read by a method of its own. */
  variants: AnswerVariant[];
  /**
   * The success response is `application/x-ndjson`, one `response.data` per line, streamed: SDKs return a stream
   * of items read as they arrive.
   */
  ndjson: boolean;
  /** Present on list operations that page by number. */
  pagination: Pagination | undefined;
  /** Present on list operations that page by cursor. */
  cursorPagination: CursorPagination | undefined;
  /**
   * Present when the operation can answer with server-sent events: `parameter` is the body field that asks for
   * them (`stream`), so SDKs offer a separate streaming method that sets it rather than exposing the field.
   */
  streaming: { parameter: string; events: SseEvent[] } | undefined;
  /** Error responses in status order. */
  errors: ErrorResponse[];
  /**
   * The operation takes an `Idempotency-Key` header: every write (POST, PUT, PATCH, DELETE) does, and no read.
   * The SDKs' runtimes send one with each write, the same on each retry, and so retry every call alike (the
   * reference policy is `sdks/typescript/src/retry.ts`); SDKs let the caller choose the key per call.
   */
  idempotencyKey: boolean;
}

/** A group of operations sharing `Operation.resource`, e.g. `["agents", "messages"]`. */
export interface Resource {
  path: string[];
  /** The description of its operations' tag. */
  description: string | undefined;
  /** Resources nested directly under it (`agents` → `["agents", "messages"]`). */
  children: string[][];
}

/** The whole API as the SDKs see it. */
export interface ApiModel {
  title: string;
  /** The document's `info.version`. */
  version: string;
  description: string | undefined;
  /** The default base URL, ending in `/v1`. */
  defaultBaseUrl: string;
  /** Operations in document order, without `x-sdk-exclude`d ones. */
  operations: Operation[];
  /**
   * Every resource, parents before children, in order of first appearance; a parent with no operation of its
   * own is listed too.
   */
  resources: Resource[];
  /** Named object types reachable from the operations, sorted by name. */
  types: ObjectType[];
  /** Named enums, sorted by name. */
  enums: EnumType[];
  /** Every error code of the error envelope, with its one HTTP status. */
  errorCodes: { code: string; status: number | undefined; description: string | undefined }[];
  /** The type of each entry of an error's `details`. */
  errorDetail: TypeRef;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Why the document cannot be turned into a model; names where. */
export class ModelError extends Error {}

/**
 * Body fields that are no argument of an operation's methods because a method sets them itself: the streaming
 * parameter (`stream`, set by the stream method) and the values of its body forms (`background`).
 */
export function hiddenBodyFields(op: Operation): string[] {
  return [
    ...(op.streaming !== undefined ? [op.streaming.parameter] : []),
    ...op.bodyForms.flatMap((form) => Object.keys(form.whenBody)),
  ];
}

/**
 * Names of inline object schemas, hoisted into named types: `<Schema>.<field>` (`[]` for an array's items, `|<n>`
 * for the n-th variant of a union). Several places may map to one name when their schemas are the same; a name
 * given to two different schemas is an error. Unlisted inline objects are named `<Schema><Field>`.
 */
const INLINE_TYPE_NAMES: Record<string, string> = {
  "Agent.settings": "AgentSettings",
  "CreateAgentRequest.settings": "AgentSettings",
  "UpdateAgentRequest.settings": "AgentSettings",
  "Agent.clients[]|1": "ClientIntegration",
  "CreateAgentRequest.clients[]|1": "ClientIntegration",
  "UpdateAgentRequest.clients[]|1": "ClientIntegration",
  "Agent.plugins[]|1": "PluginConfig",
  "CreateAgentRequest.plugins[]|1": "PluginConfig",
  "UpdateAgentRequest.plugins[]|1": "PluginConfig",
  "Agent.statusReason": "StatusReason",
  "Reply.usage": "Usage",
  "BackgroundMessage.usage": "Usage",
  "ApiKeyResponse.data": "ApiKeyCreated",
  "ApiKeyRevokedResponse.data": "ApiKeyRevoked",
  "WebhookCreatedResponse.data": "WebhookCreated",
  "WebhookDeletedResponse.data": "WebhookDeleted",
  "AgentDraft.settings": "AgentSettings",
  "AgentDraft.clients[]|1": "ClientIntegration",
  "AgentDraft.plugins[]|1": "PluginConfig",
  "UsageReport.buckets[]": "UsageBucket",
  "UsageReport.totals": "UsageTotals",
  "UsageTotals.latencyMs": "Percentiles",
  "UsageTotals.timeToFirstTokenMs": "Percentiles",
  "UsageGroup.latencyMs": "Percentiles",
  "UsageGroup.timeToFirstTokenMs": "Percentiles",
  "ExportedCharacterFile.style": "CharacterStyle",
  "ExportedCharacterFile.messageExamples[][]": "CharacterMessageExample",
  "CharacterMessageExample.content": "CharacterMessageContent",
  "ExportedCharacterFile.knowledge[]|1": "CharacterKnowledgeSource",
  "ExportedCharacterFile.settings": "CharacterSettings",
  "CharacterSettings.agentry": "CharacterAgentrySettings",
  "CharacterAgentrySettings.clients[]|1": "ClientIntegration",
  "CharacterAgentrySettings.plugins[]|1": "PluginConfig",
  "CharacterAgentrySettings.settings": "CharacterAgentSettings",
  "HistoryMessageListResponse.pagination": "CursorPagination",
  "ConversationListResponse.pagination": "CursorPagination",
  "DeliveryListResponse.pagination": "CursorPagination",
};

/**
 * Names of the results of operations whose envelope holds more than `data` (and is not a page): the envelope
 * without `success`, by the envelope's schema name, and the name `data` takes in it (what it holds). Unlisted ones
 * are named `<Envelope>Result` and keep `data`.
 */
const RESULT_TYPE_NAMES: Record<string, { name: string; data: string }> = {
  ImportCharacterResponse: { name: "CharacterImport", data: "agent" },
  ImportCharacterPreviewResponse: { name: "CharacterImportPreview", data: "agent" },
};

/**
 * Envelopes whose members beside `data` are advice (`warnings` of an agent write naming a provider not configured
 * on the server): the SDKs return the `data` alone, so that creating and updating an agent answer the agent.
 */
const ADVISORY_ENVELOPES = new Set(["AgentWriteResponse"]);

/**
 * Names of string enums, by the field that holds them. Enums are matched by their values, so every field with the
 * values of `status` on Agent gets the same named enum; sets not listed stay inline.
 */
const ENUM_NAMES: Record<string, string> = {
  "Agent.status": "AgentStatus",
  "Agent.modelProvider": "ModelProvider",
  "ApiKey.scopes[]": "Scope",
  "BackgroundMessage.status": "BackgroundMessageStatus",
  "Member.role": "Role",
  "Reply.finishReason": "FinishReason",
  "StreamError.code": "ErrorCode",
};

const HTTP_METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Reads `sdks/openapi.json` (or `path`) and builds the model. */
export function loadModel(path: string = OPENAPI_PATH): ApiModel {
  return buildModel(JSON.parse(readFileSync(path, "utf8")) as JsonObject);
}

/** Builds the model from a parsed OpenAPI 3.1 document. Throws `ModelError` on anything it cannot represent. */
export function buildModel(document: JsonObject): ApiModel {
  return new ModelBuilder(document).build();
}

class ModelBuilder {
  readonly #doc: JsonObject;
  readonly #types = new Map<string, ObjectType>();
  /** Canonical JSON of each named type's schema, to tell a shared inline schema from a name clash. */
  readonly #typeShapes = new Map<string, string>();
  readonly #enums = new Map<string, EnumType>();
  /** Enum names by their values joined, so the same set anywhere gets the same name. */
  readonly #enumByValues = new Map<string, string>();
  /** Types being converted, against cycles. */
  readonly #inProgress = new Set<string>();
  #usage: "input" | "output" = "output";

  constructor(document: JsonObject) {
    this.#doc = document;
  }

  build(): ApiModel {
    const info = asObject(this.#doc.info, "info");
    this.#registerEnums();
    const operations: Operation[] = [];
    const paths = asObject(this.#doc.paths, "paths");
    for (const [rawPath, pathItem] of Object.entries(paths)) {
      const item = asObject(pathItem, `paths.${rawPath}`);
      for (const [method, op] of Object.entries(item)) {
        if (!isHttpMethod(method)) continue;
        const operation = asObject(op, `${method} ${rawPath}`);
        if (operation["x-sdk-exclude"] === true) continue;
        operations.push(this.#operation(method, rawPath, operation));
      }
    }
    const errorResponse = this.#schema("ErrorResponse");
    const errorObject = asObject(
      asObject(errorResponse.properties, "ErrorResponse.properties").error,
      "error",
    );
    const errorProps = asObject(errorObject.properties, "ErrorResponse.error.properties");
    this.#usage = "output";
    const detailItems = asObject(asObject(errorProps.details, "details").items, "details.items");
    const errorDetail = this.#type(detailItems, "ErrorResponse.details[]");
    const codeSchema = asObject(errorProps.code, "ErrorResponse.error.code");
    const statuses = this.#codeStatuses();
    const errorCodes = asStrings(codeSchema.enum, "ErrorResponse.error.code.enum").map((code) => ({
      code,
      status: statuses.get(code)?.status,
      description: statuses.get(code)?.description,
    }));
    return {
      title: asString(info.title, "info.title"),
      version: asString(info.version, "info.version"),
      description: optionalString(info.description),
      defaultBaseUrl: `${this.#serverUrl()}/v1`,
      operations,
      resources: this.#resources(operations),
      types: [...this.#types.values()].sort((a, b) => compare(a.name, b.name)),
      enums: [...this.#enums.values()].sort((a, b) => compare(a.name, b.name)),
      errorCodes,
      errorDetail,
    };
  }

  #resources(operations: Operation[]): Resource[] {
    const tags = new Map<string, string | undefined>();
    for (const raw of Array.isArray(this.#doc.tags) ? this.#doc.tags : []) {
      const tag = asObject(raw, "tag");
      tags.set(asString(tag.name, "tag name"), optionalString(tag.description));
    }
    const resources: Resource[] = [];
    const find = (path: string[]) => resources.find((r) => r.path.join(".") === path.join("."));
    for (const op of operations) {
      for (let depth = 1; depth <= op.resource.length; depth++) {
        const path = op.resource.slice(0, depth);
        let resource = find(path);
        if (resource === undefined) {
          resource = { path, description: undefined, children: [] };
          resources.push(resource);
          if (depth > 1) find(path.slice(0, -1))?.children.push(path);
        }
        if (depth === op.resource.length && resource.description === undefined && op.tag !== undefined) {
          resource.description = tags.get(op.tag);
        }
      }
    }
    return resources;
  }

  #serverUrl(): string {
    const servers = this.#doc.servers;
    const first = Array.isArray(servers) ? servers[0] : undefined;
    const url = first && isObject(first) ? optionalString(first.url) : undefined;
    return (url ?? "http://localhost:8080").replace(/\/+$/, "");
  }

  /** Enums are named up front from `ENUM_NAMES` so that the first field to use a set does not decide its name. */
  #registerEnums(): void {
    for (const [where, name] of Object.entries(ENUM_NAMES)) {
      const schema = this.#lookup(where);
      const values = asStrings(schema.enum, `${where}.enum`);
      const key = values.join("\u0000");
      const existing = this.#enumByValues.get(key);
      if (existing !== undefined && existing !== name) {
        throw new ModelError(`${where}: enum values already named ${existing}, not ${name}`);
      }
      this.#enumByValues.set(key, name);
      this.#enums.set(name, { name, description: optionalString(schema.description), values });
    }
  }

  /** The schema at `<Schema>.<field>[]|<n>` (the notation of the name tables), with `$ref`s and nullables followed. */
  #lookup(where: string): JsonObject {
    const [schemaName, ...rest] = where.split(".");
    let schema = this.#schema(schemaName ?? "");
    for (const step of rest.join(".").match(/[^.[\]|]+|\[\]|\|\d+/g) ?? []) {
      schema = this.#deref(nonNull(schema));
      if (step === "[]") schema = asObject(schema.items, `${where}: items`);
      else if (step.startsWith("|")) schema = asObject(unionOf(schema)?.[Number(step.slice(1))], where);
      else schema = asObject(asObject(schema.properties, `${where}: properties`)[step], where);
    }
    return this.#deref(nonNull(schema));
  }

  #schema(name: string): JsonObject {
    const schemas = asObject(asObject(this.#doc.components, "components").schemas, "components.schemas");
    return asObject(schemas[name], `components.schemas.${name}`);
  }

  #deref(schema: JsonObject): JsonObject {
    let current = schema;
    for (let depth = 0; typeof current.$ref === "string"; depth++) {
      if (depth > 20) throw new ModelError(`$ref cycle at ${schema.$ref}`);
      current = this.#pointer(current.$ref);
    }
    return current;
  }

  #pointer(ref: string): JsonObject {
    if (!ref.startsWith("#/")) throw new ModelError(`only local $refs are supported: ${ref}`);
    let node: Json = this.#doc;
    for (const raw of ref.slice(2).split("/")) {
      const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      node = isObject(node) ? (node[key] ?? null) : null;
    }
    return asObject(node, ref);
  }

  #operation(method: (typeof HTTP_METHODS)[number], rawPath: string, op: JsonObject): Operation {
    const operationId = asString(op.operationId, `${method} ${rawPath}: operationId`);
    const path = rawPath.replace(/^\/v1(?=\/)/, "");
    const upper = method.toUpperCase() as Operation["method"];
    const sdkMethod = op["x-sdk-method"];
    const name = typeof sdkMethod === "string" ? sdkMethod : operationId.match(/^[a-z]+/)?.[0];
    if (name === undefined) throw new ModelError(`${operationId}: expected a leading lowercase verb`);

    const parameters = (Array.isArray(op.parameters) ? op.parameters : []).map((p) =>
      this.#deref(asObject(p, `${operationId}: parameter`)),
    );
    this.#usage = "input";
    const toParameter = (p: JsonObject): Parameter => {
      const schema = asObject(p.schema, `${operationId}: parameter schema`);
      const fallback = schema.default;
      const type = this.#type(schema, `${operationId}.${String(p.name)}`);
      if (
        type.kind === "array" &&
        (p.in !== "query" || p.explode !== false || (p.style ?? "form") !== "form")
      ) {
        throw new ModelError(
          `${operationId}.${String(p.name)}: an array parameter must be a comma-separated query value (style: form, explode: false)`,
        );
      }
      return {
        name: asString(p.name, `${operationId}: parameter name`),
        in: p.in === "path" || p.in === "header" ? p.in : "query",
        description: optionalString(p.description),
        type,
        required: p.required === true,
        default:
          typeof fallback === "string" || typeof fallback === "number" || typeof fallback === "boolean"
            ? fallback
            : undefined,
      };
    };
    const pathParameters = parameters.filter((p) => p.in === "path").map(toParameter);
    const queryParameters = parameters.filter((p) => p.in === "query").map(toParameter);
    // The runtimes send X-Request-Id and Idempotency-Key themselves; any other header is the operation's own.
    const headerParameters = parameters
      .filter(
        (p) =>
          p.in === "header" &&
          !RUNTIME_HEADERS.has(String(p.name).toLowerCase()) &&
          p["x-sdk-exclude"] !== true,
      )
      .map(toParameter);
    const placeholders = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    if (placeholders.join() !== pathParameters.map((p) => p.name).join()) {
      throw new ModelError(`${operationId}: path parameters do not match the path's placeholders`);
    }

    let body: Operation["body"];
    let bodyArgument: Operation["bodyArgument"];
    let streamParameter: string | undefined;
    if (op.requestBody !== undefined && op["x-sdk-body-argument"] !== undefined) {
      const requestBody = this.#deref(asObject(op.requestBody, `${operationId}: requestBody`));
      const content = asObject(requestBody.content, `${operationId}: requestBody.content`);
      const schema = this.#deref(
        asObject(
          asObject(content["application/json"], `${operationId}: application/json body`).schema,
          `${operationId}: body schema`,
        ),
      );
      if (schema.type !== "object") throw new ModelError(`${operationId}: a body argument must be an object`);
      bodyArgument = {
        name: asString(op["x-sdk-body-argument"], `${operationId}: x-sdk-body-argument`),
        description: optionalString(schema.description) ?? optionalString(requestBody.description),
      };
    } else if (op.requestBody !== undefined) {
      const requestBody = this.#deref(asObject(op.requestBody, `${operationId}: requestBody`));
      const content = asObject(requestBody.content, `${operationId}: requestBody.content`);
      const schema = asObject(
        asObject(content["application/json"], `${operationId}: application/json body`).schema,
        `${operationId}: body schema`,
      );
      if (typeof schema.$ref !== "string") throw new ModelError(`${operationId}: the body must be a $ref`);
      const type = this.#type(schema, operationId);
      if (type.kind !== "ref") throw new ModelError(`${operationId}: the body must be an object type`);
      body = { type: type.name, required: requestBody.required === true };
      if ("stream" in asObject(this.#deref(schema).properties ?? {}, "properties"))
        streamParameter = "stream";
    }

    this.#usage = "output";
    const responses = asObject(op.responses, `${operationId}: responses`);
    // The main answer is the one no query value asks for; the others are its alternatives.
    const successStatus = Object.entries(responses)
      .filter(([, raw]) => {
        const response = this.#deref(asObject(raw, `${operationId}: response`));
        return response["x-when-query"] === undefined && response["x-when-body"] === undefined;
      })
      .map(([status]) => Number(status))
      .find((status) => status >= 200 && status < 300);
    if (successStatus === undefined) throw new ModelError(`${operationId}: no success response`);
    const success = this.#deref(asObject(responses[String(successStatus)], `${operationId}: success`));
    const content = asObject(success.content, `${operationId}: success content`);
    const ndjson = content["application/x-ndjson"] !== undefined;
    const paged = op["x-pagination"] !== undefined || op["x-cursor-pagination"] !== undefined;
    const bare = op["x-envelope"] === false || ndjson;
    const mediaType = ndjson ? "application/x-ndjson" : "application/json";
    const bodySchema = asObject(
      asObject(content[mediaType], `${operationId}: ${mediaType}`).schema,
      `${operationId}: schema`,
    );
    const envelope = this.#deref(bodySchema);
    const envelopeName = refName(bodySchema.$ref ?? null);
    // A bare answer may be a union (an export's lines), which has no properties.
    const envelopeProps = asObject(
      envelope.properties ?? (bare ? {} : undefined),
      `${operationId}: envelope properties`,
    );
    const variantNames = success["x-sdk-variants"];
    const { data, field, dataAs } = bare
      ? { data: this.#type(bodySchema, envelopeName), field: undefined, dataAs: undefined }
      : variantNames !== undefined
        ? this.#mainOfVariants(
            envelope,
            asObject(variantNames, `${operationId}: x-sdk-variants`),
            operationId,
          )
        : this.#resultOf(envelopeName, envelope, paged, operationId);
    const variants =
      variantNames === undefined ? [] : this.#variants(variantNames, envelope, data, operationId);
    // An answer a body value asks for (`x-when-body`, a background send) is a method of its own.
    const bodyForms: BodyForm[] = Object.entries(responses)
      .filter(([status]) => Number(status) >= 200 && Number(status) < 300 && Number(status) !== successStatus)
      .flatMap(([status, raw]) => {
        const response = this.#deref(asObject(raw, `${operationId}: ${status}`));
        const when = response["x-when-body"];
        if (when === undefined) return [];
        if (!isObject(when) || body === undefined) {
          throw new ModelError(`${operationId}: x-when-body must name fields of the request body`);
        }
        const fields = names(this.#schema(body.type).properties);
        const whenBody: Record<string, string | boolean> = {};
        for (const [key, value] of Object.entries(when)) {
          if ((typeof value !== "string" && typeof value !== "boolean") || !fields.includes(key)) {
            throw new ModelError(
              `${operationId}: x-when-body: ${key} must be a body field set to a string or boolean`,
            );
          }
          whenBody[key] = value;
        }
        const json = asObject(
          asObject(
            asObject(response.content, `${operationId}: ${status} content`)["application/json"],
            "JSON",
          ).schema,
          `${operationId}: ${status} schema`,
        );
        return [
          {
            name: asString(response["x-sdk-method"], `${operationId}: the ${status} answer's x-sdk-method`),
            status: Number(status),
            ...this.#resultOf(refName(json.$ref ?? null), this.#deref(json), false, operationId),
            description: optionalString(response.description),
            whenBody,
          },
        ];
      });
    const alternatives: AlternativeResponse[] = Object.entries(responses)
      .filter(([status]) => Number(status) >= 200 && Number(status) < 300 && Number(status) !== successStatus)
      .filter(
        ([, raw]) => this.#deref(asObject(raw, `${operationId}: response`))["x-when-body"] === undefined,
      )
      .map(([status, raw]) => {
        const response = this.#deref(asObject(raw, `${operationId}: ${status}`));
        const when = response["x-when-query"];
        if (!isObject(when)) {
          throw new ModelError(
            `${operationId}: the ${status} answer must say which query asks for it (x-when-query)`,
          );
        }
        const json = asObject(
          asObject(
            asObject(response.content, `${operationId}: ${status} content`)["application/json"],
            "JSON",
          ).schema,
          `${operationId}: ${status} schema`,
        );
        const name = refName(json.$ref ?? null);
        const whenQuery: Record<string, string | boolean> = {};
        for (const [key, value] of Object.entries(when)) {
          if (typeof value !== "string" && typeof value !== "boolean") {
            throw new ModelError(`${operationId}: x-when-query values must be strings or booleans`);
          }
          whenQuery[key] = value;
        }
        return {
          status: Number(status),
          ...this.#resultOf(name, this.#deref(json), false, operationId),
          description: optionalString(response.description),
          whenQuery,
        };
      });

    let cursorPagination: CursorPagination | undefined;
    if (op["x-cursor-pagination"] !== undefined) {
      const x = asObject(op["x-cursor-pagination"], `${operationId}: x-cursor-pagination`);
      const itemsField = asString(x.itemsField, "itemsField");
      const pageInfoField = asString(x.pageInfoField, "pageInfoField");
      const items = this.#type(
        asObject(envelopeProps[itemsField], itemsField),
        `${envelopeName}.${itemsField}`,
      );
      if (items.kind !== "array") throw new ModelError(`${operationId}: ${itemsField} is not an array`);
      cursorPagination = {
        limitParameter: asString(x.limitParameter, "limitParameter"),
        beforeParameter: asString(x.beforeParameter, "beforeParameter"),
        afterParameter: asString(x.afterParameter, "afterParameter"),
        orderParameter: optionalString(x.orderParameter),
        itemsField,
        pageInfoField,
        hasMoreField: asString(x.hasMoreField, "hasMoreField"),
        cursorField: asString(x.cursorField, "cursorField"),
        item: items.items,
        pageInfo: this.#type(
          asObject(envelopeProps[pageInfoField], pageInfoField),
          `${envelopeName}.${pageInfoField}`,
        ),
      };
    }

    let pagination: Pagination | undefined;
    if (op["x-pagination"] !== undefined) {
      const x = asObject(op["x-pagination"], `${operationId}: x-pagination`);
      const itemsField = asString(x.itemsField, "itemsField");
      const pageInfoField = asString(x.pageInfoField, "pageInfoField");
      const items = this.#type(
        asObject(envelopeProps[itemsField], itemsField),
        `${envelopeName}.${itemsField}`,
      );
      if (items.kind !== "array") throw new ModelError(`${operationId}: ${itemsField} is not an array`);
      pagination = {
        pageParameter: asString(x.pageParameter, "pageParameter"),
        limitParameter: asString(x.limitParameter, "limitParameter"),
        itemsField,
        pageInfoField,
        hasMoreField: asString(x.hasMoreField, "hasMoreField"),
        item: items.items,
        pageInfo: this.#type(
          asObject(envelopeProps[pageInfoField], pageInfoField),
          `${envelopeName}.pageInfo`,
        ),
      };
    }

    let streaming: Operation["streaming"];
    const sse = content["text/event-stream"];
    if (sse !== undefined) {
      if (streamParameter === undefined) throw new ModelError(`${operationId}: SSE without a stream field`);
      const eventSchema = asObject(asObject(sse, "text/event-stream").schema, `${operationId}: SSE schema`);
      streaming = { parameter: streamParameter, events: this.#sseEvents(eventSchema, operationId) };
    }

    const errors: ErrorResponse[] = Object.entries(responses)
      .filter(([status]) => Number(status) >= 400)
      .map(([status, raw]) => {
        const response = this.#deref(asObject(raw, `${operationId}: ${status}`));
        return {
          status: Number(status),
          codes: Array.isArray(response["x-error-codes"])
            ? asStrings(response["x-error-codes"], "x-error-codes")
            : [],
          description: optionalString(response.description),
        };
      })
      .sort((a, b) => a.status - b.status);

    // The runtimes send a key with every write and none with a read; the document must say the same.
    const idempotencyKey = parameters.some(
      (p) => p.in === "header" && typeof p.name === "string" && p.name.toLowerCase() === "idempotency-key",
    );
    if (idempotencyKey !== (upper !== "GET")) {
      throw new ModelError(
        upper === "GET"
          ? `${operationId}: a GET takes no ${IDEMPOTENCY_HEADER}`
          : `${operationId}: a ${upper} must take the ${IDEMPOTENCY_HEADER} header, which the SDKs send with every write`,
      );
    }

    return {
      operationId,
      method: upper,
      path,
      resource: Array.isArray(op["x-sdk-resource"])
        ? asStrings(op["x-sdk-resource"], `${operationId}: x-sdk-resource`)
        : path
            .split("/")
            .filter((segment) => segment !== "" && !segment.startsWith("{"))
            .map((segment) => segment.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())),
      name,
      tag: Array.isArray(op.tags) && typeof op.tags[0] === "string" ? op.tags[0] : undefined,
      summary: optionalString(op.summary),
      description: optionalString(op.description),
      scopes: Array.isArray(op["x-scopes"]) ? asStrings(op["x-scopes"], "x-scopes") : [],
      rateLimits: Array.isArray(op["x-rate-limits"]) ? asStrings(op["x-rate-limits"], "x-rate-limits") : [],
      pathParameters,
      queryParameters,
      headerParameters,
      body,
      bodyArgument,
      response: {
        status: successStatus,
        data,
        field,
        dataAs,
        description: optionalString(success.description),
      },
      alternatives,
      bodyForms,
      variants,
      ndjson,
      pagination,
      cursorPagination,
      streaming,
      errors,
      idempotencyKey,
    };
  }

  /** The `$ref`ed object types of a `data` that is one of several (`oneOf`). */
  #dataVariants(envelope: JsonObject, operationId: string): string[] {
    const data = asObject(asObject(envelope.properties, `${operationId}: envelope properties`).data, "data");
    const branches = unionOf(data);
    if (branches === undefined) throw new ModelError(`${operationId}: x-sdk-variants needs a oneOf data`);
    return branches.map((branch) => {
      const name = refName(branch.$ref ?? null);
      if (name === "") throw new ModelError(`${operationId}: each variant of data must be a $ref`);
      return name;
    });
  }

  /** The main answer of an operation with `x-sdk-variants`: the one type of its `data` that names no method. */
  #mainOfVariants(
    envelope: JsonObject,
    named: JsonObject,
    operationId: string,
  ): { data: TypeRef; field: "data"; dataAs: undefined } {
    const main = this.#dataVariants(envelope, operationId).filter((name) => !(name in named));
    if (main.length !== 1)
      throw new ModelError(`${operationId}: exactly one variant of data must name no method`);
    return {
      data: this.#type({ $ref: `#/components/schemas/${main[0]}` }, main[0]!),
      field: "data",
      dataAs: undefined,
    };
  }

  #variants(raw: Json, envelope: JsonObject, main: TypeRef, operationId: string): AnswerVariant[] {
    const spec = asObject(raw, `${operationId}: x-sdk-variants`);
    const all = this.#dataVariants(envelope, operationId);
    if (main.kind !== "ref") throw new ModelError(`${operationId}: the main variant must be a named type`);
    const mainFields = names(this.#deref(this.#schema(main.name)).properties);
    return Object.entries(spec).map(([typeName, rawVariant]) => {
      const where = `${operationId}: x-sdk-variants.${typeName}`;
      if (!all.includes(typeName)) throw new ModelError(`${where}: not a variant of data`);
      const variant = asObject(rawVariant, where);
      const schema = this.#deref(this.#schema(typeName));
      const required = Array.isArray(schema.required)
        ? asStrings(schema.required, `${typeName}.required`)
        : [];
      const marker = required.find((field) => !mainFields.includes(field));
      if (marker === undefined)
        throw new ModelError(`${where}: no required field tells it from ${main.name}`);
      const data = this.#type({ $ref: `#/components/schemas/${typeName}` }, typeName);
      if (data.kind !== "ref") throw new ModelError(`${where}: must be an object type`);
      let wait: AnswerVariant["wait"];
      if (variant.wait !== undefined) {
        const raw = asObject(variant.wait, `${where}.wait`);
        const pending: Record<string, string> = {};
        for (const [key, value] of Object.entries(asObject(raw.pending, `${where}.wait.pending`))) {
          if (typeof value !== "string" || !required.includes(key)) {
            throw new ModelError(`${where}.wait.pending: ${key} must be a required field of ${typeName}`);
          }
          pending[key] = value;
        }
        wait = { name: asString(raw.method, `${where}.wait.method`), pending };
      }
      return { name: asString(variant.method, `${where}.method`), data, marker, wait };
    });
  }

  /**
   * What an operation answering the envelope `name` returns: its `data`, or, when it holds more than `data` and is
   * not a page, the envelope without `success`, as a named type.
   */
  #resultOf(
    name: string,
    envelope: JsonObject,
    paged: boolean,
    operationId: string,
  ): { data: TypeRef; field: "data" | undefined; dataAs: string | undefined } {
    const properties = asObject(envelope.properties, `${operationId}: envelope properties`);
    const data = asObject(properties.data, `${operationId}: data`);
    const others = Object.keys(properties).filter((key) => key !== "success" && key !== "data");
    if (paged || others.length === 0 || ADVISORY_ENVELOPES.has(name)) {
      return { data: this.#type(data, `${name}.data`), field: "data", dataAs: undefined };
    }
    const { name: resultName, data: dataAs } = RESULT_TYPE_NAMES[name] ?? {
      name: `${name}Result`,
      data: "data",
    };
    const { success: _, data: __, ...rest } = properties;
    if (dataAs in rest) throw new ModelError(`${name}: the result would have two fields named ${dataAs}`);
    const required = Array.isArray(envelope.required)
      ? asStrings(envelope.required, `${name}.required`)
          .filter((key) => key !== "success")
          .map((key) => (key === "data" ? dataAs : key))
      : [];
    const result: JsonObject = { ...envelope, properties: { [dataAs]: data, ...rest }, required };
    return {
      data: this.#named(resultName, result, `components/schemas/${name} without success`),
      field: undefined,
      dataAs: dataAs === "data" ? undefined : dataAs,
    };
  }

  /**
   * The events of a `text/event-stream` response, from its per-event schema (what OpenAPI 3.2 calls the
   * `itemSchema`): one `oneOf` branch per event, its name the `const` of `event`, its data the `contentSchema` of
   * `data` (the JSON text after `data:`), `x-terminal` on the events that end the stream.
   */
  #sseEvents(schema: JsonObject, operationId: string): SseEvent[] {
    const branches = unionOf(this.#deref(schema));
    if (branches === undefined)
      throw new ModelError(`${operationId}: the SSE schema must be a oneOf of events`);
    return branches.map((raw, index) => {
      const where = `${operationId}: SSE event ${index}`;
      const event = this.#deref(raw);
      const properties = asObject(event.properties, `${where}: properties`);
      const name = asObject(properties.event, `${where}: event`).const;
      if (typeof name !== "string") throw new ModelError(`${where}: event must be a string const`);
      const data = asObject(properties.data, `${name}: data`);
      if (data.contentMediaType !== "application/json") {
        throw new ModelError(`${name}: data must be JSON (contentMediaType application/json)`);
      }
      return {
        name,
        description: optionalString(event.description),
        terminal: event["x-terminal"] === true,
        data: this.#type(asObject(data.contentSchema, `${name}: contentSchema`), `${operationId}.${name}`),
      };
    });
  }

  /**
   * Each error code's status (from every operation's error responses, excluded ones too) and description (from
   * the shared error responses listing only that code). A code no operation answers has no known status.
   */
  #codeStatuses(): Map<string, { status: number | undefined; description: string | undefined }> {
    const found = new Map<string, { status: number | undefined; description: string | undefined }>();
    const codesOf = (response: JsonObject): string[] =>
      Array.isArray(response["x-error-codes"]) ? asStrings(response["x-error-codes"], "x-error-codes") : [];
    const responses = asObject(asObject(this.#doc.components, "components").responses ?? {}, "responses");
    for (const raw of Object.values(responses)) {
      const response = asObject(raw, "response");
      const codes = codesOf(response);
      if (codes.length !== 1) continue;
      const code = codes[0]!;
      if (found.get(code)?.description === undefined) {
        found.set(code, {
          status: undefined,
          description: descriptionOf(optionalString(response.description), code),
        });
      }
    }
    for (const pathItem of Object.values(asObject(this.#doc.paths, "paths"))) {
      for (const [method, rawOp] of Object.entries(asObject(pathItem, "path item"))) {
        if (!isHttpMethod(method)) continue;
        const responses = asObject(asObject(rawOp, method).responses ?? {}, "responses");
        for (const [status, raw] of Object.entries(responses)) {
          if (Number(status) < 400) continue;
          for (const code of codesOf(this.#deref(asObject(raw, status)))) {
            const existing = found.get(code);
            if (existing?.status !== undefined && existing.status !== Number(status)) {
              throw new ModelError(`error code ${code} has two statuses: ${existing.status} and ${status}`);
            }
            found.set(code, { status: Number(status), description: existing?.description });
          }
        }
      }
    }
    return found;
  }

  /** Converts a schema used at `where` (`<Schema>.<field>` notation) into a type reference. */
  /** `fallback`: a description for an inline object that has none of its own (the field holding it). */
  #type(raw: JsonObject, where: string, fallback?: string): TypeRef {
    if (typeof raw.$ref === "string") {
      const name = refName(raw.$ref);
      const target = this.#deref(raw);
      if (isObjectSchema(target)) return this.#named(name, target, `components/schemas/${name}`);
      const type = this.#type(target, name);
      return type.kind === "union" ? { ...type, name } : type;
    }
    const variants = unionOf(raw);
    if (variants !== undefined) {
      const nonNullVariants = variants.filter((v) => !isNullSchema(v));
      const nullable = nonNullVariants.length < variants.length;
      const types = nonNullVariants.map((v) =>
        this.#type(v, nonNullVariants.length === 1 ? where : `${where}|${variants.indexOf(v)}`, fallback),
      );
      const inner: TypeRef =
        types.length === 1
          ? types[0]!
          : this.#union(
              types.map((t) => stripNullable(t)),
              where,
            );
      return nullable ? makeNullable(inner) : inner;
    }
    if (Array.isArray(raw.type)) {
      const kinds = asStrings(raw.type, `${where}: type`);
      const nonNullKinds = kinds.filter((k) => k !== "null");
      if (nonNullKinds.length !== 1)
        throw new ModelError(`${where}: unsupported type list ${kinds.join(", ")}`);
      const inner = this.#type({ ...raw, type: nonNullKinds[0]! }, where, fallback);
      return kinds.includes("null") ? makeNullable(inner) : inner;
    }
    if (raw.const !== undefined) {
      const value = raw.const;
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
        throw new ModelError(`${where}: unsupported const`);
      }
      return { kind: "literal", value };
    }
    switch (raw.type) {
      case "string": {
        if (raw.enum !== undefined) {
          const values = asStrings(raw.enum, `${where}: enum`);
          return { kind: "enum", values, enumName: this.#enumByValues.get(values.join("\u0000")) };
        }
        const format = optionalString(raw.format);
        return format === undefined ? { kind: "string" } : { kind: "string", format };
      }
      case "integer":
        return { kind: "integer" };
      case "number":
        return { kind: "number" };
      case "boolean":
        return { kind: "boolean" };
      case "null":
        throw new ModelError(`${where}: a null type outside a union`);
      case "array":
        return {
          kind: "array",
          items: this.#type(
            asObject(raw.items, `${where}: items`),
            `${where}[]`,
            optionalString(raw.description) ?? fallback,
          ),
        };
      case "object":
      case undefined: {
        if (raw.type === undefined && raw.properties === undefined) return { kind: "json" };
        const properties =
          raw.properties === undefined ? {} : asObject(raw.properties, `${where}: properties`);
        if (Object.keys(properties).length === 0) {
          const extra = additional(raw.additionalProperties, where, (s, w) => this.#type(s, w));
          return { kind: "map", values: extra ?? { kind: "json" } };
        }
        const name =
          INLINE_TYPE_NAMES[where] ?? pascal(where.replace(/\[\]/g, "Item").replace(/\|(\d+)/g, "V$1"));
        return this.#named(name, raw, `inline ${where}`, fallback);
      }
      default:
        throw new ModelError(`${where}: unsupported type ${String(raw.type)}`);
    }
  }

  /** Registers (or reuses) the named object type `name` for `schema`. */
  /**
   * A union; when several of its variants are object types, each variant must be an object type with a required
   * key that none of the others has (a message's `conversationId`, a memory's `source`), by which SDKs tell a
   * value's variant from its JSON.
   */
  #union(variants: TypeRef[], where: string): TypeRef {
    const objects = variants.filter((v) => v.kind === "ref");
    if (objects.length < 2) return { kind: "union", variants };
    if (objects.length < variants.length)
      throw new ModelError(`${where}: a union of object types cannot have variants of other kinds`);
    const fieldsOf = (variant: TypeRef) => this.#types.get((variant as { name: string }).name)?.fields ?? [];
    const keys = variants.map((variant) => {
      const others = new Set(
        variants.filter((v) => v !== variant).flatMap((v) => fieldsOf(v).map((f) => f.name)),
      );
      const own = fieldsOf(variant).find((field) => field.required && !others.has(field.name));
      if (own === undefined) {
        throw new ModelError(
          `${where}: ${(variant as { name: string }).name} has no required key the other variants lack, so its values cannot be told apart`,
        );
      }
      return own.name;
    });
    return { kind: "union", variants, keys };
  }

  #named(name: string, schema: JsonObject, source: string, fallback?: string): TypeRef {
    const shape = canonical(schema);
    const known = this.#typeShapes.get(name);
    if (known !== undefined) {
      if (known !== shape) throw new ModelError(`two different schemas are named ${name} (${source})`);
      const existing = this.#types.get(name);
      if (existing !== undefined) existing.usage[this.#usage] = true;
      if (!this.#inProgress.has(name)) this.#markUsage(name, new Set());
      return { kind: "ref", name };
    }
    this.#typeShapes.set(name, shape);
    this.#inProgress.add(name);
    const required = new Set(
      Array.isArray(schema.required) ? asStrings(schema.required, `${name}.required`) : [],
    );
    const properties = asObject(schema.properties ?? {}, `${name}: properties`);
    const type: ObjectType = {
      name,
      description: optionalString(schema.description) ?? fallback,
      fields: [],
      additionalProperties: undefined,
      source,
      usage: { input: this.#usage === "input", output: this.#usage === "output" },
    };
    this.#types.set(name, type);
    for (const [fieldName, rawField] of Object.entries(properties)) {
      const field = asObject(rawField, `${name}.${fieldName}`);
      type.fields.push({
        name: fieldName,
        description: optionalString(field.description) ?? optionalString(this.#deref(field).description),
        type: this.#type(field, `${name}.${fieldName}`, optionalString(field.description)),
        required: required.has(fieldName),
      });
    }
    type.additionalProperties = additional(schema.additionalProperties, name, (s, w) => this.#type(s, w));
    this.#inProgress.delete(name);
    return { kind: "ref", name };
  }

  /** A type reached again from the other side (a request type inside a response) is used both ways, as are its parts. */
  #markUsage(name: string, seen: Set<string>): void {
    if (seen.has(name)) return;
    seen.add(name);
    const type = this.#types.get(name);
    if (type === undefined) return;
    type.usage[this.#usage] = true;
    const visit = (ref: TypeRef): void => {
      if (ref.kind === "ref") this.#markUsage(ref.name, seen);
      else if (ref.kind === "array") visit(ref.items);
      else if (ref.kind === "map") visit(ref.values);
      else if (ref.kind === "nullable") visit(ref.inner);
      else if (ref.kind === "union") ref.variants.forEach(visit);
    };
    for (const field of type.fields) visit(field.type);
    if (type.additionalProperties) visit(type.additionalProperties);
  }
}

function isHttpMethod(method: string): method is (typeof HTTP_METHODS)[number] {
  return (HTTP_METHODS as readonly string[]).includes(method);
}

function additional(
  value: Json | undefined,
  where: string,
  convert: (schema: JsonObject, where: string) => TypeRef,
): TypeRef | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { kind: "json" };
  const schema = asObject(value, `${where}: additionalProperties`);
  return Object.keys(schema).length === 0 ? { kind: "json" } : convert(schema, `${where}{}`);
}

function unionOf(schema: JsonObject): JsonObject[] | undefined {
  const list = schema.anyOf ?? schema.oneOf;
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) throw new ModelError("anyOf/oneOf must be a list");
  return list.map((item) => asObject(item, "union variant"));
}

function isNullSchema(schema: JsonObject): boolean {
  return schema.type === "null";
}

/** The non-null part of a schema that is `X | null`, for `#lookup`. */
function nonNull(schema: JsonObject): JsonObject {
  const variants = unionOf(schema)?.filter((v) => !isNullSchema(v));
  return variants?.length === 1 ? variants[0]! : schema;
}

function isObjectSchema(schema: JsonObject): boolean {
  return (
    (schema.type === "object" || schema.type === undefined) &&
    schema.properties !== undefined &&
    Object.keys(asObject(schema.properties, "properties")).length > 0
  );
}

function makeNullable(inner: TypeRef): TypeRef {
  return inner.kind === "nullable" ? inner : { kind: "nullable", inner };
}

function stripNullable(type: TypeRef): TypeRef {
  return type.kind === "nullable" ? type.inner : type;
}

/** The property names of an object schema's `properties`. */
function names(properties: Json | undefined): string[] {
  return isObject(properties ?? null) ? Object.keys(properties as JsonObject) : [];
}

function refName(ref: Json): string {
  if (typeof ref !== "string") throw new ModelError("expected a $ref");
  return ref.slice(ref.lastIndexOf("/") + 1);
}

/** A schema with sorted keys, without documentation, so equal shapes compare equal. */
function canonical(value: Json): string {
  const strip = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(strip);
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const key of Object.keys(node).sort()) {
      if (key === "description" || key === "examples" || key === "example") continue;
      out[key] = strip(node[key]!);
    }
    return out;
  };
  return JSON.stringify(strip(value));
}

/** The part of a response description about `code`: "`CODE`: text" → "text". */
function descriptionOf(description: string | undefined, code: string): string | undefined {
  if (description === undefined) return undefined;
  const prefix = `\`${code}\`: `;
  return description.startsWith(prefix) ? description.slice(prefix.length) : description;
}

function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== "")
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asObject(value: Json | undefined, where: string): JsonObject {
  if (!isObject(value)) throw new ModelError(`${where}: expected an object`);
  return value;
}

function asString(value: Json | undefined, where: string): string {
  if (typeof value !== "string") throw new ModelError(`${where}: expected a string`);
  return value;
}

function optionalString(value: Json | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function asStrings(value: Json | undefined, where: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new ModelError(`${where}: expected a list of strings`);
  }
  return value as string[];
}

/** Finds a named type; throws when the model has none of that name (a bug in an emitter or the document). */
export function typeNamed(model: ApiModel, name: string): ObjectType {
  const type = model.types.find((t) => t.name === name);
  if (type === undefined) throw new ModelError(`no type named ${name}`);
  return type;
}

/** Named types a type reference mentions, directly or through arrays, maps, nullables and unions. */
export function referencedTypes(type: TypeRef): string[] {
  switch (type.kind) {
    case "ref":
      return [type.name];
    case "array":
      return referencedTypes(type.items);
    case "map":
      return referencedTypes(type.values);
    case "nullable":
      return referencedTypes(type.inner);
    case "union":
      return type.variants.flatMap(referencedTypes);
    default:
      return [];
  }
}
