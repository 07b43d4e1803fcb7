import { TIER_DEFAULTS } from "@agentry/core";
import type { ErrorCode } from "@agentry/errors";
import { PING_INTERVAL_MS } from "../http/sse.js";
import { CHARACTER_OPERATION_DOCS } from "./characters.js";
import type { JsonSchema } from "./convert.js";

export interface SuccessDoc {
  status: 200 | 201;
  /** The component schema of the JSON body. */
  schema: string;
  description: string;
  /** Headers beyond those every response has. */
  headers?: Record<string, JsonSchema>;
}

/** What the document says about one REST operation beyond what the route table (`ROUTES`) says. */
export interface OperationDoc {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** The component schema of the JSON request body. */
  requestBody?: string;
  success: SuccessDoc;
  /** Other successful answers, for another form of the request (a dry run). */
  otherSuccess?: SuccessDoc[];
  /** Query parameters beyond List Agents', one JSON Schema each. */
  queryParameters?: () => { name: string; schema: JsonSchema; required: boolean }[];
  /** Left out of the generated SDKs (`x-sdk-exclude`). */
  sdkExclude?: boolean;
  /** Error codes of this operation beyond the ones every authenticated operation has. */
  errors: ErrorCode[];
  /** Lists the query parameters of List Agents. */
  listQuery?: boolean;
  /** Answers `text/event-stream` when the body says `stream: true`. */
  stream?: boolean;
}

export const PATH_PARAMETERS: Record<string, { description: string; example: string }> = {
  agentId: {
    description:
      "The agent's id (`agt_…`). An id of another account's agent, or not of that form, is answered `404 AGENT_NOT_FOUND`.",
    example: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  keyId: {
    description:
      "The API key's id (`key_…`). Another account's key, or a revoked one, is answered `404 NOT_FOUND`.",
    example: "key_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
};

/** The authenticated operations, keyed by `METHOD path` as in `ROUTES`. */
export const OPERATION_DOCS: Record<string, OperationDoc> = {
  "POST /v1/agents": {
    operationId: "createAgent",
    tag: "Agents",
    summary: "Create an agent",
    description: `Creates an agent in the caller's account. It starts \`active\`. \`name\` is required; omitted arrays are stored as \`[]\`, objects as \`{}\`, \`modelProvider\` and \`model\` as \`null\` (the server's defaults, resolved when a message is sent). Unknown fields, and \`id\`, \`status\`, \`statusReason\`, \`createdAt\`, \`updatedAt\`, \`apiEndpoint\`, are refused. An account holds at most its plan's \`maxAgents\` agents (${TIER_DEFAULTS.standard.maxAgents} by default).`,
    requestBody: "CreateAgentRequest",
    success: { status: 201, schema: "AgentResponse", description: "The agent created." },
    errors: ["INVALID_REQUEST", "INSUFFICIENT_QUOTA", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "GET /v1/agents": {
    operationId: "listAgents",
    tag: "Agents",
    summary: "List agents",
    description:
      "Lists the caller's agents a page at a time, newest first unless `sortBy` and `order` say otherwise. Out-of-range or unknown query parameters are refused, never clamped; a parameter given twice is refused.",
    listQuery: true,
    success: { status: 200, schema: "AgentListResponse", description: "One page of agents." },
    errors: ["INVALID_REQUEST"],
  },
  "GET /v1/agents/:agentId": {
    operationId: "getAgent",
    tag: "Agents",
    summary: "Get an agent",
    description: "Returns the full agent record.",
    success: { status: 200, schema: "AgentResponse", description: "The agent." },
    errors: ["AGENT_NOT_FOUND"],
  },
  "PATCH /v1/agents/:agentId": {
    operationId: "updateAgent",
    tag: "Agents",
    summary: "Update an agent",
    description:
      "Changes only the fields supplied; the others stay as they are. `status` may be set to `active` or `inactive` (`inactive` keeps all data but refuses messages). `null` resets `modelProvider` or `model` to the server's default. A PATCH that supplies `modelProvider`, `model` or `settings` takes an agent out of `error` (back to `active`), as does one that sets `status`.",
    requestBody: "UpdateAgentRequest",
    success: { status: 200, schema: "AgentResponse", description: "The agent as updated." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "DELETE /v1/agents/:agentId": {
    operationId: "deleteAgent",
    tag: "Agents",
    summary: "Delete an agent",
    description:
      "Deletes the agent permanently: its configuration, conversation history, usage metrics and logs are removed and its platform integrations disconnected. Irreversible; nothing of it can be read afterwards. Deleting several agents takes one request each.",
    success: { status: 200, schema: "AgentDeletedResponse", description: "The agent was deleted." },
    errors: ["AGENT_NOT_FOUND"],
  },
  "POST /v1/agents/:agentId/messages": {
    operationId: "sendMessage",
    tag: "Messages",
    summary: "Send a message to an agent",
    description: `Sends a text message and returns the agent's reply. Context is kept per agent, \`userId\` and \`roomId\`: send the same \`userId\` for the same user; calls without them share one default conversation. \`context\` applies to this message only. An agent in \`error\` is still called (a success takes it out of \`error\`); an \`inactive\` one refuses messages.\n\nWith \`stream: true\` the reply arrives as server-sent events (\`text/event-stream\`): \`message.started\`, any number of \`message.delta\`, then exactly one of \`message.completed\` or \`error\`, after which the stream closes. Each event has an \`id:\` (its sequence number, from 1), an \`event:\` name and JSON \`data:\`; the \`text/event-stream\` schema, \`MessageStreamEvent\`, describes each event and the JSON of its data. A \`: ping\` comment line is sent after every ${PING_INTERVAL_MS / 1000} seconds of silence. Anything that fails before the stream starts (validation, 404, 409, 429, a provider that is down) is an ordinary JSON error response. Only a complete reply is stored.`,
    requestBody: "SendMessageRequest",
    success: {
      status: 200,
      schema: "MessageResponse",
      description:
        "The agent's reply; with `stream: true`, a stream of server-sent events, each one a `MessageStreamEvent`.",
    },
    errors: [
      "INVALID_REQUEST",
      "AGENT_NOT_FOUND",
      "AGENT_INACTIVE",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
      "MODEL_ERROR",
    ],
    stream: true,
  },
  "POST /v1/api-keys": {
    operationId: "createApiKey",
    tag: "API keys",
    summary: "Create an API key",
    description:
      "Creates a key in the caller's account and returns its secret, the only time it is shown. A key can grant only scopes the calling key holds; without `scopes` it gets all of them.",
    requestBody: "CreateApiKeyRequest",
    success: { status: 201, schema: "ApiKeyResponse", description: "The key created, with its secret." },
    errors: ["INVALID_REQUEST", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "GET /v1/api-keys": {
    operationId: "listApiKeys",
    tag: "API keys",
    summary: "List API keys",
    description: "Lists the account's keys that are not revoked, without their secrets.",
    success: { status: 200, schema: "ApiKeyListResponse", description: "The account's keys." },
    errors: [],
  },
  "DELETE /v1/api-keys/:keyId": {
    operationId: "revokeApiKey",
    tag: "API keys",
    summary: "Revoke an API key",
    description:
      "Revokes a key of the caller's account. The key stops working at once on the gateway that answers, and on the others within their key cache time (`AUTH_CACHE_TTL_MS`, under a second by default). A key may revoke itself.",
    success: { status: 200, schema: "ApiKeyRevokedResponse", description: "The key was revoked." },
    errors: ["NOT_FOUND"],
  },
  ...CHARACTER_OPERATION_DOCS,
};

/** The error codes every authenticated operation can answer. */
export const AUTHENTICATED_ERRORS: ErrorCode[] = [
  "UNAUTHORIZED",
  "FORBIDDEN",
  "RATE_LIMIT_EXCEEDED",
  "INTERNAL_ERROR",
  "AGENT_UNAVAILABLE",
];
